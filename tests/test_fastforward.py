import pytest

from wormhole_ns3.accel.fastforward import FlowProgress, SkipEnd, plan_skip

RATE = 1e9  # bytes/s


def test_skip_stops_a_tail_before_the_first_completion():
    plan = plan_skip(
        now=1.0,
        rates={0: RATE, 1: RATE},
        progress={0: FlowProgress(remaining=10**9, sendable=10**10), 1: FlowProgress(2 * 10**9, 10**10)},
        bounds={SkipEnd.UNATTRIBUTED_EVENT: 100.0},
        tail=0.01,
        min_skip=0.001,
    )
    assert plan.end is SkipEnd.FLOW_TAIL and plan.tail_flow == 0
    assert plan.limit == "flow 0 tail"  # as the trace prints it
    assert plan.duration == pytest.approx(0.99)
    assert plan.credits == {0: int(RATE * plan.duration), 1: int(RATE * plan.duration)}


def test_skip_never_crosses_an_unattributed_event():
    plan = plan_skip(1.0, {0: RATE}, {0: FlowProgress(None, 10**12)}, {SkipEnd.UNATTRIBUTED_EVENT: 1.5}, 0.01, 0.001)
    assert plan.end is SkipEnd.UNATTRIBUTED_EVENT and plan.limit == "unattributed event"
    assert plan.duration == pytest.approx(0.5)


def test_skip_is_bounded_by_what_the_sender_can_give_up():
    plan = plan_skip(0.0, {0: RATE}, {0: FlowProgress(10**12, sendable=10**8)},
                     {SkipEnd.UNATTRIBUTED_EVENT: 100.0}, 0.01, 0.001)
    assert plan.duration == pytest.approx(0.09)
    assert plan.end is SkipEnd.FLOW_TAIL and plan.tail_flow == 0


def test_skip_respects_the_horizon():
    plan = plan_skip(0.0, {0: RATE}, {0: FlowProgress(None, 10**12)}, {}, 0.01, 0.001, max_skip=0.2)
    assert plan.end is SkipEnd.HORIZON
    assert plan.duration == pytest.approx(0.2)


def test_too_short_a_skip_is_not_planned():
    bound = {SkipEnd.FLOW_ARRIVAL: 0.0005}
    assert plan_skip(0.0, {0: RATE}, {0: FlowProgress(None, 10**12)}, bound, 0.01, 0.001) is None
    assert plan_skip(0.0, {0: RATE}, {0: FlowProgress(10**7, 10**12)}, {}, 0.01, 0.001) is None


def test_the_earliest_bound_ends_the_skip_and_ties_go_to_the_first_bound_by_name():
    bounds = {SkipEnd.UNATTRIBUTED_EVENT: 1.4, SkipEnd.FLOW_ARRIVAL: 1.4, SkipEnd.RATES_SEEN_TO_HOLD: 1.6}
    plan = plan_skip(1.0, {0: RATE}, {0: FlowProgress(None, 10**12)}, bounds, 0.01, 0.001)
    assert plan.end is SkipEnd.FLOW_ARRIVAL and plan.limit == "flow arrival"
    assert plan.duration == pytest.approx(0.4)
