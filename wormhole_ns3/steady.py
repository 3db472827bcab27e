"""Decide whether a partition holds a steady state, and at which rates.

The Wormhole paper calls a flow steady when (max - min) / mean of its last l
rate samples is below theta. With TCP that rule almost never fires: per-flow
delivery is bursty at any sampling period short enough to be useful, while the
aggregate of the flows sharing a bottleneck is very stable. So a partition is
steady when

* its aggregate delivery rate varies by less than theta over the window, and
* every flow's mean rate over the window is within ``fairness`` of its
  max-min fair share (TCP is unfair for tens of ms after an arrival; skipping
  then would freeze the unfairness and bias the flow completion times).

The rates credited during a skip are the max-min fair shares, scaled by the
goodput efficiency the window measured (headers, ACK clocking, marking).

A flow that delivered (almost) nothing in the window is *idle*: a TCP flow
stalled on its own timer (a retransmission timeout, a delayed ACK at cwnd 1).
It does not take a share; it is credited nothing and the controller keeps its
events in real time, ending the skip when it wakes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Verdict:
    """The outcome of judging one window of a partition."""

    steady: bool
    reason: str
    #: Spread (max - min) / mean of the aggregate rate over the window.
    spread: float = float("nan")
    #: Largest |measured - credited| / credited over the flows.
    unfairness: float = float("nan")
    #: Measured mean rate of each flow over the window, bytes/s.
    measured: Mapping[int, float] = field(default_factory=dict)
    #: Rate to credit each flow while skipping, bytes/s.
    rates: Mapping[int, float] = field(default_factory=dict)
    #: Flows that delivered (almost) nothing in the window.
    idle: frozenset[int] = frozenset()


def max_min_fair(
    paths: Mapping[int, frozenset[int]],
    capacity: Mapping[int, float],
    demand: Mapping[int, float | None] | None = None,
) -> dict[int, float]:
    """Max-min fair rates by progressive filling.

    ``paths`` maps flows to the links they load, ``capacity`` links to their
    rate, ``demand`` flows to a rate cap (None: unlimited). Every flow's rate
    grows at the same pace until a link saturates or its demand is met.
    """
    demand = demand or {}
    rate = {f: 0.0 for f in paths}
    frozen: set[int] = set()
    residual = dict(capacity)
    while len(frozen) < len(rate):
        growing = [f for f in rate if f not in frozen]
        users = {
            link: [f for f in growing if link in paths[f]] for link in residual
        }
        increments = [residual[link] / len(fs) for link, fs in users.items() if fs]
        increments += [
            demand[f] - rate[f] for f in growing if demand.get(f) is not None
        ]
        if not increments:  # flows crossing no capacity-limited link
            for f in growing:
                rate[f] = float(demand.get(f) or float("inf"))
            break
        step = max(min(increments), 0.0)
        for f in growing:
            rate[f] += step
        for link, fs in users.items():
            residual[link] -= step * len(fs)
        for f in growing:
            saturated = any(
                residual[link] <= 1e-9 * capacity[link] for link in paths[f] if link in residual
            )
            met = demand.get(f) is not None and rate[f] >= demand[f] - 1e-12
            if saturated or met:
                frozen.add(f)
    return rate


def window_rates(samples: np.ndarray, period: float) -> np.ndarray:
    """Rates (bytes/s) between consecutive delivered-bytes samples."""
    return np.diff(samples.astype(np.float64)) / period


def judge(
    samples: Mapping[int, np.ndarray],
    period: float,
    window: int,
    theta: float,
    fairness: float,
    paths: Mapping[int, frozenset[int]],
    capacity: Mapping[int, float],
    demand: Mapping[int, float | None] | None = None,
    idle_share: float = 0.0,
) -> Verdict:
    """Judge the last ``window`` sampling periods of a partition.

    ``samples`` maps each flow to its delivered-bytes counter sampled every
    ``period`` seconds (oldest first, all taken at the same instants).
    """
    if any(len(s) < window + 1 for s in samples.values()):
        return Verdict(False, "window not full")
    rates = {f: window_rates(s[-(window + 1) :], period) for f, s in samples.items()}
    aggregate = np.sum(list(rates.values()), axis=0)
    mean = float(aggregate.mean())
    if mean <= 0:
        return Verdict(False, "no progress in window")
    spread = float((aggregate.max() - aggregate.min()) / mean)
    measured = {f: float(r.mean()) for f, r in rates.items()}
    if spread >= theta:
        return Verdict(False, f"aggregate spread {spread:.1%} >= {theta:.0%}", spread, measured=measured)

    demand = dict(demand or {})
    fair = max_min_fair(paths, capacity, demand)
    idle = frozenset(f for f in fair if measured[f] < idle_share * fair[f])
    if idle == frozenset(fair):
        return Verdict(False, "every flow idle", spread, measured=measured)
    if idle:
        demand.update({f: measured[f] for f in idle})
        fair = max_min_fair(paths, capacity, demand)
    limited = {
        f for f in fair if f not in idle and (demand.get(f) is None or fair[f] < demand[f] - 1e-9)
    }
    nominal = sum(fair[f] for f in limited)
    efficiency = sum(measured[f] for f in limited) / nominal if nominal > 0 else 1.0
    credited = {f: (fair[f] * efficiency if f in limited else measured[f]) for f in fair}
    active = [f for f in credited if f not in idle]
    unfairness = max(
        abs(measured[f] - credited[f]) / credited[f] if credited[f] > 0 else float("inf")
        for f in active
    )
    if unfairness > fairness:
        worst = max(active, key=lambda f: abs(measured[f] - credited[f]) / max(credited[f], 1e-9))
        return Verdict(
            False,
            f"flow {worst} at {unfairness:.1%} from its fair share (> {fairness:.0%})",
            spread,
            unfairness,
            measured,
        )
    idle_note = f", idle {' '.join(map(str, sorted(idle)))}" if idle else ""
    return Verdict(
        True,
        f"aggregate spread {spread:.1%} < {theta:.0%}, shares within {unfairness:.1%} of fair"
        + idle_note,
        spread,
        unfairness,
        measured,
        credited,
        idle,
    )
