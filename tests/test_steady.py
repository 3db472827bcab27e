import json
import random
from pathlib import Path

import numpy as np
import pytest

from wormhole_ns3.accel.steady import (
    Limit,
    contends,
    converging_stake,
    distance_by_halves,
    judge,
    max_min_fair,
    moving_stake,
)
from wormhole_ns3.config import AcceleratorConfig

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


def _converging_pair(n, gap0, tau, period=1e-4, aggregate=0.95 * 10 * GBPS):
    """Two flows splitting a steady aggregate, flow 0 above its share by gap0 * exp(-t / tau) of it."""
    t = np.arange(n) * period
    share = aggregate / 2
    gap = gap0 * share * np.exp(-t / tau)
    return {0: _counters(share + gap, period), 1: _counters(share - gap, period)}, share


def test_converging_stake_owes_the_rest_of_an_exponential_convergence():
    samples, share = _converging_pair(40, gap0=0.8, tau=2e-3)
    stake = converging_stake(samples[0], share, 1e-4, 0.05)
    owed_from_last_sample = 0.8 * share * np.exp(-40e-4 / 2e-3) * 2e-3
    # the second half's mean distance stands for the last: it errs long, never short
    assert owed_from_last_sample <= stake <= 1.8 * owed_from_last_sample


def test_a_flow_holding_off_its_share_is_not_converging_and_one_at_it_owes_nothing():
    held = _counters([share * 0.5 for share in [6e8] * 40], 1e-4)
    assert converging_stake(held, 6e8, 1e-4, 0.05) == float("inf")
    noisy = _counters([6e8 * (1 + 0.04 * (-1) ** i) for i in range(40)], 1e-4)
    assert converging_stake(noisy, 6e8, 1e-4, 0.05) == 0.0
    leaving = _counters(np.linspace(5e8, 3e8, 40), 1e-4)  # moving away from its share
    assert converging_stake(leaving, 6e8, 1e-4, 0.05) == float("inf")


def test_a_converging_flow_of_many_bytes_is_credited_its_share_with_the_owed_share_in_the_trace():
    paths, capacity = _two_flows_on_one_link()
    samples, share = _converging_pair(40, gap0=0.8, tau=4e-3)
    sizes = {0: 10**9, 1: 10**9}
    verdict = judge(samples, 1e-4, 10, 0.05, 0.15, paths, capacity, sizes=sizes, budget=0.005)
    assert verdict.steady, verdict.reason
    assert verdict.unfairness > 0.15
    assert verdict.rates == pytest.approx({0: share, 1: share}, rel=1e-3)
    assert "converging, flow 0 owing 0.0" in verdict.reason


def test_a_converging_flow_of_few_bytes_keeps_the_fairness_bound():
    paths, capacity = _two_flows_on_one_link()
    samples, _ = _converging_pair(40, gap0=0.8, tau=4e-3)
    sizes = {0: 10**6, 1: 10**6}
    verdict = judge(samples, 1e-4, 10, 0.05, 0.15, paths, capacity, sizes=sizes, budget=0.005)
    assert verdict.limit is Limit.UNFAIR
    assert "of its bytes owed > 0.50%" in verdict.reason
    off = judge(samples, 1e-4, 10, 0.05, 0.15, paths, capacity, sizes={0: 10**9, 1: 10**9}, budget=0.0)
    assert off.limit is Limit.UNFAIR, "a budget of 0 is the fairness bound alone"


def test_a_flow_of_unknown_size_is_owed_nothing_on_credit():
    paths, capacity = _two_flows_on_one_link()
    samples, _ = _converging_pair(40, gap0=0.8, tau=4e-3)
    verdict = judge(samples, 1e-4, 10, 0.05, 0.15, paths, capacity, sizes={0: 0, 1: 0}, budget=0.005)
    assert verdict.limit is Limit.UNFAIR


def test_a_window_unfair_only_by_its_wander_is_judged_on_the_history():
    """TCP shares wander 20-30% over a few ms; over the history since the flow event they held."""
    paths, capacity = _two_flows_on_one_link()
    wander = [8e8] * 10 + [5e8] * 20 + [8e8] * 10  # 8% off its share over either half, 33% over the last 10
    other = [12e8 - r for r in wander]
    samples = {0: _counters(wander, 1e-4), 1: _counters(other, 1e-4)}
    verdict = judge(samples, 1e-4, 10, 0.05, 0.15, paths, capacity, sizes={0: 10**9, 1: 10**9}, budget=0.005)
    assert verdict.steady and verdict.reason.endswith("shares within 33.3% of fair"), verdict.reason
    short = {f: s[-11:] for f, s in samples.items()}  # the window is all the history there is
    assert judge(short, 1e-4, 10, 0.05, 0.15, paths, capacity, sizes={0: 10**9, 1: 10**9},
                 budget=0.005).limit is Limit.UNFAIR


def test_a_flow_whose_rate_moved_between_the_halves_of_its_history_owes_as_much_again():
    """A history that moved, other than by an approach to the share from one side, is still moving.

    Flow 0 held 5e8 for 30 samples and 8e8 (past its share of 6e8) or 6e8 (at it) for the last 10:
    its rate rose 25% or 8% of its share between the halves of its history, and a window at or
    near the share says nothing of where it goes next. It may move as far again over as long
    again: 300 or 100 kB, 3% or 1% of 10 MB (refused), 0.03% or 0.01% of a GB (credited).
    """
    paths, capacity = _two_flows_on_one_link()
    for tail, moved in ((8e8, 0.25), (6e8, 1 / 12)):
        step = [5e8] * 30 + [tail] * 10
        samples = {0: _counters(step, 1e-4), 1: _counters([12e8 - r for r in step], 1e-4)}
        assert moving_stake(samples[0], 6e8, 1e-4, 0.05) == pytest.approx(moved * 6e8 * 20e-4, rel=1e-3)
        small = judge(samples, 1e-4, 10, 0.05, 0.15, paths, capacity, sizes={0: 10**7, 1: 10**7}, budget=0.005)
        assert small.limit is Limit.UNFAIR and small.flow == 0, small.reason
        large = judge(samples, 1e-4, 10, 0.05, 0.15, paths, capacity, sizes={0: 10**9, 1: 10**9}, budget=0.005)
        assert large.steady, large.reason
    held = _counters([5e8] * 40, 1e-4)  # off its share, and holding there: judged by fairness
    assert moving_stake(held, 6e8, 1e-4, 0.05) == float("inf")


def test_a_tcp_flow_that_sends_more_than_it_delivers_is_filling_a_queue():
    """Slow start into a queue that marks nothing: delivery steady, the window (and the queue) doubling."""
    paths, capacity = _two_flows_on_one_link()
    delivered = {0: _counters([6e8] * 10), 1: _counters([6e8] * 10)}
    sent = {0: _counters([9e8] * 10), 1: _counters([6e8] * 10)}
    verdict = judge(delivered, 1e-3, 10, 0.05, 0.15, paths, capacity, sent=sent)
    assert verdict.limit is Limit.FILLING_OR_DRAINING and verdict.flow == 0
    assert verdict.reason.startswith(
        "flow 0's bytes in flight grew by 30.0% of what it delivered over the window (>= 5%)")
    assert judge(delivered, 1e-3, 10, 0.05, 0.15, paths, capacity, sent=delivered).steady
    unknown = {0: np.zeros(11, dtype=np.int64), 1: np.zeros(11, dtype=np.int64)}  # a sender that cannot tell
    assert judge(delivered, 1e-3, 10, 0.05, 0.15, paths, capacity, sent=unknown).steady


def test_a_flow_whose_window_is_not_yet_held_by_congestion_signals_is_not_steady():
    """Delivery steady, shares fair, sent as delivered: a flow's signals and window say whether it cycles.

    Flow 0 is cut at every signal with no rise in between (the cuts that end slow start, the first
    marks after a ramp), has cycled once only, or met no signal while its window grows: into its
    queue, or, held by its receiver's window, as ns-3 grows it anyway (seed1-0015's flow, 552 to
    some 4,100 segments over a skip, 90 in flight). A window that holds with no signal is held.
    """
    paths, capacity = _two_flows_on_one_link()
    delivered = {0: _counters([6e8] * 10), 1: _counters([6e8] * 10)}
    held = {f: np.full(11, 64_000, dtype=np.int64) for f in (0, 1)}
    sawtooth = np.array([90, 80, 84, 88, 79, 83, 87, 78, 82, 86, 90], dtype=np.int64) * 1448
    cut_at_each_fall = np.array([0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3], dtype=np.int64)
    quiet = np.zeros(11, dtype=np.int64)

    def verdict(windows, signals, cycles=2):
        return judge(delivered, 1e-3, 10, 0.05, 0.15, paths, capacity, sent=delivered, windows=windows,
                     signals=signals, cycles=cycles)

    assert verdict({**held, 0: sawtooth}, {0: cut_at_each_fall, 1: quiet}).steady  # two cycles; flow 1 held
    once = np.array([0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1], dtype=np.int64)  # the third cut only: one cycle
    single = verdict({**held, 0: sawtooth}, {0: cut_at_each_fall - once, 1: quiet})
    assert single.limit is Limit.CYCLE_UNSEEN and single.flow == 0
    assert single.reason == ("flow 0's history holds 1 whole congestion cycle(s) (a signal, its window rising, "
                             "a signal again) since its last change, not 2: it may still be a transient's")
    ramp_then_cuts = {**held, 0: np.array([80, 81, 82, 83, 84, 85, 86, 87, 85, 83, 81], dtype=np.int64) * 1448}
    phase = verdict(ramp_then_cuts, {0: np.array([0] * 8 + [1, 2, 3], dtype=np.int64), 1: quiet})
    assert phase.limit is Limit.CYCLE_UNSEEN and phase.reason.startswith("flow 0's history holds 0 whole")

    growing = {**held, 0: 64_000 + 1448 * np.arange(11, dtype=np.int64)}
    unseen = verdict(growing, {0: quiet, 1: quiet})
    assert unseen.limit is Limit.CYCLE_UNSEEN and unseen.flow == 0
    assert unseen.reason == ("flow 0 met no congestion signal since its last change and its congestion window "
                             "grew by 14480 B over the window: nothing holds it yet")
    assert verdict(growing, {1: quiet}).steady  # flow 0 cannot tell its signals: left out
    assert verdict(growing, {0: quiet, 1: quiet}, cycles=0).steady  # --congestion-cycles 0: rates alone


def test_a_flow_settling_slowly_within_the_fairness_bound_is_held_to_the_budget():
    """A 100 MB flow 10% above its share after 40 ms of settling owes more than the window shows."""
    paths, capacity = _two_flows_on_one_link()
    period = 2.5e-4
    samples, share = _converging_pair(161, gap0=0.5, tau=25e-3, period=period)
    window_gap = samples[0][-1] - samples[0][-11]
    assert abs(window_gap / (10 * period) - share) / share < 0.15  # within fairness over the window
    small = judge(samples, period, 10, 0.05, 0.15, paths, capacity, sizes={0: 10**8, 1: 10**8}, budget=0.005)
    assert small.limit is Limit.UNFAIR and small.flow == 0
    assert "converging" in small.reason and "owed > 0.50%" in small.reason
    large = judge(samples, period, 10, 0.05, 0.15, paths, capacity, sizes={0: 10**10, 1: 10**10}, budget=0.005)
    assert large.steady and "converging, flow" in large.reason


def test_a_window_that_grows_with_time_is_steady_only_at_a_full_bottleneck():
    """ns3-tcp-cubic's capacity increase: Cubic on its plateau at 13% of the link holds its rate until its
    cubic function climbs away from it; the same samples of another flow are judged by themselves."""
    paths, capacity = _two_flows_on_one_link()
    paths = {0: paths[0]}

    def verdict(share, time_grown):
        samples = {0: _counters([share * 10 * GBPS] * 10)}
        return judge(samples, 1e-3, 10, theta=0.05, fairness=0.05, paths=paths, capacity=capacity,
                     time_grown=time_grown)

    below = verdict(0.13, frozenset({0}))
    assert below.limit is Limit.BELOW_CAPACITY and below.flow == 0
    assert "carries 13% of its capacity" in below.detail
    assert verdict(0.13, frozenset()).steady
    assert verdict(0.91, frozenset({0})).steady  # 536-byte segments fill a link at 91% payload


def test_a_joiner_whose_second_half_reached_the_noise_floor_still_owes_its_approach():
    """Recorded: round 3 of ``tests/scripts/transient_repeats.py``, which ``main`` skipped for 65.4 ms.

    The 60 MB joiner was 44% under its share over the first half of its history and 4.9% under it
    over the second, within the noise floor (theta), which made it owe nothing: its shares were
    credited while plain ns-3's joiner rose on past its share to 13% over it, and it ended 4.6% late.
    Its approach owes what its pace says.
    """
    recorded = json.loads((Path(__file__).parent / "data" / "transient_repeats_round3.json").read_text())
    config = AcceleratorConfig()

    def per_flow(name, dtype=np.int64):
        return {int(f): np.array(v, dtype=dtype) for f, v in recorded[name].items()}

    samples = per_flow("delivered")
    paths = {int(f): frozenset(links) for f, links in recorded["paths"].items()}
    capacity = {int(link): rate for link, rate in recorded["capacity"].items()}
    verdict = judge(samples, recorded["period"], config.window, config.theta, config.fairness, paths, capacity,
                    sizes={int(f): size for f, size in recorded["sizes"].items()}, budget=config.convergence_budget,
                    min_window=config.min_window, sent=per_flow("sent"), windows=per_flow("windows"),
                    signals=per_flow("signals"), cycles=config.congestion_cycles)
    share = sum(verdict.measured.values()) / 3  # the joiner's credited share: a third of the window's aggregate
    first, second, _ = distance_by_halves(samples[8], share, recorded["period"])
    assert first / share < -0.4 and -config.theta < second / share < 0  # what main took as settled
    assert verdict.limit is Limit.UNFAIR and verdict.flow == 8, verdict.reason
    owed = converging_stake(samples[8], share, recorded["period"], config.theta) / recorded["sizes"]["8"]
    assert owed == pytest.approx(0.0179, abs=5e-4)  # of its bytes, against a budget of 0.5%
