"""Which flows a flow event leaves alone: those whose max-min share and bottleneck it does not change.

A flow event re-forms the partitions it touches, and a re-formed partition
used to clear the rate samples of all its flows: a partition of 16 flows where
some flow arrives or leaves every 1-2 ms was never judged on more than the last
millisecond, and never showed the whole congestion cycles or the convergence a
judgement asks of every flow (``steady.py``). A flow's rate is set by its
bottleneck: an event that changes neither its max-min rate nor what shares its
congested links (who is on them, at which rates) cannot move it, to first or
second order (a flow elsewhere whose share changes and who shares a congested
link with it changes its rate on that link, so the comparison covers the rates
of everyone on those links, not just its own). Such a flow keeps its samples:
its history still describes it.

A flow's *context* is, after max-min fair progressive filling of its
partition, its rate and every saturated link its data or ACK path crosses with
the rates of the flows whose data or ACKs cross it. Unsaturated links hold no
standing queue in the fluid view, whatever crosses them. The allocation is
computed per partition: partitions share no link, so a partition's max-min
rates are those of the whole network.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass

#: Relative tolerance between two rates of one flow (or a link's load and its capacity):
#: progressive filling sums floats in another order when the partition's flows change.
RATE_TOLERANCE = 1e-9


def water_fill(
    paths: Mapping[int, frozenset[int]],
    capacity: Mapping[int, float],
    demand: Mapping[int, float | None] | None = None,
) -> dict[int, float]:
    """Max-min fair rates by progressive filling, one saturating link (or met demand) at a time.

    The same allocation as ``steady.max_min_fair``, in O((flows x path + links) log links):
    every unfrozen flow is at the same level, and a link saturates at the level where its
    capacity less its frozen flows' rates is spread over its unfrozen ones. Links whose
    levels tie within ``RATE_TOLERANCE`` saturate together. A flow crossing no link
    is given its demand (inf if none).
    """
    demand = demand or {}
    on: dict[int, list[int]] = {}
    for f in sorted(paths):
        for link in paths[f]:
            on.setdefault(link, []).append(f)
    frozen_load = dict.fromkeys(on, 0.0)
    unfrozen = {link: len(fs) for link, fs in on.items()}
    rate: dict[int, float] = {}

    def level(link: int) -> float:
        return (capacity[link] - frozen_load[link]) / unfrozen[link]

    heap = [(level(link), link) for link in on]
    heap += [(float(cap), -1 - f) for f in paths if (cap := demand.get(f)) is not None]
    heapq.heapify(heap)
    while heap:
        top, key = heapq.heappop(heap)
        if key >= 0 and (not unfrozen[key] or abs(level(key) - top) > RATE_TOLERANCE * max(abs(top), 1.0)):
            if unfrozen[key]:
                heapq.heappush(heap, (level(key), key))  # a stale level: put back at the current one
            continue
        if key < 0 and (-1 - key) in rate:
            continue
        top = max(top, 0.0)
        freezing = on[key] if key >= 0 else [-1 - key]
        for f in freezing:
            if f in rate:
                continue
            rate[f] = top
            for link in paths[f]:
                frozen_load[link] += top
                unfrozen[link] -= 1
    for f in paths:
        if f not in rate:
            rate[f] = float(demand.get(f) or float("inf"))
    return rate


@dataclass(frozen=True)
class FlowContext:
    """What sets a flow's rate: its max-min rate and who loads the saturated links it crosses."""

    rate: float
    #: Each saturated link of the flow's data or ACK path, with the max-min rate of every flow
    #: whose data (``(flow, False)``) or ACKs (``(flow, True)``: they queue behind its data) cross it.
    congested: Mapping[int, Mapping[tuple[int, bool], float]]

    def same_as(self, other: FlowContext) -> bool:
        """Whether an event between the two left this flow's rate and its congested links as they were."""
        if not _close(self.rate, other.rate) or self.congested.keys() != other.congested.keys():
            return False
        for link, flows in self.congested.items():
            before = other.congested[link]
            if flows.keys() != before.keys() or not all(_close(r, before[f]) for f, r in flows.items()):
                return False
        return True


def contexts(
    paths: Mapping[int, frozenset[int]],
    reverse: Mapping[int, frozenset[int]],
    capacity: Mapping[int, float],
    demand: Mapping[int, float | None] | None = None,
) -> dict[int, FlowContext]:
    """Each flow's context in a partition: ``paths`` its data links, ``reverse`` its ACK links.

    ``capacity`` covers every link of both (bytes/s). A flow with no known path gets
    none: it contends with anything, and nothing says an event left it alone.
    """
    known = {f: links for f, links in paths.items() if links}
    rate = water_fill(known, capacity, demand)
    load: dict[int, float] = {}
    on: dict[int, dict[tuple[int, bool], float]] = {}
    for f in sorted(known):
        for link in known[f]:
            load[link] = load.get(link, 0.0) + rate[f]
            on.setdefault(link, {})[(f, False)] = rate[f]
        for link in reverse.get(f, frozenset()):
            on.setdefault(link, {})[(f, True)] = rate[f]
    saturated = {link for link, total in load.items() if total >= capacity[link] * (1 - RATE_TOLERANCE)}
    crossed = {f: (known[f] | reverse.get(f, frozenset())) & saturated for f in known}
    return {f: FlowContext(rate[f], {link: on[link] for link in sorted(crossed[f])}) for f in known}


def undisturbed(before: Mapping[int, FlowContext], after: Mapping[int, FlowContext]) -> frozenset[int]:
    """The flows present in both whose context an event left unchanged: their samples still describe them."""
    return frozenset(f for f, now in after.items() if f in before and now.same_as(before[f]))


def _close(a: float, b: float) -> bool:
    return a == b or abs(a - b) <= RATE_TOLERANCE * max(abs(a), abs(b))
