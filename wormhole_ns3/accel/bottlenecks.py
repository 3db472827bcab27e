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

from collections.abc import Mapping
from dataclasses import dataclass

from wormhole_ns3.accel.steady import max_min_fair

#: Relative tolerance between two rates of one flow (or a link's load and its capacity):
#: progressive filling sums floats in another order when the partition's flows change.
RATE_TOLERANCE = 1e-9


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
    rate = max_min_fair(known, capacity, demand)
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
