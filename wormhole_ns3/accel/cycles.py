"""Whole congestion cycles: how far a skip of flows whose window grows with time (Cubic) may go.

In steady state Cubic's window is periodic: cut at a congestion signal, it
climbs its cubic function back toward (and past) the window it was cut at,
until the next signal, one period T later. A skip moves the flow's clocks with
it (``BulkSendFlow::ShiftTimes``: its epoch's start, HyStart's round), so the
flow resumes at the point of its cycle where it paused: its window, W_max and
the time since its last reduction are those of the skip's start. Plain ns-3's
flow is at that point again only after whole cycles, so a skip of k T, started
at any phase, leaves the flow where plain ns-3's is, up to the cycle's jitter
and the error of T measured from samples; a skip of any other length leaves it
behind or ahead by the rest of a cycle, which a script reading the window
against time after an event of its own sees (ns-3's ns3-tcp-cubic suite's
capacity step). Without the clock shift the skipped time would count as time
since the last reduction, and the window would resume on its cubic function k T
further on, far past W_max.

``measure`` finds each flow's period from its sample history (the instants
its congestion signals began cycles), and refuses a flow whose last cycles
differ by more than the jitter allowed: its window is not yet periodic.
``cut`` shortens a planned skip to the longest length that is a whole number
of every such flow's periods within ``PHASE_TOLERANCE`` of a cycle, counting
the period's own error (one sample period over the cycles measured, per cycle
skipped). The rates credited stay the verdict's (fair shares times the window's
efficiency): at the full bottleneck a Cubic partition is judged at, they are the
link's payload rate, while what a flow's sink counted between two of its signals
is biased by the out-of-order bytes it held at each (doc/changelog.md, "Cubic
skipped by default, in whole congestion cycles").
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

#: How far apart (as a share of their mean) a flow's last cycles may be to count as one period
#: repeating; at least two sample periods are allowed, the error of a cycle's length measured
#: between two quantized signals.
CYCLE_JITTER = 0.125

#: How far from plain ns-3's (as a share of its period) a skip may leave a flow's phase: the
#: distance from the skip's length to a whole number of its periods, plus the error of the period
#: measured, times the cycles skipped.
PHASE_TOLERANCE = 0.1

#: Most whole cycles one skip may span, whatever the tolerance allows (bounds the search).
MAX_CYCLES = 1000


@dataclass(frozen=True)
class Cycle:
    """A flow's congestion cycle as its sample history shows it."""

    flow: int
    #: Mean length of its last ``measured`` cycles, s.
    period: float
    #: Whole cycles the period was measured over (the repeating ones at the end of its history).
    measured: int
    #: Error bound of ``period``: one sample period over the cycles measured, s.
    error: float

    def phase_error(self, dt: float) -> tuple[int, float]:
        """Whole cycles nearest ``dt`` (at least 1), and how far from plain ns-3's phase a skip of dt leaves it, s."""
        k = max(1, round(dt / self.period))
        return k, abs(dt - k * self.period) + k * self.error

    def words(self) -> str:
        return f"flow {self.flow} every {self.period * 1e3:.0f} ms over {self.measured}"


@dataclass(frozen=True)
class Cut:
    """A skip's length cut to whole cycles: ``length`` s, ``cycles`` of the flow that set it."""

    length: float
    cycles: int
    #: The flow whose ``cycles`` periods the length is (the others' phases are within the tolerance).
    flow: int


def cycle_starts(signals: np.ndarray, windows: np.ndarray) -> list[int]:
    """Sample indices at which a flow's cycles began: a congestion signal after its window rose.

    The first signal since its last change begins a cycle too; a signal before
    the window rose again (a loss during a recovery, a timeout after it) is
    part of the cut that began the cycle. As ``steady._whole_cycles``, each
    sampling period counts for one step at most.
    """
    signalled = np.diff(signals.astype(np.int64)) > 0
    rose = np.diff(windows.astype(np.int64)) > 0
    starts, risen = [], True
    for i, (signal, rise) in enumerate(zip(signalled, rose), start=1):
        if signal and risen:
            starts.append(i)
            risen = False
        elif rise and starts:
            risen = True
    return starts


def measure(flow: int, signals: np.ndarray, windows: np.ndarray, period: float, needed: int) -> Cycle | str:
    """The flow's period from its samples, or why it has none yet (the skip trace's words).

    ``signals`` and ``windows`` are the flow's samples, every
    ``period`` s since its partition's last change; ``needed`` whole cycles at
    least must repeat. The period is measured over the longest run of cycles
    at the end of the history that agree within ``CYCLE_JITTER``.
    """
    starts = cycle_starts(signals, windows)
    lengths = np.diff(starts).astype(np.float64)
    needed = max(1, needed)
    if len(lengths) < needed:
        return f"flow {flow}'s history holds {len(lengths)} whole cycle(s), not {needed}: its period is unmeasured"
    taken = 0
    for m in range(needed, len(lengths) + 1):
        last = lengths[-m:]
        if np.abs(last - last.mean()).max() > max(2.0, CYCLE_JITTER * last.mean()):
            break
        taken = m
    if taken == 0:
        last = lengths[-needed:]
        return (f"flow {flow}'s last {needed} cycles lasted {', '.join(f'{x * period * 1e3:.0f}' for x in last)} ms: "
                f"more than {CYCLE_JITTER:.1%} apart, its window is not yet periodic")
    first, end = starts[-taken - 1], starts[-1]
    span = (end - first) * period
    return Cycle(flow=flow, period=span / taken, measured=taken, error=period / taken)


def cut(limit: float, cycles: Mapping[int, Cycle]) -> Cut | None:
    """The longest skip no longer than ``limit`` s that leaves every flow within ``PHASE_TOLERANCE`` of its phase.

    Its length is a whole number of one flow's periods; None if no such length
    (of at least one cycle) fits.
    """
    best: Cut | None = None
    for flow in sorted(cycles):
        own = cycles[flow]
        most = math.floor(min(MAX_CYCLES, limit / own.period + 1e-9))  # limit may be infinite
        for k in range(most, 0, -1):
            length = k * own.period
            if best is not None and length <= best.length:
                break
            if all(c.phase_error(length)[1] <= PHASE_TOLERANCE * c.period for c in cycles.values()):
                best = Cut(length=length, cycles=k, flow=flow)
                break
    return best
