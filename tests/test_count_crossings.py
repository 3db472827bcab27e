"""experiments/profile/count_crossings.py: a run's calls from Python into C++, per method."""

import json
import subprocess
import sys

from conftest import REPO

TOOL = REPO / "experiments" / "profile" / "count_crossings.py"
DUMBBELL = REPO / "wormhole_ns3" / "examples" / "dctcp_dumbbell.py"


def test_every_boundary_call_the_profile_counts_is_counted_by_its_method(tmp_path):
    out, results = tmp_path / "crossings.json", tmp_path / "run.json"
    done = subprocess.run(
        [sys.executable, TOOL, out, "run", "--profile", "--results", results, DUMBBELL,
         "--flows", "2", "--min-mb", "1", "--max-mb", "1"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    counted = json.loads(out.read_text())
    profiled = json.loads(results.read_text())["profile"]["calls"]["boundary calls (Python into C++)"]
    assert sum(n for n, _ in counted.values()) == profiled > 0
    # each flow is read once it sends (a FlowRecord), and its outcome at the end; the warm-up binds
    # each method before Run() with a call of its own
    assert counted["GetFlowRecord"][0] == 2 + 1 and counted["GetFlowOutcome"][0] >= 2 + 1
    assert all(seconds >= 0 for _, seconds in counted.values())
