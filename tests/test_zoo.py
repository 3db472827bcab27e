"""A user script of the zoo (experiments/zoo) compared with plain ns-3 end to end, as a user compares it.

``wormhole-ns3 experiment compare moe-alltoall --preset tiny``: one MoE layer,
two iterations, two expert-parallel groups of two hosts on leaves of their own.
The runner takes the flows from the harness and the iterations from the
``iteration K end SECONDS`` lines the script prints. The second group mirrors
the first at its opening, which the script set up; every later message is a
BulkSend a sink's Rx callback creates, which no workload oracle tells of, so
from the first of them on every episode is simulated and recorded
(``Admission.unforeseeable``). PacketSink totals and the script's output
must be the same as plain ns-3's, every FCT and iteration time to the
nanosecond. The numbers are those of the real runs: plain ns-3's events for
this script and preset (a changed script changes them), and the memo's
decisions on them.
"""

import pandas as pd
import pytest

from wormhole_ns3.core.trace import TraceKind
from wormhole_ns3.memo.decisions import UnforeseeableFlows
from wormhole_ns3.tools.experiment.registry import experiments

from conftest import load_json

pytestmark = pytest.mark.slow

MOE_ALLTOALL = experiments()["moe-alltoall"]


def test_a_user_script_is_exact_in_its_sinks_output_flows_and_iterations(wormhole, memo_facts, tmp_path):
    done = wormhole("experiment", "compare", "moe-alltoall", "--preset", "tiny", "--out", "cmp")
    assert done.returncode == 0, done.stderr
    summary = load_json(tmp_path / "cmp" / "summary.json")
    assert (summary["events_baseline"], summary["events_accelerated"]) == (16_416, 14_460)
    assert (summary["memo_hits"], summary["memo_mirrored"], summary["memo_misses"]) == (0, 1, 7)
    # why: the accelerated run again (the same decisions, deterministic), its memo events' facts read
    done, events = memo_facts("run", MOE_ALLTOALL.script, *MOE_ALLTOALL.presets["tiny"])
    assert done.returncode == 0, done.stderr
    misses = [event.facts for event in events if event.kind is TraceKind.MEMO_MISS]
    assert sum(isinstance(miss.refusal, UnforeseeableFlows) for miss in misses) == 6
    assert summary["flows_compared"] == summary["flows_finished_baseline"] == 16
    assert summary["rx_bytes_exact"] and summary["stdout_identical"]
    assert summary["fct_max_rel_err"] == 0.0
    iterations = pd.read_csv(tmp_path / "cmp" / "iterations.csv")
    assert list(iterations["iteration"]) == [0, 1]
    assert (iterations["time_baseline"] > 0).all() and (iterations["rel_err"] == 0.0).all()
    assert summary["iteration_time_rel_err"] == 0.0
