"""The error guard's bound logic (accel/verify.py), against fakes: errors, draws, and a kind stopped."""

from __future__ import annotations

import pytest
from test_accel_controller_fake import BOTTLENECK, PERIOD_NS, WINDOW, deliver, run_with, sample_at

from wormhole_ns3.accel import verify as verify_module
from wormhole_ns3.accel.verify import Guard, late_error, replay_error, skip_error
from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.core.shortcuts import GuardKind
from wormhole_ns3.core.trace import TraceKind


def test_a_skips_error_is_its_bytes_off_over_the_flow_size_or_over_the_bytes_moved():
    before = {0: 1000, 1: 0}
    real = {0: 11_000, 1: 10_000}
    ours = {0: 11_500, 1: 9_900}
    progress, fct = skip_error(before, ours, real, sizes={0: 100_000, 1: 0})
    assert progress == pytest.approx(600 / 20_000)
    # flow 0: 500 of 100000 bytes; flow 1 is unlimited: 100 of the 10000 it moved
    assert fct == pytest.approx(0.01)
    assert skip_error(before, real, real, {0: 100_000, 1: 0}) == (0.0, 0.0)


def test_a_flow_the_child_finished_within_the_skip_is_late_by_the_rest_of_the_skip_here():
    # ended 0.169 s after its start in the child, still running here 0.181 s after it
    assert late_error({2: 0.181}, {2: 0.169}) == pytest.approx(0.012 / 0.169)
    assert late_error({}, {}) == 0.0


def checked_skip(monkeypatch, **settings):
    """Two DCTCP flows (5 and 10 MB) sharing the bottleneck, skipped once with every skip checked.

    Returns the controller, the tracker, the fake ns-3 and each flow's bytes delivered before the skip.
    """
    monkeypatch.setattr(verify_module, "Fork", FakeFork)
    config = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, tail_rtts=20, verify=1.0, **settings)
    controller, tracker, ns3 = run_with([(5 * 10**6, "ns3::TcpDctcp"), (10**7, "ns3::TcpDctcp")], config)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    before = {f: tracker.GetDelivered(f) for f in (0, 1)}
    sample_at(controller, ns3, 11 * PERIOD_NS)
    assert len(controller.skips) == 1
    return controller, tracker, ns3, before


def test_a_checked_skip_whose_child_finished_a_flow_early_is_off_by_its_time_not_its_last_bytes(monkeypatch):
    """The bytes a flow had left when the child finished it are all it can be off by; its time is what the user sees."""
    controller, tracker, ns3, before = checked_skip(monkeypatch)
    (end_ns, _, _) = controller.verifier._checks[0]
    # the child delivered what was credited, and all of flow 0's size too: it finished 1 ms before the end
    child_fct = end_ns * 1e-9 - 1e-3 - tracker.GetStartTime(0).GetSeconds()
    FakeFork.measured = {"delivered": {str(f): before[f] + tracker.flows[f].credited for f in (0, 1)},
                         "ended": {"0": child_fct}}
    ns3.now_ns = end_ns
    controller.on_check_end()
    results = controller.guard.results()
    assert results["skip"]["checked"] == 1
    assert results["skip"]["error_max"] == pytest.approx(1e-3 / child_fct, rel=1e-6)
    assert results["skip"]["stopped"] is not None  # 1 ms of a few ms is past 1%


def test_a_replays_error_is_the_largest_relative_fct_error_and_a_flow_that_never_finished_is_infinite():
    assert replay_error({3: 1.02, 4: 0.99}, {3: 1.0, 4: 1.0}) == pytest.approx(0.02)
    assert replay_error({3: 1.0}, {3: None}) == float("inf")


def test_draws_are_seeded_by_the_run_and_a_fraction_of_zero_never_checks():
    def draws(seed, run):
        guard = Guard(0.3, seed, run)
        return [guard.selects(GuardKind.SKIP) for _ in range(200)]

    assert draws(1, 1) == draws(1, 1)
    assert draws(1, 1) != draws(1, 2)
    assert 40 < sum(draws(1, 1)) < 80
    assert not any(Guard(0.0, 1, 1).selects(GuardKind.SKIP) for _ in range(100))


def test_a_kind_is_stopped_by_the_first_error_past_its_bound_and_the_other_kind_goes_on():
    guard = Guard(1.0, 1, 1, bound=0.01)
    assert guard.record(GuardKind.SKIP, 0.5, (0, 1), 0.009) is None
    message = guard.record(GuardKind.SKIP, 0.7, (0, 1), 0.02)
    assert message is not None and message.startswith("a skip at t=0.700000000 s of flows 0 1 was off by 2.000%")
    assert not guard.allows(GuardKind.SKIP) and not guard.selects(GuardKind.SKIP)
    assert guard.allows(GuardKind.REPLAY) and guard.selects(GuardKind.REPLAY)
    assert guard.record(GuardKind.SKIP, 0.9, (0,), 0.5) is None  # said once
    results = guard.results()
    assert results["skip"]["checked"] == 3 and results["skip"]["error_max"] == 0.5
    assert results["skip"]["stopped"] == message and results["replay"]["stopped"] is None


class FakeFork:
    """A check's fork, parent side: the child's measurement is what the test says it is."""

    measured: dict = {}

    def __init__(self) -> None:
        self.in_child = False
        self.abandoned = False

    def receive(self) -> dict:
        return dict(FakeFork.measured)

    def abandon(self) -> None:
        self.abandoned = True


@pytest.mark.parametrize("real_over_credit, stopped", [(1.0, False), (0.5, True)])
def test_a_checked_skip_is_compared_at_its_end_and_a_loose_one_stops_all_skips(
        monkeypatch, real_over_credit, stopped):
    # skips of 5 ms at most: a partition still steady when one ends skips again at once
    controller, tracker, ns3, before = checked_skip(monkeypatch, max_skip=0.005)
    (skip,) = controller.skips
    (end_ns, _, check) = controller.verifier._checks[0]
    assert end_ns == 11 * PERIOD_NS + round(skip.dt * 1e9) and check.before == before
    # the child simulated the skip's time: its flows moved real_over_credit of what was credited
    FakeFork.measured = {"delivered": {str(f): before[f] + int(real_over_credit * tracker.flows[f].credited)
                                       for f in (0, 1)}, "ended": {}}
    ns3.now_ns = end_ns
    controller.on_check_end()
    assert not controller.verifier._checks
    results = controller.guard.results()
    assert results["skip"]["checked"] == 1
    assert (results["skip"]["stopped"] is not None) == stopped
    if stopped:
        # credited 2x what was real: half of the credit over each flow's size
        assert results["skip"]["error_max"] == pytest.approx(
            max(tracker.flows[f].credited / 2 / tracker.flows[f].size for f in (0, 1)), rel=1e-3)
        guard_rows = [r for r in controller.trace_records() if r.kind is TraceKind.GUARD]
        assert [r.limit for r in guard_rows] == ["skips stopped"]
    else:
        assert results["skip"]["error_max"] == 0.0
    # the skip ends at its horizon, its rates still hold: it skips again, unless skips are stopped
    controller.on_resume()
    assert len(controller.skips) == (1 if stopped else 2)
