"""The flows created and not yet sending: when they start, and which links they will load.

A skip must end before the next flow that will load one of its links starts
(``next_on``), and no partition may skip while a flow that started is still
connecting over its links (``connecting_on``). Both questions are about flows
the partitions do not hold yet; this object keeps them, in start order.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field

from wormhole_ns3.accel.network import Network
from wormhole_ns3.core.ports import CreatedFlow, Creation
from wormhole_ns3.runtime.boundary import created_flows, planned_route

#: How far ahead a workload is asked what it may release (a partition's flows of unknown size never end).
MAX_HORIZON_S = 1e3


@dataclass
class Arrivals:
    """The run's flows to come, learnt as the events that create them run."""

    network: Network
    #: The links each flow created while attached will load; None until asked for (``planned_links``).
    _planned: dict[int, frozenset[int] | None] = field(default_factory=dict)
    #: (start, flow) of flows created and not started, in start order; started ones are
    #: skipped where read, and those whose start is past are dropped at the next creation
    _arrivals: list[tuple[float, int]] = field(default_factory=list)
    #: Flows looked at so far (the tracker numbers them in discovery order).
    _known_flows: int = 0

    def none_new(self) -> bool:
        """Whether the tracker discovered no flow since ``take_created`` was last asked."""
        return int(self.network.tracker.GetNFlows()) == self._known_flows

    def take_created(self, gate: bool) -> Creation:
        """The flows the tracker discovered since last asked (then they are known), and the event that made them.

        One crossing for all of them (FlowTracker::TakeCreatedFlows); with ``gate``, the
        pending ones have their starts gated for the memo as they are read.
        """
        created = created_flows(self.network.tracker.TakeCreatedFlows(self._known_flows, gate))
        self._known_flows += len(created.flows)
        return created

    def expect(self, flow: CreatedFlow) -> tuple[float, int]:
        """A created flow that has not started: (its start time, it), its route read when first needed."""
        self._planned[flow.flow] = None
        return flow.start_s, flow.flow

    def is_expected(self, flow: int) -> bool:
        return flow in self._planned

    def add(self, pending: Iterable[tuple[float, int]]) -> None:
        """List these arrivals; drop those whose start is past, unless they still connect."""
        # kept sorted by insertion: rebuilt at every creation, it cost moe-8x7b-64g 1.4 s of 70;
        # a started flow stays listed while it connects (``connecting_on``)
        started = bisect.bisect_left(self._arrivals, (self.network.now(), -1))
        self._arrivals[:started] = [a for a in self._arrivals[:started] if self._connecting(a[1])]
        for arrival in pending:
            bisect.insort(self._arrivals, arrival)

    def planned_links(self, flow: int) -> frozenset[int]:
        """The links a created flow will load, read from the tracker when first asked for.

        Not at its creation: most flows the memo gates are replayed and never start,
        and their route walks were 1.2 s of moe-8x7b-64g-dcqcn's Run(). Read when it
        starts, or when a skip asks for the next arrival on its links, the route is
        the routing tables' at that time, when it matters.
        """
        planned = self._planned[flow]
        if planned is None:
            data, ack = planned_route(self.network.tracker, flow)
            planned = self._planned[flow] = frozenset(data) | frozenset(ack)
        return planned

    def next_on(self, links: frozenset[int], now: float) -> float:
        """The start time of the next flow that will load one of these links."""
        for start, flow in self._arrivals:
            if start < now or flow in self.network.flows:
                continue
            planned = self.planned_links(flow)
            if not planned or planned & links:
                return start
        return float("inf")

    def release_on(self, links: frozenset[int], now: float, until: float) -> float:
        """The earliest a workload may release a flow onto these links before ``until`` (inf if none may).

        ``next_on`` knows the flows created so far; a workload (FlowDag) creates
        the next ones as compute ends and flows arrive. Its oracle answers with
        a lower bound: every running flow taken to end now, every flow to come to
        end as it starts (FlowTracker::GetEarliestReleaseOn). A flow released
        there before the partition's flows end is due on its links as surely as
        a created one, as far as a skip can tell.
        """
        if until <= now:
            return float("inf")
        horizon = min(until - now, MAX_HORIZON_S)
        earliest = self.network.tracker.GetEarliestReleaseOn(
            sorted(links), self.network.ns3.NanoSeconds(int(horizon * 1e9))).GetSeconds()
        return earliest if earliest <= now + horizon else float("inf")

    def _connecting(self, flow: int) -> bool:
        """Whether a flow started and sends no data yet (FlowTracker::IsConnecting), its handshake on its links."""
        return flow not in self.network.flows and bool(self.network.tracker.IsConnecting(flow))

    def connecting_on(self, links: frozenset[int], now: float) -> int | None:
        """A flow connecting over these links, if one is: none of them may be skipped until it sends.

        Its handshake's packets wait in the links' queues among the partition's
        packets, whose events a skip moves with them: the connection would
        complete only when the skip ends, while the partition is credited the
        share of the links the newcomer takes in plain ns-3 from its first data
        packet. It is no member of the partition (it has sent nothing to judge),
        and no arrival to come (it started): it is the partition's next change,
        already under way.
        """
        for start, flow in self._arrivals:
            if start > now:
                break
            if self._connecting(flow):
                planned = self.planned_links(flow)
                if not planned or planned & links:
                    return flow
        return None
