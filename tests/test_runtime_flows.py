"""Flows born while the simulation runs, in the user's own callbacks, are tracked, replayed and exact.

The script starts every message of a ring all-reduce as a new BulkSend from a
PacketSink Rx callback (tests/scripts/ring_rx_callbacks.py): no flow but the
first step's exists when Run() starts. The accelerated run memoizes in a store
of its own (``--memo :memory:``).
"""

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

RING = REPO / "tests" / "scripts" / "ring_rx_callbacks.py"
HOSTS, ALLREDUCES = 4, 3
MESSAGES = HOSTS * 2 * (HOSTS - 1) * ALLREDUCES
ARGS = ["--hosts", str(HOSTS), "--message-mb", "4", "--allreduces", str(ALLREDUCES)]


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    """(baseline run.json, its stdout, accelerated run.json, its stdout, its skip trace)."""
    out = tmp_path_factory.mktemp("ring")
    sides = {}
    accelerated = ["--trace", str(out / "trace.csv"), "--memo", ":memory:"]
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


def test_repeated_ring_steps_are_replayed_and_say_so(ring):
    (baseline, _), (accelerated, _), trace = ring
    assert accelerated["memo_path"] is None  # the run's own store, gone with the run
    assert accelerated["memo_hits"] >= 1 and accelerated["flows_replayed"] >= HOSTS
    assert accelerated["events"] + accelerated["events_avoided"] >= baseline["events"] * 0.9
    assert accelerated["events"] < baseline["events"] * 0.8
    assert trace.count("memo hit ") == accelerated["memo_hits"]
