"""Whole congestion cycles (accel/cycles.py): a Cubic flow's period from its samples, and skips cut to it."""

import numpy as np
import pytest

from wormhole_ns3.accel.cycles import PHASE_TOLERANCE, Cycle, cut, cycle_starts, measure

PERIOD = 0.025  # s between samples


def sawtooth(starts: list[int], length: int) -> tuple[np.ndarray, np.ndarray]:
    """Samples of a flow cut at each of ``starts`` (a signal, its window halved) and rising in between."""
    signals, windows = [], []
    count, window = 0, 100
    for i in range(length):
        if i in starts:
            count, window = count + 1, window // 2
        else:
            window += 2
        signals.append(count)
        windows.append(window)
    return np.array(signals), np.array(windows)


def test_cycles_begin_at_a_signal_after_a_rise_and_a_recovery_s_second_loss_is_no_new_cycle():
    signals, windows = sawtooth([5, 37, 69], 90)
    assert cycle_starts(signals, windows) == [5, 37, 69]
    # a second signal while the window has not risen again is the same cut
    signals[38:] += 1
    windows[38] = windows[37]
    assert cycle_starts(signals, windows) == [5, 37, 69]


def test_the_period_is_measured_over_the_repeating_cycles_at_the_end():
    # a short first cycle (slow start's exit), then cycles of 32 samples
    signals, windows = sawtooth([5, 12, 44, 76, 108], 120)
    cycle = measure(3, signals, windows, PERIOD, needed=2)
    assert isinstance(cycle, Cycle)
    assert cycle.measured == 3 and cycle.period == pytest.approx(32 * PERIOD)
    assert cycle.error == pytest.approx(PERIOD / 3)


def test_cycles_too_few_or_not_repeating_give_no_period():
    signals, windows = sawtooth([5, 37], 50)
    assert "holds 1 whole cycle(s), not 2" in measure(0, signals, windows, PERIOD, needed=2)
    signals, windows = sawtooth([5, 37, 49, 90], 100)
    assert "not yet periodic" in measure(0, signals, windows, PERIOD, needed=2)


def test_a_skip_is_cut_to_whole_cycles_within_the_phase_tolerance_of_every_flow():
    fast = Cycle(flow=0, period=0.8, measured=2, error=0.0125)
    assert cut(0.79, {0: fast}) is None  # no whole cycle fits
    one = cut(2.5, {0: fast})
    assert one is not None and one.cycles == 3 and one.length == pytest.approx(2.4)
    # the period's error grows with each cycle: at most PHASE_TOLERANCE of one is allowed
    longest = cut(100.0, {0: fast})
    assert longest is not None and longest.cycles == int(PHASE_TOLERANCE * 0.8 / 0.0125)
    assert cut(float("inf"), {0: fast}) == longest  # unlimited flows and nothing due: the tolerance bounds it
    # a second flow of another period: the length is a whole number of both, within the tolerance
    slow = Cycle(flow=1, period=1.0, measured=2, error=0.0)
    both = cut(4.5, {0: fast, 1: slow})
    assert both is not None and both.length == pytest.approx(4.0)
    assert all(c.phase_error(both.length)[1] <= PHASE_TOLERANCE * c.period for c in (fast, slow))
