"""judge_paced, the steady-state rule for flows a rate-based congestion control paces (RDMA)."""

import numpy as np
import pytest

from wormhole_ns3.accel.steady import PACED_HISTORY_WINDOWS, Limit, judge_paced

PERIOD = 1e-5  # s between samples
WINDOW = 10
THETA, FAIRNESS = 0.05, 0.15
LINK = 12.5e9  # bytes/s: 100 Gb/s


def counters(rates, samples):
    """Cumulative byte counters of flows delivering (or sending) at constant rates."""
    return {f: np.round(np.arange(samples) * rate * PERIOD).astype(np.int64) for f, rate in rates.items()}


def judge(delivered, sent=None, paced=None, notifications=None, paths=None, samples=WINDOW + 1, min_window=None):
    flows = list(delivered)
    sent = sent or delivered
    paths = paths or {f: frozenset({1}) for f in flows}
    return judge_paced(
        counters(delivered, samples),
        counters(sent, samples),
        {f: np.full(samples, (paced or {}).get(f, LINK)) for f in flows},
        {f: np.arange(samples) // 3 * (notifications or {}).get(f, 0) for f in flows},
        PERIOD, WINDOW, THETA, FAIRNESS, paths, {1: LINK, 2: LINK, 3: LINK},
        min_window=min_window,
    )


def test_a_flow_alone_on_its_links_is_steady_after_one_window_and_credited_what_it_delivered():
    verdict = judge({0: 11.9e9})
    assert verdict.steady and verdict.limit is None
    assert verdict.rates[0] == pytest.approx(11.9e9, rel=1e-6)
    assert verdict.horizon == float("inf")


def test_flows_sending_more_than_they_deliver_fill_a_queue_and_are_not_steady():
    """DCQCN's start: line rate into a bottleneck that delivers each a share."""
    verdict = judge({0: 6e9, 1: 6e9}, sent={0: 12e9, 1: 12e9}, notifications={0: 1, 1: 1})
    assert not verdict.steady and verdict.limit is Limit.FILLING_OR_DRAINING


def test_a_flow_paced_below_its_share_without_notifications_is_recovering():
    verdict = judge({0: 4e9}, paced={0: 4e9})
    assert not verdict.steady and verdict.limit is Limit.RECOVERING and verdict.flow == 0
    # the same rate held down by CNPs is a rate, not a recovery (its own link is what it has)
    assert judge({0: 4e9}, paced={0: 4e9}, notifications={0: 1}).steady


def test_contending_flows_need_a_long_history_over_which_their_rates_held():
    rates = {0: 5.9e9, 1: 6.0e9}
    held = PACED_HISTORY_WINDOWS * WINDOW + 1
    assert judge(rates, notifications={0: 1, 1: 1}).limit is Limit.WINDOW_NOT_FULL
    verdict = judge(rates, notifications={0: 1, 1: 1}, samples=held)
    assert verdict.steady and verdict.limit is None
    assert verdict.rates[0] == pytest.approx(5.9e9, rel=1e-4)
    assert verdict.horizon == pytest.approx((held - 1) * PERIOD)


def test_contending_flows_whose_split_shifted_or_is_unfair_are_not_steady():
    held = PACED_HISTORY_WINDOWS * WINDOW + 1
    split = {0: np.concatenate([np.arange(held // 2) * 50_000, (held // 2 - 1) * 50_000
                                + np.arange(1, held - held // 2 + 1) * 70_000])}
    split[1] = np.arange(held) * 120_000 - split[0]
    verdict = judge_paced(split, split, {f: np.full(held, 6e9) for f in split},
                          {f: np.arange(held) for f in split}, PERIOD, WINDOW, THETA, FAIRNESS,
                          {0: frozenset({1}), 1: frozenset({1})}, {1: LINK})
    assert not verdict.steady and verdict.limit is Limit.HALVES_DIFFER
    unfair = judge({0: 3e9, 1: 9e9}, notifications={0: 1, 1: 1}, samples=held)
    assert not unfair.steady and unfair.limit is Limit.UNFAIR


def test_flows_alone_at_line_rate_are_steady_on_a_short_window():
    """A ring step on a rail: each flow to itself, at line rate from its first RTT, no CNP."""
    alone = {0: frozenset({1}), 1: frozenset({2})}
    verdict = judge({0: 12.4e9, 1: 12.4e9}, paths=alone, samples=5, min_window=4)
    assert verdict.steady and verdict.rates[0] == pytest.approx(12.4e9, rel=1e-6)
    assert verdict.reason.endswith("no flow contending, at line rate over 4 samples")
    # without min_window, or before it, the window is not full
    assert judge({0: 12.4e9, 1: 12.4e9}, paths=alone, samples=5).limit is Limit.WINDOW_NOT_FULL
    assert judge({0: 12.4e9, 1: 12.4e9}, paths=alone, samples=4, min_window=4).limit is Limit.WINDOW_NOT_FULL


def test_a_short_window_is_refused_below_line_rate_after_a_notification_or_when_flows_contend():
    alone = {0: frozenset({1}), 1: frozenset({2})}
    slow = judge({0: 11e9, 1: 12.4e9}, paced={0: 11e9}, notifications={0: 1}, paths=alone, samples=5, min_window=4)
    assert slow.limit is Limit.WINDOW_NOT_FULL and slow.flow == 0
    assert "paced at 88% of its link with 1 congestion notification(s) over 4 samples" in slow.reason
    notified = judge({0: 12.4e9, 1: 12.4e9}, notifications={1: 1}, paths=alone, samples=5, min_window=4)
    assert notified.limit is Limit.WINDOW_NOT_FULL and notified.flow == 1
    # sharing link 1, the two must show a long history, short window or not
    shared = judge({0: 6e9, 1: 6e9}, paced={0: 6e9, 1: 6e9}, samples=5, min_window=4)
    assert shared.limit is Limit.WINDOW_NOT_FULL and shared.flow is None
    # and a whole window is judged as it always was: the same flow below line rate is held by its CNP
    assert judge({0: 11e9, 1: 12.4e9}, paced={0: 11e9}, notifications={0: 1}, paths=alone,
                 min_window=4).steady


def test_a_short_window_holds_the_spread_to_theta_scaled_down_with_it():
    alone = {0: frozenset({1})}
    wobbly = {0: np.cumsum([0] + [12.4e9 * PERIOD * (1 + 0.03 * (i % 2)) for i in range(4)]).astype(np.int64)}
    verdict = judge_paced(wobbly, wobbly, {0: np.full(5, LINK)}, {0: np.zeros(5)}, PERIOD, WINDOW, THETA,
                          FAIRNESS, alone, {1: LINK}, min_window=4)
    assert verdict.limit is Limit.SPREAD  # 3% >= 5% * 4 / 10
