import random

import numpy as np
import pytest

from wormhole_ns3.accel.steady import Limit, contends, judge, max_min_fair

GBPS = 1.25e8  # bytes/s


def test_max_min_fair_splits_a_shared_bottleneck_equally():
    paths = {f: frozenset({f, 100}) for f in range(4)}
    capacity = {**{f: 10 * GBPS for f in range(4)}, 100: 10 * GBPS}
    rates = max_min_fair(paths, capacity)
    assert rates == pytest.approx({f: 2.5 * GBPS for f in range(4)})


def test_max_min_fair_gives_leftover_capacity_to_unconstrained_flows():
    # parking lot: flow 0 crosses links A and B, flow 1 only A, flow 2 only B (B is narrower)
    paths = {0: frozenset("AB"), 1: frozenset("A"), 2: frozenset("B")}
    capacity = {"A": 10.0, "B": 4.0}
    assert max_min_fair(paths, capacity) == pytest.approx({0: 2.0, 1: 8.0, 2: 2.0})


def test_max_min_fair_respects_demands():
    paths = {0: frozenset("L"), 1: frozenset("L")}
    rates = max_min_fair(paths, {"L": 10.0}, demand={0: 1.0, 1: None})
    assert rates == pytest.approx({0: 1.0, 1: 9.0})


def test_contends_answers_as_max_min_fair_shares_against_each_paths_narrowest_link():
    rng = random.Random(7)
    answers = set()
    for _ in range(2000):
        links = range(rng.randint(1, 6))
        capacity = {link: rng.choice([10.0, 25.0, 40.0, 100.0]) for link in links}
        paths = {f: frozenset(rng.sample(links, rng.randint(1, len(links)))) for f in range(rng.randint(1, 5))}
        fair = max_min_fair(paths, capacity)
        expected = any(fair[f] < min(capacity[link] for link in paths[f]) * (1 - 1e-9) for f in paths)
        assert contends(paths, capacity) == expected, (paths, capacity)
        answers.add(expected)
    assert answers == {True, False}


def test_a_flow_with_no_known_path_contends():
    assert contends({0: frozenset(), 1: frozenset({"A"})}, {"A": 10.0})
    assert not contends({0: frozenset({"A"}), 1: frozenset({"B"})}, {"A": 10.0, "B": 10.0})


def _counters(rates, period=1e-3, n=11):
    return np.concatenate([[0], np.cumsum(np.array(rates, dtype=float) * period)]).astype(np.int64)


def _two_flows_on_one_link():
    paths = {0: frozenset({1, 9}), 1: frozenset({2, 9})}
    capacity = {1: GBPS * 10, 2: GBPS * 10, 9: GBPS * 10}
    return paths, capacity


def test_a_steady_fair_partition_is_steady_and_credited_equal_shares_of_the_aggregate():
    paths, capacity = _two_flows_on_one_link()
    samples = {0: _counters([6e8] * 10), 1: _counters([5.9e8] * 10)}
    verdict = judge(samples, 1e-3, 10, 0.05, 0.10, paths, capacity)
    assert verdict.steady and verdict.limit is None, verdict.reason
    assert verdict.rates[0] == pytest.approx(5.95e8, rel=1e-6)
    assert verdict.rates[1] == pytest.approx(5.95e8, rel=1e-6)


def test_a_fluctuating_aggregate_is_not_steady():
    paths, capacity = _two_flows_on_one_link()
    samples = {0: _counters([6e8, 3e8] * 5), 1: _counters([6e8] * 10)}
    verdict = judge(samples, 1e-3, 10, 0.05, 0.10, paths, capacity)
    assert not verdict.steady
    assert verdict.limit is Limit.SPREAD
    assert verdict.spread >= 0.05


def test_an_unfair_partition_is_not_steady_even_with_a_stable_aggregate():
    paths, capacity = _two_flows_on_one_link()
    samples = {0: _counters([9e8] * 10), 1: _counters([3e8] * 10)}
    verdict = judge(samples, 1e-3, 10, 0.05, 0.10, paths, capacity)
    assert not verdict.steady
    assert verdict.limit is Limit.UNFAIR
    assert verdict.unfairness == pytest.approx(0.5)


def test_a_window_that_is_not_full_is_not_judged_steady():
    paths, capacity = _two_flows_on_one_link()
    samples = {0: _counters([6e8] * 10)[:5], 1: _counters([6e8] * 10)}
    assert judge(samples, 1e-3, 10, 0.05, 0.10, paths, capacity).limit is Limit.WINDOW_NOT_FULL


def test_a_partition_that_delivers_nothing_makes_no_progress():
    paths, capacity = _two_flows_on_one_link()
    samples = {0: _counters([0] * 10), 1: _counters([0] * 10)}
    verdict = judge(samples, 1e-3, 10, 0.05, 0.10, paths, capacity)
    assert verdict.limit is Limit.NO_PROGRESS and not verdict.steady


def test_a_verdict_reads_as_the_trace_printed_it():
    """The skip trace's reason column: the detail if there is one, else the limit's own words."""
    paths, capacity = _two_flows_on_one_link()
    unfair = judge({0: _counters([9e8] * 10), 1: _counters([3e8] * 10)}, 1e-3, 10, 0.05, 0.10, paths, capacity)
    assert unfair.flow == 0 and unfair.reason == "flow 0 at 50.0% from its fair share (> 10%)"
    short = judge({0: _counters([6e8] * 10)[:5], 1: _counters([6e8] * 10)}, 1e-3, 10, 0.05, 0.10, paths, capacity)
    assert short.reason == "window not full"
