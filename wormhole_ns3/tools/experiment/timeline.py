"""Where an accelerated run spent its events: by what the workload had running at the time.

An events ratio says how many events a run kept, not where. The simulator marks
how many events had run by a few hundred instants of simulated time
(``WormholeSimulatorImpl::GetEventTimeline``); each stretch between two marks is
charged to the phases (forward, backward, grad-sync, ...) that had a flow running
in it. On a MoE iteration that shows, for instance, that most events that are left
fall where the backward all-to-alls overlap the gradient all-reduce.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: The label of a stretch of simulated time with no flow running (compute, timers, the end).
NO_FLOW = "no flow running"
#: The label of a flow whose workload names no phase (a plain script's flows).
UNNAMED_PHASE = "flows"


def events_by_activity(timeline: Sequence[Sequence[float]], flows) -> dict[str, float]:
    """Share of the run's events executed while each combination of phases had flows running.

    ``timeline`` is the run's ``event_timeline`` (simulated time, events executed
    before it), ascending, its last entry the run's end and total; ``flows`` a
    table with ``start``, ``finish`` and ``phase`` columns (a flow that did not
    finish runs to the end). A stretch is charged to every phase with a flow
    running in it, joined with " + " in name order. Shares are ordered largest
    first and sum to 1; empty if the run executed no event.
    """
    times = np.array([t for t, _ in timeline], dtype=np.float64)
    counts = np.array([n for _, n in timeline], dtype=np.float64)
    executed = np.diff(counts)
    total = counts[-1] - counts[0]  # what the stretches hold, and so what the shares divide
    if total <= 0:
        return {}
    phases = flows["phase"].fillna("").astype(str).replace("", UNNAMED_PHASE)
    running = {}
    for phase in sorted(set(phases)):
        of_phase = flows[phases == phase]
        running[phase] = _running(of_phase["start"].to_numpy(dtype=np.float64),
                                  of_phase["finish"].to_numpy(dtype=np.float64), times[:-1], times[1:])
    shares: dict[str, float] = {}
    for i in np.flatnonzero(executed):
        label = " + ".join(phase for phase in running if running[phase][i]) or NO_FLOW
        shares[label] = shares.get(label, 0.0) + executed[i]
    return {label: float(events / total) for label, events in sorted(shares.items(), key=lambda kv: (-kv[1], kv[0]))}


def _running(starts: np.ndarray, finishes: np.ndarray, begin: np.ndarray, end: np.ndarray) -> np.ndarray:
    """For each stretch [begin, end), whether one of these flows ran in it.

    Ran: started before the stretch ends, finished after it begins (the latest
    finish among the flows started by then tells).
    """
    if len(starts) == 0:
        return np.zeros(len(begin), dtype=bool)
    order = np.argsort(starts, kind="stable")
    latest_finish = np.maximum.accumulate(np.nan_to_num(finishes[order], nan=np.inf))
    started = np.searchsorted(starts[order], end, side="left")
    return (started > 0) & (latest_finish[np.maximum(started - 1, 0)] > begin)


def activity_line(summary: dict, largest: int = 3) -> str:
    """A summary's ``events_by_activity`` in words: its largest shares, then the rest (if 1% or more)."""
    shares = list(summary["events_by_activity"].items())
    words = [f"{share:.0%} {label}" for label, share in shares[:largest]]
    rest = sum(share for _, share in shares[largest:])
    if rest >= 0.005:  # what would print as 0% is left unsaid
        words.append(f"{rest:.0%} other")
    return ", ".join(words)
