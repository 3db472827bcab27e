"""Flows born while the simulation runs, in the user's own callbacks, are tracked, skipped and accurate.

The script starts every message of a ring all-reduce as a new BulkSend from a
PacketSink Rx callback (tests/scripts/ring_rx_callbacks.py): no flow but the
first step's exists when Run() starts. Its 16 MB messages hold a steady rate long
enough to be fast-forwarded.
"""

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

RING = REPO / "tests" / "scripts" / "ring_rx_callbacks.py"
HOSTS, ALLREDUCES = 3, 1
MESSAGES = HOSTS * 2 * (HOSTS - 1) * ALLREDUCES
ARGS = ["--hosts", str(HOSTS), "--message-mb", "16", "--allreduces", str(ALLREDUCES)]


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    """(baseline run.json, its stdout, accelerated run.json, its stdout, its skip trace)."""
    out = tmp_path_factory.mktemp("ring")
    sides = {}
    accelerated = ["--trace", str(out / "trace.csv")]
    for side, flags in (("baseline", ["--baseline"]), ("accelerated", accelerated)):
        done = subprocess.run(
            [sys.executable, "-m", "wormhole_ns3", "run", "--results", str(out / f"{side}.json"), *flags,
             str(RING), *ARGS],
            cwd=out, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=900,
        )
        assert done.returncode == 0, done.stderr
        sides[side] = (load_json(out / f"{side}.json"), done.stdout)
    return sides["baseline"], sides["accelerated"], (out / "trace.csv").read_text()


def _allreduce_times(stdout: str) -> list[float]:
    return [float(t) for t in re.findall(r"^allreduce \d+ done (\S+)$", stdout, re.MULTILINE)]


def test_every_message_is_tracked_wherever_it_was_created(ring):
    _, (accelerated, stdout), _ = ring
    assert f"messages received {MESSAGES} of {MESSAGES}" in stdout
    assert len(accelerated["flows"]) == MESSAGES
    assert all(flow["fct"] is not None for flow in accelerated["flows"])


def test_allreduce_times_and_bytes_match_plain_ns3(ring):
    (_, base_out), (_, accel_out), _ = ring
    base, accel = _allreduce_times(base_out), _allreduce_times(accel_out)
    assert len(base) == len(accel) == ALLREDUCES
    for plain, fast in zip(base, accel):
        assert abs(fast - plain) <= 0.01 * plain
    bytes_lines = [line for line in base_out.splitlines() if line.startswith("host ")]
    assert len(bytes_lines) == HOSTS
    assert bytes_lines == [line for line in accel_out.splitlines() if line.startswith("host ")]


def test_flows_created_in_callbacks_are_fast_forwarded_and_say_so(ring):
    (baseline, _), (accelerated, _), trace = ring
    assert accelerated["skips"] >= HOSTS * 2 * (HOSTS - 1) * ALLREDUCES // HOSTS  # about one per ring step
    assert accelerated["events"] < baseline["events"] / 2
    assert accelerated["events"] + accelerated["events_avoided"] >= baseline["events"] * 0.9
    steps_skipped = [line for line in trace.splitlines()[1:] if line.endswith(",steady")]
    assert len(steps_skipped) == accelerated["skips"]
    assert any(f"{first} {first + 1} {first + 2}," in trace for first in (3, 6, 9))  # flows born at run time
