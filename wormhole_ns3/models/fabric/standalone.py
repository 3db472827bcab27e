"""A flow's completion time alone on an idle fabric: the "standalone FCT" HPCC's fct.txt reports.

HPCC divides each flow's FCT by it to get the slowdown, so it must be a
positive time of the flow's own path. As in HPCC, it is the path's base RTT
(twice the propagation delay, plus one packet's transmission per hop) plus
the flow's bytes at the path's slowest link. The path is the shortest by
hops that only switches forward (ties: the least delay), the path routing
takes on this fabric.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from dataclasses import dataclass, field

from wormhole_ns3.models.fabric.layout import Layout


@dataclass(frozen=True)
class PathCost:
    hops: int
    delay_s: float  #: one way
    transmit_s: float  #: one packet at every hop
    bottleneck_bps: float


@dataclass
class StandaloneFct:
    """Standalone FCTs by rank pair; paths are computed once per source rank, when first asked."""

    layout: Layout
    packet_bytes: int
    _paths: dict[int, dict[str, PathCost]] = field(default_factory=dict, init=False, repr=False)
    _graph: dict[str, list[tuple[str, float, float]]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._graph = defaultdict(list)
        for link in self.layout.links:
            self._graph[link.a].append((link.b, link.delay_s, link.rate_bps))
            self._graph[link.b].append((link.a, link.delay_s, link.rate_bps))

    def seconds(self, src: int, dst: int, size: int) -> float:
        """The standalone FCT of ``size`` bytes from rank ``src`` to rank ``dst``."""
        if src not in self._paths:
            self._paths[src] = self._from(self.layout.hosts[src])
        path = self._paths[src].get(self.layout.hosts[dst])
        if path is None:
            raise ValueError(f"no path from rank {src} to rank {dst}")
        return 2 * path.delay_s + path.transmit_s + size * 8 / path.bottleneck_bps

    def _from(self, source: str) -> dict[str, PathCost]:
        hosts = set(self.layout.hosts)
        best = {source: PathCost(0, 0.0, 0.0, float("inf"))}
        frontier = [(0, 0.0, source)]
        while frontier:
            hops, delay, node = heapq.heappop(frontier)
            here = best[node]
            if (hops, delay) != (here.hops, here.delay_s) or (node in hosts and node != source):
                continue  # a stale entry, or a host: hosts receive, they do not forward
            for peer, link_delay, rate in self._graph[node]:
                candidate = PathCost(hops + 1, delay + link_delay, here.transmit_s + self.packet_bytes * 8 / rate,
                                     min(here.bottleneck_bps, rate))
                known = best.get(peer)
                if known is None or (candidate.hops, candidate.delay_s) < (known.hops, known.delay_s):
                    best[peer] = candidate
                    heapq.heappush(frontier, (candidate.hops, candidate.delay_s, peer))
        return best
