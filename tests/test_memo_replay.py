"""Memoized episodes on real ns-3 runs: recorded once, replayed after, never confused.

The workload is a ring all-reduce over four hosts of a star, repeated every
iteration (tests/scripts/flow_dag_ring.py): the same contention episode each
time, as in training.
"""

import csv

import pytest

from wormhole_ns3.core.trace import TraceKind
from wormhole_ns3.memo.decisions import Cause, Miss

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

RING = REPO / "tests" / "scripts" / "flow_dag_ring.py"


def _run(wormhole, tmp_path, name, *args, memo=None, baseline=False):
    results, trace = tmp_path / f"{name}.json", tmp_path / f"{name}.csv"
    options = ["--baseline"] if baseline else ["--trace", trace] + (["--memo", memo] if memo else ["--no-memo"])
    done = wormhole("run", "--results", results, *options, RING, *args)
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(trace.open())) if trace.exists() else []
    return load_json(results), rows, done.stdout


def _memo_events(memo_facts, tmp_path, name, *args, memo):
    """A run's results and its memo events with their typed facts (``SkipRecord.facts``)."""
    results = tmp_path / f"{name}.json"
    done, events = memo_facts("run", "--results", results, "--memo", memo, RING, *args)
    assert done.returncode == 0, done.stderr
    return load_json(results), events


def _fcts(run):
    return {(f["src"], f["dst"], f["sport"], f["dport"]): f["fct"] for f in run["flows"]}


def _max_fct_error(run, baseline):
    """Largest relative FCT difference, flows matched by their 5-tuple (all must be there)."""
    base, accelerated = _fcts(baseline), _fcts(run)
    assert base.keys() == accelerated.keys()
    return max(abs(accelerated[k] - base[k]) / base[k] for k in base)


def _iteration_times(stdout):
    return [float(line.split()[3]) for line in stdout.splitlines() if line.startswith("iteration")]


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


def test_the_first_ring_steps_are_recorded_and_every_later_one_replays_them(ring_runs):
    """Each ring step is an episode (4 flows starting on idle links, closing at its last byte).

    Steps of the first iteration are recorded (each in a context of its own: after
    compute, or right after the previous step's last byte); every later step of the
    three iterations (18 in all) replays them. A replay gives the recorded packet-level
    outcome, so FCTs match plain ns-3 up to what the key cannot see (the nanoseconds by
    which a step's last ACKs cross the first packets of the next).
    """
    (baseline, _, base_out), (cold, trace, cold_out), _, _ = ring_runs
    assert cold["memo_misses"] == cold["memo_recorded"] <= 6  # at most the first iteration's steps
    assert cold["memo_hits"] + cold["memo_misses"] == 18 and cold["memo_diverged"] == 0
    assert cold["flows_replayed"] == cold["memo_hits"] * 4
    kinds = [row["kind"] for row in trace]
    assert kinds.count(TraceKind.MEMO_RECORDED) == cold["memo_recorded"]
    assert kinds.count(TraceKind.MEMO_MISS) == cold["memo_misses"]
    assert kinds.count(TraceKind.MEMO_REPLAY) == cold["memo_hits"]
    assert _max_fct_error(cold, baseline) < 1e-4
    assert _iteration_times(cold_out) == pytest.approx(_iteration_times(base_out), rel=1e-4)
    assert cold["events"] * 3 < baseline["events"]
    assert cold["events_avoided_by_memo"] > baseline["events"] * 0.6


def test_a_warm_store_replays_every_step_with_the_same_results(ring_runs):
    (baseline, _, _), (cold, _, cold_out), (warm, trace, warm_out), _ = ring_runs
    assert (warm["memo_hits"], warm["memo_misses"]) == (18, 0)
    assert _max_fct_error(warm, baseline) < 1e-4
    assert _iteration_times(warm_out) == pytest.approx(_iteration_times(cold_out), rel=1e-4)
    assert warm["events"] * 100 < baseline["events"]
    assert warm["events"] * 5 < cold["events"]
    for row in trace:
        assert row["kind"] == TraceKind.MEMO_REPLAY
        assert int(row["events_avoided"]) > 0


@pytest.mark.parametrize("change", [["--rate", "20Gbps"], ["--tcp", "TcpNewReno"], ["--mb", "8"]])
def test_a_changed_link_rate_congestion_control_or_size_never_hits_an_old_entry(
    ring_runs, memo_facts, tmp_path, change
):
    """The store knows every step of the 10 Gbps DCTCP 16 MB ring; none of them may match."""
    *_, memo = ring_runs
    run, events = _memo_events(memo_facts, tmp_path, "changed", "--iterations", "1", *change, memo=memo)
    # the first step was simulated, not replayed, because no stored continuation opens like it
    first = events[0]
    assert first.kind is TraceKind.MEMO_MISS and isinstance(first.facts, Miss)
    assert first.facts.refusal is None and not first.facts.relearn
    assert run["memo_recorded"] >= 1


def test_an_unexpected_flow_during_a_replay_makes_it_diverge_and_resume_for_real(
    ring_runs, wormhole, memo_facts, tmp_path
):
    *_, memo = ring_runs
    args = ["--intruder-iteration", "1", "--intruder-mb", "6"]
    baseline, _, _ = _run(wormhole, tmp_path, "base", *args, baseline=True)
    run, events = _memo_events(memo_facts, tmp_path, "intruded", *args, memo=memo)
    diverged = [event for event in events if event.kind is TraceKind.MEMO_DIVERGED]
    assert run["memo_diverged"] == len(diverged) == 1
    assert diverged[0].facts.cause is Cause.UNEXPECTED_JOINER
    assert run["flows_resumed"] == 4  # the ring step in flight when the intruder came
    assert run["memo_hits"] >= 12  # the other steps still replay
    base = {(f["src"], f["dst"], f["sport"], f["dport"]): f for f in baseline["flows"]}
    for flow in run["flows"]:
        assert flow["rx_bytes"] == base[(flow["src"], flow["dst"], flow["sport"], flow["dport"])]["rx_bytes"]
    assert all(f["fct"] is not None for f in run["flows"])


def test_memo_context_names_the_ns3_version_so_another_version_never_matches():
    from wormhole_ns3.config import AcceleratorConfig
    from wormhole_ns3.memo.fingerprint import Episode, FlowDescriptor, LinkDescriptor, fingerprint
    from wormhole_ns3.run.harness import memo_context
    from wormhole_ns3.runtime import loader

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
    # ring 0 records what rings 1 and 2 mirror
    assert run["memo_mirrored"] >= 4 and run["memo_misses"] <= 8 and run["memo_diverged"] == 0
    assert [row["kind"] for row in trace].count(TraceKind.MEMO_MIRROR) == run["memo_mirrored"]
    assert run["memo_hits"] + run["memo_mirrored"] + run["memo_misses"] == 3 * 6
    assert _max_fct_error(run, baseline) < 1e-4
    assert _iteration_times(out) == pytest.approx(_iteration_times(base_out), rel=1e-4)
    assert run["events"] * 2 < baseline["events"]
    assert run["events"] * 2.5 < baseline["events"]


def test_a_flow_started_by_replayed_completions_meets_their_last_acks_and_fins_as_in_a_plain_run(
        wormhole, tmp_path):
    """Two rings, one recorded and one mirrored, then a flow between them that their last completions start.

    At that instant a plain run still has the end of each transfer on the links (the
    receiver's ACK of the last segment, its FIN, the sender's ACK of it). A replayed
    completion puts them there too; without them the bridging flow ran 0.009% off.
    """
    args = ["--rings", "2", "--iterations", "2", "--bridge-mb", "1"]
    baseline, _, base_out = _run(wormhole, tmp_path, "base", *args, baseline=True)
    run, trace, out = _run(wormhole, tmp_path, "memo", *args, memo=tmp_path / "memo")
    assert run["memo_mirrored"] >= 2 and run["memo_hits"] >= 10 and run["memo_diverged"] == 0
    assert _max_fct_error(run, baseline) == 0.0
    assert _iteration_times(out) == _iteration_times(base_out)
    assert run["events"] * 5 < baseline["events"]
