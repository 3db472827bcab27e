"""Flows born while the simulation runs, in the user's own callbacks, are tracked, skipped and accurate.

The script starts every message of a ring all-reduce as a new BulkSend from a
PacketSink Rx callback (tests/scripts/ring_rx_callbacks.py): no flow but the
first step's exists when Run() starts. Its 16 MB messages hold a steady rate long
enough to be fast-forwarded.
"""

import csv
import io
import os
import re
import subprocess
import sys

import pytest

from wormhole_ns3.core.trace import TraceKind

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

RING = REPO / "tests" / "scripts" / "ring_rx_callbacks.py"
HOSTS, ALLREDUCES = 3, 1
MESSAGES = HOSTS * 2 * (HOSTS - 1) * ALLREDUCES
ARGS = ["--hosts", str(HOSTS), "--message-mb", "16", "--allreduces", str(ALLREDUCES)]


def run_ring(out, ring_args: list[str], accelerated_flags: list[str]) -> dict[str, tuple[dict, str]]:
    """The ring script run plain and accelerated in ``out``: each side's (run.json, stdout)."""
    sides = {}
    for side, flags in (("baseline", ["--baseline"]), ("accelerated", accelerated_flags)):
        done = subprocess.run(
            [sys.executable, "-m", "wormhole_ns3", "run", "--results", str(out / f"{side}.json"), *flags,
             str(RING), *ring_args],
            cwd=out, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=900,
        )
        assert done.returncode == 0, done.stderr
        sides[side] = (load_json(out / f"{side}.json"), done.stdout)
    return sides


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    """(baseline run.json, its stdout, accelerated run.json, its stdout, its skip trace)."""
    out = tmp_path_factory.mktemp("ring")
    sides = run_ring(out, ARGS, ["--trace", str(out / "trace.csv"), "--no-memo"])  # fast-forwarding alone
    return sides["baseline"], sides["accelerated"], (out / "trace.csv").read_text()


def _allreduce_times(stdout: str) -> list[float]:
    return [float(t) for t in re.findall(r"^allreduce \d+ done (\S+)$", stdout, re.MULTILINE)]


def test_every_message_is_tracked_wherever_it_was_created(ring):
    _, (accelerated, stdout), _ = ring
    assert f"messages received {MESSAGES} of {MESSAGES}" in stdout
    assert len(accelerated["flows"]) == MESSAGES
    assert all(flow["fct"] is not None for flow in accelerated["flows"])


def test_the_baseline_tracks_the_same_flows_so_each_flow_has_its_error(ring):
    """A plain run finds the flows born in callbacks too, without an event of its own."""
    (baseline, _), (accelerated, _), _ = ring
    assert len(baseline["flows"]) == MESSAGES
    plain = {flow["id"]: flow for flow in baseline["flows"]}
    for flow in accelerated["flows"]:
        twin = plain[flow["id"]]
        assert (twin["src"], twin["dst"], twin["bytes"]) == (flow["src"], flow["dst"], flow["bytes"])
        assert abs(flow["fct"] - twin["fct"]) <= 0.03 * twin["fct"]


def test_allreduce_times_and_bytes_match_plain_ns3(ring):
    (_, base_out), (_, accel_out), _ = ring
    base, accel = _allreduce_times(base_out), _allreduce_times(accel_out)
    assert len(base) == len(accel) == ALLREDUCES
    for plain, fast in zip(base, accel):
        assert abs(fast - plain) <= 0.01 * plain
    bytes_lines = [line for line in base_out.splitlines() if line.startswith("host ")]
    assert len(bytes_lines) == HOSTS
    assert bytes_lines == [line for line in accel_out.splitlines() if line.startswith("host ")]


@pytest.mark.xfail(strict=True, reason=(
    "each ring step is alone on its links and meets no congestion signal: its window is held by nothing "
    "(steady.py's CYCLE_UNSEEN), and a flow a callback may start could join before it ends and meet a window a "
    "skip froze smaller; skipping it soundly needs knowing what can join before it ends (issue 38)"))
def test_flows_created_in_callbacks_are_fast_forwarded_and_say_so(ring):
    (baseline, _), (accelerated, _), trace = ring
    assert accelerated["skips"] >= HOSTS * 2 * (HOSTS - 1) * ALLREDUCES // HOSTS  # about one per ring step
    assert accelerated["events"] < baseline["events"] / 2
    assert accelerated["events"] + accelerated["events_avoided"] >= baseline["events"] * 0.9
    rows = list(csv.DictReader(io.StringIO(trace)))
    steps_skipped = [row for row in rows if row["kind"] == TraceKind.STEADY.value]
    assert len(steps_skipped) == accelerated["skips"]
    partitions = {row["partition"] for row in steps_skipped}
    assert any(f"{first} {first + 1} {first + 2}" in partitions for first in (3, 6, 9))  # flows born at run time


MEMO_HOSTS, MEMO_ALLREDUCES = 4, 3
MEMO_ARGS = ["--hosts", str(MEMO_HOSTS), "--message-mb", "4", "--allreduces", str(MEMO_ALLREDUCES)]


@pytest.fixture(scope="module")
def memo_ring(tmp_path_factory):
    """(baseline run.json, its stdout, accelerated run.json, its stdout): 4 hosts, 3 all-reduces, default settings.

    By default a run memoizes within itself (``--memo :memory:``).
    """
    sides = run_ring(tmp_path_factory.mktemp("memo-ring"), MEMO_ARGS, [])
    return (*sides["baseline"], *sides["accelerated"])


def test_ring_steps_born_in_callbacks_on_deliveries_are_simulated_not_replayed_and_stay_exact(memo_ring):
    """Each ring step is a BulkSend a sink's Rx callback creates when a message has arrived.

    No workload oracle tells when or where such flows come, and a held (replayed or
    mirrored) flow delivers nothing until its completion, so a script that reacts to
    deliveries would see them at other times: once the run has created a flow in a
    delivery, the memo simulates and records every later episode and replays none
    (``Admission.unforeseeable``).
    """
    baseline, base_out, memo, memo_out = memo_ring
    base, fast = _allreduce_times(base_out), _allreduce_times(memo_out)
    assert len(base) == len(fast) == MEMO_ALLREDUCES
    for plain, accelerated in zip(base, fast):
        assert abs(accelerated - plain) <= 0.001 * plain
    assert memo["memo_path"] is None and memo["memo_hits"] == memo["memo_mirrored"] == memo["flows_replayed"] == 0
    assert memo["memo_misses"] >= MEMO_ALLREDUCES * 2 * (MEMO_HOSTS - 1) - 1  # every later step was simulated
    assert f"messages received {MEMO_HOSTS * 2 * (MEMO_HOSTS - 1) * MEMO_ALLREDUCES}" in memo_out
    assert [line for line in base_out.splitlines() if line.startswith("host ")] == [
        line for line in memo_out.splitlines() if line.startswith("host ")]


def test_memoizing_runs_keep_every_flow_its_port_and_its_place_in_the_creation_order(memo_ring):
    """Each flow of the plain run is the flow of the same id, between the same hosts, ending at the same time.

    The memo gates every flow's start to decide whether it replays it; a gated BulkSend
    must still bind the ephemeral port plain ns-3 gives it, which its sink sees it from.
    """
    baseline, base_out, memo, memo_out = memo_ring
    plain = {flow["id"]: flow for flow in baseline["flows"]}
    assert len(memo["flows"]) == len(plain) == MEMO_HOSTS * 2 * (MEMO_HOSTS - 1) * MEMO_ALLREDUCES
    for flow in memo["flows"]:
        twin = plain[flow["id"]]
        assert (flow["src"], flow["sport"], flow["dst"], flow["bytes"]) == (
            twin["src"], twin["sport"], twin["dst"], twin["bytes"])
        assert flow["fct"] == pytest.approx(twin["fct"], rel=1e-9, abs=1e-12)
    assert memo_out == base_out


def test_a_run_that_accelerates_nothing_still_tracks_every_flow_born_at_run_time(ring, tmp_path):
    """--no-memo --no-fast-forward keeps the accelerator's simulator; its results hold every message, as plain's."""
    (baseline, base_out), _, _ = ring
    sides = run_ring(tmp_path, ARGS, ["--no-memo", "--no-fast-forward"])
    plain_off, off_out = sides["accelerated"]
    assert len(plain_off["flows"]) == len(baseline["flows"]) == MESSAGES
    assert [f["fct"] for f in plain_off["flows"]] == [f["fct"] for f in baseline["flows"]]
    assert off_out == base_out and plain_off["events"] == baseline["events"]
