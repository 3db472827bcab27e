"""Plan a fast-forward of one steady partition: how far, and what each flow is credited.

A skip of dt moves every pending event of the partition dt later and credits
each flow rate * dt bytes. It must end

* before any unattributed event (an application stop, a user callback,
  Simulator::Stop): such an event may observe or change any flow;
* before the next start of a flow whose route crosses the partition's links;
* a tail before the earliest flow completion, so every flow ends with real
  packets, and before a sender runs out of bytes it could give up;
* at the configured horizon.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from wormhole_ns3.core.vocabulary import Label


class SkipEnd(Label):
    """What ends a skip: a bound no skip may cross, a flow's tail, or the horizon."""

    UNATTRIBUTED_EVENT = "unattributed event"
    FLOW_ARRIVAL = "flow arrival"
    RATES_SEEN_TO_HOLD = "rates seen to hold"
    IDLE_FLOW_WAKES = "idle flow wakes"
    #: A flow's last ``tail`` of bytes (the trace says which: "flow N tail").
    FLOW_TAIL = "tail"
    HORIZON = "horizon"
    NO_BOUND = "no bound"
    #: Cut short to whole congestion cycles of flows whose window grows with time (``cycles.py``).
    WHOLE_CYCLES = "whole cycles"


@dataclass(frozen=True)
class FlowProgress:
    """What the planner needs to know of one flow at the skip start."""

    remaining: int | None  #: bytes the sink still lacks; None for unlimited flows
    sendable: int  #: bytes the sender could still give up (not yet on the wire)


@dataclass(frozen=True)
class SkipPlan:
    start: float
    duration: float
    credits: Mapping[int, int]
    #: What ended the skip.
    end: SkipEnd
    #: The flow whose tail ended it (``end`` is FLOW_TAIL).
    tail_flow: int | None = None
    #: Whole congestion cycles it spans, of flows whose window grows with time (0: not cut to cycles).
    cycles: int = 0

    @property
    def limit(self) -> str:
        """What ended the skip in words, as the trace prints it: a bound's name, "flow N tail", ..."""
        if self.end is SkipEnd.FLOW_TAIL:
            return f"flow {self.tail_flow} tail"
        return self.end.value


def plan_skip(
    now: float,
    rates: Mapping[int, float],
    progress: Mapping[int, FlowProgress],
    bounds: Mapping[SkipEnd, float],
    tail: float,
    min_skip: float,
    max_skip: float | None = None,
) -> SkipPlan | None:
    """Return the longest safe skip from ``now``, or None if it would be shorter than ``min_skip``.

    ``bounds`` are times no skip may cross (SkipEnd.UNATTRIBUTED_EVENT,
    SkipEnd.FLOW_ARRIVAL, ...); the one that ends the skip is its ``end``.
    """
    end, limit, tail_flow = float("inf"), SkipEnd.NO_BOUND, None
    for name in sorted(bounds):
        if bounds[name] < end:
            end, limit = bounds[name], name
    if max_skip is not None and now + max_skip < end:
        end, limit = now + max_skip, SkipEnd.HORIZON
    for flow in sorted(rates):
        rate = rates[flow]
        if rate <= 0:
            continue
        reserve = rate * tail
        p = progress[flow]
        budget = p.sendable if p.remaining is None else min(p.sendable, p.remaining)
        flow_end = now + (budget - reserve) / rate
        if flow_end < end:
            end, limit, tail_flow = flow_end, SkipEnd.FLOW_TAIL, flow
    duration = end - now
    if duration < min_skip:
        return None
    credits = {flow: int(rates[flow] * duration) for flow in sorted(rates)}
    return SkipPlan(start=now, duration=duration, credits=credits, end=limit, tail_flow=tail_flow)
