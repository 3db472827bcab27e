"""TCP a script drives through its own sockets is tracked, skipped where sound, and exact where not.

tests/scripts/raw_tcp_socket.py opens a socket per sender with Socket::CreateSocket, connects it
to a PacketSink and writes from the socket's send callback (the usual pattern), or from a timer
of its own started in its connect callback, which a skip could not reproduce. Each is run plain
and accelerated, with default settings.
"""

import csv
import io
import os
import subprocess
import sys

import pytest

from wormhole_ns3.core.flows import FlowKind, SenderBlocker
from wormhole_ns3.core.trace import TraceKind

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

SCRIPT = REPO / "tests" / "scripts" / "raw_tcp_socket.py"
#: The script's default flows: two start together at 10 Gb/s, a third joins the larger one at 90 ms.
SIZES_MB, STARTS_MS = (40, 60, 8), (10, 10, 90)
FLOWS = len(SIZES_MB)
SIZES = sorted(mb * 10**6 for mb in SIZES_MB)
ARGS = ["--sizes-mb", ",".join(map(str, SIZES_MB)), "--starts-ms", ",".join(map(str, STARTS_MS))]


def run_sides(out, script_args: list[str]) -> dict[str, tuple[dict, str]]:
    """The script run plain and accelerated (its skip trace in ``out``): each side's (run.json, stdout)."""
    sides = {}
    for side, flags in (("baseline", ["--baseline"]), ("accelerated", ["--trace", str(out / "trace.csv")])):
        done = subprocess.run(
            [sys.executable, "-m", "wormhole_ns3", "run", "--results", str(out / f"{side}.json"), *flags,
             str(SCRIPT), *script_args],
            cwd=out, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=900,
        )
        assert done.returncode == 0, done.stderr
        sides[side] = (load_json(out / f"{side}.json"), done.stdout)
    return sides


def fct_errors(baseline: dict, accelerated: dict) -> list[float]:
    """Each flow's relative FCT error, the flows matched by their endpoints."""
    plain = {(f["src"], f["sport"], f["dst"], f["dport"]): f for f in baseline["flows"]}
    errors = []
    for flow in accelerated["flows"]:
        twin = plain[(flow["src"], flow["sport"], flow["dst"], flow["dport"])]
        errors.append(abs(flow["fct"] - twin["fct"]) / twin["fct"])
    return errors


@pytest.fixture(scope="module")
def callback(tmp_path_factory):
    out = tmp_path_factory.mktemp("socket-callback")
    sides = run_sides(out, ARGS)
    return sides["baseline"], sides["accelerated"], (out / "trace.csv").read_text()


@pytest.fixture(scope="module")
def timer(tmp_path_factory):
    out = tmp_path_factory.mktemp("socket-timer")
    sides = run_sides(out, [*ARGS, "--writer", "timer"])
    return sides["baseline"], sides["accelerated"], (out / "trace.csv").read_text()


def _tracked(run: dict) -> None:
    assert [f["kind"] for f in run["flows"]] == [FlowKind.SOCKET_TCP.value] * FLOWS
    assert sorted(f["bytes"] for f in run["flows"]) == SIZES  # sized by their FINs
    assert all(f["fct"] is not None for f in run["flows"])


def test_sockets_written_from_their_send_callbacks_are_tracked_on_both_sides(callback):
    (baseline, _), (accelerated, _), _ = callback
    _tracked(baseline)
    _tracked(accelerated)
    assert accelerated["unskippable_flows"] == {}


def test_sockets_written_from_their_send_callbacks_are_skipped_within_the_bounds(callback):
    (baseline, base_out), (accelerated, accel_out), trace = callback
    assert accelerated["skips"] > 0
    assert accelerated["events"] < baseline["events"]
    rows = [row for row in csv.DictReader(io.StringIO(trace)) if row["kind"] == TraceKind.STEADY.value]
    assert len(rows) == accelerated["skips"] and sum(int(row["credited_bytes"]) for row in rows) > 0
    assert all(int(row["events_moved"]) > 0 for row in rows)  # the flows' events carry their tags
    assert sum(f["credited_bytes"] for f in accelerated["flows"]) == sum(int(row["credited_bytes"]) for row in rows)
    errors = fct_errors(baseline, accelerated)
    assert sum(errors) / len(errors) <= 0.01 and max(errors) <= 0.03
    # the sinks got every byte, as in plain ns-3: the script's output is plain ns-3's
    assert base_out == accel_out and "complete True" in accel_out and "complete False" not in accel_out


def test_a_socket_written_from_a_timer_of_the_scripts_own_is_tracked_not_skipped_and_exact(timer):
    (baseline, base_out), (accelerated, accel_out), trace = timer
    _tracked(baseline)
    _tracked(accelerated)
    assert accelerated["skips"] == 0
    assert not [row for row in csv.DictReader(io.StringIO(trace)) if row["kind"] == TraceKind.STEADY.value]
    assert accelerated["unskippable_flows"] == {
        str(f["id"]): SenderBlocker.WRITES_OUTSIDE_SEND_CALLBACKS.value for f in accelerated["flows"]}
    assert max(fct_errors(baseline, accelerated)) == 0.0
    assert base_out == accel_out and "complete False" not in accel_out
