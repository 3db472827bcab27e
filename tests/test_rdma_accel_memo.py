"""Memoized RDMA episodes on real ns-3 runs: a repeated ring all-reduce of queue pairs.

tests/scripts/rdma_dag_ring.py runs three iterations of compute then a ring
all-reduce over four RoCEv2 (DCQCN) hosts; the ring steps repeat as contention
episodes. Replayed queue pairs never start: their completions are injected (both
ends' counters, the NIC's FlowFinish trace, the FlowDag's completion); a replay that
must stop resumes them from the recorded bytes and DCQCN state.
"""

import csv
import json
import subprocess
import sys

import pytest

from wormhole_ns3.core.flows import FlowKind
from wormhole_ns3.core.trace import TraceKind
from wormhole_ns3.memo.decisions import Intruders

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

RING = REPO / "tests" / "scripts" / "rdma_dag_ring.py"
CHECK = REPO / "tests" / "scripts" / "forecast_check.py"


def _run(wormhole, tmp_path, name, *args, memo=None, baseline=False):
    results, trace = tmp_path / f"{name}.json", tmp_path / f"{name}.csv"
    options = ["--baseline"] if baseline else ["--trace", trace] + (["--memo", memo] if memo else ["--no-memo"])
    done = wormhole("run", "--results", results, *options, RING, *args)
    assert done.returncode == 0, done.stderr_lines[-5:]
    rows = list(csv.DictReader(trace.open())) if trace.exists() else []
    return load_json(results), rows, done.stdout


def _memo_events(memo_facts, tmp_path, name, *args, memo):
    """A run's results, its memo events with their typed facts (``SkipRecord.facts``) and its stdout."""
    results = tmp_path / f"{name}.json"
    done, events = memo_facts("run", "--results", results, "--memo", memo, RING, *args)
    assert done.returncode == 0, done.stderr_lines[-5:]
    return load_json(results), events, done.stdout


def _by_tuple(run):
    return {(f["src"], f["dst"], f["sport"], f["dport"]): f for f in run["flows"]}


def _iteration_times(stdout):
    return [float(line.split()[3]) for line in stdout.splitlines() if line.startswith("iteration")]


def _flow_lines(stdout):
    """The script's own FCT of every flow task, in ns (from the FlowDag's start and finish)."""
    return {int(p[1]): int(p[2]) for p in (line.split() for line in stdout.splitlines()) if p[0] == "flow"}


@pytest.fixture(scope="module")
def memo_store(tmp_path_factory):
    return tmp_path_factory.mktemp("rdma-memo") / "memo"


def test_repeated_rdma_ring_steps_are_recorded_once_then_replayed_exactly(
    wormhole, tmp_path, memo_store
):
    baseline, _, base_out = _run(wormhole, tmp_path, "base", baseline=True)
    run, trace, out = _run(wormhole, tmp_path, "cold", memo=memo_store)
    # an episode's key holds how long ago its links were last busy, so the steps that
    # follow a compute phase or the run's start differ from the back-to-back ones:
    # at most 5 of the 18 steps are recorded, the others replayed
    assert run["memo_misses"] == run["memo_recorded"] <= 5
    assert run["memo_hits"] + run["memo_misses"] == 18 and run["memo_diverged"] == 0
    assert run["flows_replayed"] == 4 * run["memo_hits"]
    assert [row["kind"] for row in trace].count(TraceKind.MEMO_REPLAY) == run["memo_hits"]
    assert all(f["kind"] == FlowKind.RDMA_DCQCN for f in run["flows"])
    base = _by_tuple(baseline)
    for key, flow in _by_tuple(run).items():
        assert flow["rx_bytes"] == base[key]["rx_bytes"] == 4_000_000
        # the recordings skipped their steady part (each flow has its links to itself)
        assert flow["fct"] == pytest.approx(base[key]["fct"], rel=1e-3)
    # what the script itself saw: the FlowDag's finish times and iteration times
    assert _iteration_times(out) == pytest.approx(_iteration_times(base_out), rel=1e-3)
    assert _flow_lines(out).keys() == _flow_lines(base_out).keys()
    assert run["events"] * 3 < baseline["events"]
    assert run["events_avoided_by_memo"] > baseline["events"] * 0.6


def _fct_errors(run, baseline):
    base = _by_tuple(baseline)
    for key, flow in _by_tuple(run).items():
        assert flow["rx_bytes"] == base[key]["rx_bytes"]
    return {flow["id"]: abs(flow["fct"] / base[key]["fct"] - 1) for key, flow in _by_tuple(run).items()}


INTRUDER = ("--intruder-iteration", "1", "--intruder-mb", "8")


def test_a_dcqcn_replay_an_unforeseen_flow_may_reach_is_not_taken(wormhole, memo_facts, tmp_path, memo_store):
    """The store holds every step; iteration 1 gets a flow 0 -> 2 in the middle of its first step.

    It is released when an 8 MB flow between two outside hosts arrives, which no lookup
    can time; at the earliest (were that flow to end now) it meets the step, so the step
    is simulated, not replayed: no queue pair is resumed.
    """
    baseline, _, base_out = _run(wormhole, tmp_path, "base", *INTRUDER, baseline=True)
    run, events, out = _memo_events(memo_facts, tmp_path, "intruded", *INTRUDER, memo=memo_store)
    assert run["memo_diverged"] == run["flows_resumed"] == 0 and run["memo_hits"] >= 8
    intruded = next(event for event in events if event.flow_ids[0] == 25)
    assert intruded.kind is TraceKind.MEMO_MISS and isinstance(intruded.facts.refusal, Intruders)
    errors = _fct_errors(run, baseline)
    # DCQCN's shares are chaotic where the intruder meets the ring (tests/test_rdma_accel_skip.py)
    assert max(errors.values()) < 0.03 and sum(errors.values()) / len(errors) < 0.002
    assert len(_flow_lines(out)) == len(_flow_lines(base_out))


def test_one_call_names_the_unforeseeable_flows_the_two_questions_name(tmp_path):
    """FlowTracker::GetUnforeseeable asks a lookup's two questions (what the known ends release, then every
    flow at the earliest) in one crossing and returns only the flows that reach the episode's links; each of
    its answers is checked against the two questions asked one at a time (tests/scripts/forecast_check.py),
    the intruder's among them; and each answer of FlowTracker::GetUpcomingDue against the oracle's rows and
    routes read apart."""
    checks = tmp_path / "checks.json"
    done = subprocess.run([sys.executable, str(CHECK), str(checks), "run", "--results", str(tmp_path / "run.json"),
                           str(RING), *INTRUDER], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    kept = json.loads(checks.read_text())
    assert kept["differ"] == []
    assert kept["asked"] >= 8 and kept["named"] >= 1  # the intruder, at the earliest, meets a step
    assert kept["upcoming_differ"] == [] and kept["upcoming"] >= 8 and kept["due"] >= 4


def _within_plain_spread(run, plains):
    """The flows of ``run`` whose FCT lies outside [0.99 x the shortest, 1.01 x the longest] of ``plains``."""
    spread = [_by_tuple(plain) for plain in plains]
    outside = {}
    for key, flow in _by_tuple(run).items():
        assert flow["rx_bytes"] == spread[0][key]["rx_bytes"]
        low, high = min(p[key]["fct"] for p in spread), max(p[key]["fct"] for p in spread)
        if not 0.99 * low <= flow["fct"] <= 1.01 * high:
            outside[key] = (flow["fct"], low, high)
    return outside


def test_an_hpcc_replay_an_unforeseen_flow_may_reach_is_not_taken_and_every_flow_ends_within_plain_ns3s_spread(
        wormhole, memo_facts, tmp_path):
    """HPCC flows group as DCQCN ones do: the intruded step is simulated, not replayed, and no queue
    pair is resumed; every replayed completion puts its last ACK on the wire, as a plain run does
    (``RdmaReceiveQueuePair::CompleteVirtually``).

    Where the intruder meets the ring, plain ns-3 itself is chaotic: the intruder is released when
    the outside flow ends, and that flow 10 KB shorter or longer (0.8 us) moves the intruder's FCT
    by more than 10%. A steady skip of the outside flow ends it a fraction of a microsecond off
    (its own FCT within 0.1%), so the runs that skip (with and without the memo) are held to
    where plain ns-3 puts every flow across that perturbation, and no further."""
    memo = tmp_path / "memo"
    _run(wormhole, tmp_path, "fill", "--cc", "Hpcc", memo=memo)
    plains = [_run(wormhole, tmp_path, f"base{mb}", "--cc", "Hpcc", *INTRUDER[:3], mb, baseline=True)
              for mb in ("7.99", "8", "8.01")]
    baseline, base_out = plains[1][0], plains[1][2]
    skipping, _, _ = _run(wormhole, tmp_path, "skipping", "--cc", "Hpcc", *INTRUDER)
    run, events, out = _memo_events(memo_facts, tmp_path, "intruded", "--cc", "Hpcc", *INTRUDER, memo=memo)
    assert run["memo_diverged"] == run["flows_resumed"] == 0 and run["memo_hits"] >= 8
    intruded = next(event for event in events if event.flow_ids[0] == 25)
    assert intruded.kind is TraceKind.MEMO_MISS and isinstance(intruded.facts.refusal, Intruders)
    assert all(flow["kind"] == FlowKind.RDMA_HPCC for flow in run["flows"])
    assert run["events"] < skipping["events"] / 2 and skipping["events"] < baseline["events"]
    # the chaos is real: the intruder's FCT in plain ns-3 moves by more than 10% across 0.8 us of release
    intruder = next(k for k in _by_tuple(baseline) if k[:2] == ("10.0.0.1", "10.0.2.1"))
    fcts = [_by_tuple(plain)[intruder]["fct"] for plain, _, _ in plains]
    assert max(fcts) > 1.1 * min(fcts)
    for accelerated in (skipping, run):
        assert abs(_by_tuple(accelerated)[intruder]["start"] - _by_tuple(baseline)[intruder]["start"]) < 1e-6
        assert _within_plain_spread(accelerated, [plain for plain, _, _ in plains]) == {}
    assert len(_flow_lines(out)) == len(_flow_lines(base_out))
