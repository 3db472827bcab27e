"""Memoized episodes on real ns-3 runs: recorded once, replayed after, never confused.

The workload is a ring all-reduce over four hosts of a star, repeated every
iteration (tests/scripts/flow_dag_ring.py): the same contention episode each
time, as in training.
"""

import csv
import json

import pytest

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

RING = REPO / "tests" / "scripts" / "flow_dag_ring.py"


def _run(wormhole, tmp_path, name, *args, memo=None, baseline=False):
    results, trace = tmp_path / f"{name}.json", tmp_path / f"{name}.csv"
    options = ["--baseline"] if baseline else ["--trace", trace] + (["--memo", memo] if memo else [])
    done = wormhole("run", "--results", results, *options, RING, *args)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(trace.open())) if trace.exists() else []
    return load_json(results), rows, done.stdout


def _fcts(run):
    return {(f["src"], f["dst"], f["sport"], f["dport"]): f["fct"] for f in run["flows"]}


@pytest.fixture(scope="module")
def ring_runs(tmp_path_factory):
    """Baseline, a cold memo run and a warm one (same store), three iterations each."""
    import os
    import subprocess
    import sys

    tmp = tmp_path_factory.mktemp("ring")

    def wormhole(*args):
        done = subprocess.run([sys.executable, "-m", "wormhole_ns3", *map(str, args)], cwd=tmp,
                              capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)},
                              timeout=900)
        return done

    memo = tmp / "memo"
    baseline = _run(wormhole, tmp, "baseline", baseline=True)
    cold = _run(wormhole, tmp, "cold", memo=memo)
    warm = _run(wormhole, tmp, "warm", memo=memo)
    return baseline, cold, warm, memo


def test_the_first_iteration_is_recorded_and_the_others_replay_it_exactly(ring_runs):
    (baseline, _, base_out), (cold, trace, cold_out), _, _ = ring_runs
    assert (cold["memo_hits"], cold["memo_misses"], cold["memo_recorded"]) == (2, 1, 1)
    assert cold["flows_replayed"] == 2 * 24  # iterations 2 and 3: 24 flows each
    assert cold["memo_diverged"] == 0
    kinds = [row["kind"] for row in trace]
    assert kinds.count("memo-recorded") == 1 and kinds.count("memo-replay") == 2
    # a replay reproduces the recorded (packet-level) outcome: every FCT as in plain ns-3
    assert _fcts(cold) == _fcts(baseline)
    assert cold_out == base_out  # iteration times printed by the script
    assert cold["events"] * 2.5 < baseline["events"]
    assert cold["events_avoided_by_memo"] > baseline["events"] / 2


def test_a_warm_store_replays_every_iteration_with_the_same_results(ring_runs):
    (baseline, _, _), (cold, _, cold_out), (warm, trace, warm_out), _ = ring_runs
    assert (warm["memo_hits"], warm["memo_misses"]) == (3, 0)
    assert _fcts(warm) == _fcts(cold)
    assert warm_out == cold_out
    assert warm["events"] * 100 < baseline["events"]
    assert warm["run_wall_s"] * 5 < cold["run_wall_s"]
    for row in trace:
        assert row["kind"] == "memo-replay"
        assert "memo hit" in row["reason"] and "idle links" in row["reason"]
        assert int(row["events_avoided"]) > 0


@pytest.mark.parametrize("change", [["--rate", "20Gbps"], ["--tcp", "TcpNewReno"], ["--mb", "8"]])
def test_a_changed_link_rate_congestion_control_or_size_never_hits_an_old_entry(
    ring_runs, wormhole, tmp_path, change
):
    *_, memo = ring_runs
    run, _, _ = _run(wormhole, tmp_path, "changed", "--iterations", "1", *change, memo=memo)
    assert run["memo_hits"] == 0 and run["memo_misses"] == 1


def test_an_unexpected_flow_during_a_replay_makes_it_diverge_and_resume_for_real(
    ring_runs, wormhole, tmp_path
):
    *_, memo = ring_runs
    args = ["--intruder-iteration", "1", "--intruder-ms", "5"]
    baseline, _, _ = _run(wormhole, tmp_path, "base", *args, baseline=True)
    run, trace, _ = _run(wormhole, tmp_path, "intruded", *args, memo=memo)
    diverged = [row for row in trace if row["kind"] == "memo-diverged"]
    assert run["memo_diverged"] == len(diverged) == 1
    assert "was not expected" in diverged[0]["reason"]
    assert run["flows_resumed"] == 4  # the ring step in flight when the intruder came
    assert run["memo_hits"] == 3  # the other iterations still replay
    base = {(f["src"], f["dst"], f["sport"], f["dport"]): f for f in baseline["flows"]}
    for flow in run["flows"]:
        assert flow["rx_bytes"] == base[(flow["src"], flow["dst"], flow["sport"], flow["dport"])]["rx_bytes"]
    assert all(f["fct"] is not None for f in run["flows"])


def test_memo_context_names_the_ns3_version_so_another_version_never_matches():
    from wormhole_ns3 import loader
    from wormhole_ns3.config import AcceleratorConfig
    from wormhole_ns3.harness import memo_context
    from wormhole_ns3.memo.fingerprint import Episode, FlowDescriptor, LinkDescriptor, fingerprint

    context = memo_context(AcceleratorConfig())
    assert f"ns-3 {loader.ns3_version()}" in context
    other = context.replace(f"ns-3 {loader.ns3_version()}", "ns-3 3.45")
    episode = lambda ctx: Episode({1: FlowDescriptor("f", 0, (7,), (8,))},  # noqa: E731
                                  {7: LinkDescriptor("l", 0), 8: LinkDescriptor("l", 0)}, ctx)
    assert fingerprint(episode(context)).key != fingerprint(episode(other)).key


def test_identical_episodes_running_at_once_mirror_the_one_being_recorded(wormhole, tmp_path):
    """Three rings on disjoint hosts start together: one is simulated, two follow it."""
    args = ["--rings", "3", "--iterations", "1"]
    baseline, _, base_out = _run(wormhole, tmp_path, "base", *args, baseline=True)
    run, trace, out = _run(wormhole, tmp_path, "mirrored", *args, memo=tmp_path / "memo")
    assert (run["memo_mirrored"], run["memo_misses"], run["memo_hits"]) == (2, 1, 0)
    assert run["flows_replayed"] == 2 * 24 and run["memo_diverged"] == 0
    assert [row["kind"] for row in trace].count("memo-mirror") == 2
    assert _fcts(run) == _fcts(baseline)
    assert out == base_out
    assert run["events"] * 2.5 < baseline["events"]
