"""From a spec to named nodes and links, in plain Python.

The layout is everything the ns-3 builder needs and everything a report
needs: host names in rank order, switch names, and links with their rate,
delay and tier. Keeping it free of ns-3 makes the shape of a fabric cheap to
check and to print, and the build a mechanical walk over it.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from dataclasses import dataclass
from functools import singledispatch

from wormhole_ns3.models.fabric.specs import FatTree, HpccTopologyFile, LeafSpine, RailOptimized

GBPS = 1e9
US = 1e-6


@dataclass(frozen=True)
class Link:
    """A point-to-point link between nodes ``a`` and ``b`` (names)."""

    a: str
    b: str
    rate_bps: int
    delay_s: float
    tier: str  #: e.g. "host-leaf", "leaf-spine", "edge-agg", "agg-core", "host-switch"
    error_rate: float = 0.0  #: probability that a packet is lost, per direction


@dataclass(frozen=True)
class Layout:
    hosts: tuple[str, ...]  #: in rank order
    switches: tuple[str, ...]
    links: tuple[Link, ...]

    def base_rtt_s(self, packet_bytes: int) -> float:
        """The longest round-trip time between two hosts on an idle fabric.

        Shortest paths by round-trip cost: each link adds its delay twice
        and the transmission time of one packet (ACKs are taken as free).
        A host is reached through its first network link: NVLink only
        shortens paths inside a server, never the longest one, so it is
        left out unless there is nothing else.
        """
        network = [link for link in self.links if link.tier != "nvlink"] or list(self.links)
        cost = {link: 2 * link.delay_s + packet_bytes * 8 / link.rate_bps for link in network}
        hosts = set(self.hosts)
        attach: dict[str, tuple[str, float]] = {}
        graph: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for link in network:
            for near, far in ((link.a, link.b), (link.b, link.a)):
                if near in hosts:
                    attach.setdefault(near, (far, cost[link]))
                elif far not in hosts:
                    graph[near].append((far, cost[link]))
        tors: dict[str, list[float]] = defaultdict(list)
        for switch, host_cost in attach.values():
            tors[switch].append(host_cost)
        longest = 0.0
        for source, source_costs in tors.items():
            distance = _dijkstra(graph, source)
            for target, target_costs in tors.items():
                if target not in distance:
                    continue
                if target == source and len(source_costs) < 2:
                    continue
                pair = sorted(source_costs)[-2:] if target == source else \
                    [max(source_costs), max(target_costs)]
                longest = max(longest, distance[target] + sum(pair))
        return longest


def _dijkstra(graph: dict[str, list[tuple[str, float]]], source: str) -> dict[str, float]:
    distance = {source: 0.0}
    frontier = [(0.0, source)]
    while frontier:
        d, node = heapq.heappop(frontier)
        if d > distance[node]:
            continue
        for peer, cost in graph.get(node, ()):
            if d + cost < distance.get(peer, float("inf")):
                distance[peer] = d + cost
                heapq.heappush(frontier, (d + cost, peer))
    return distance


@singledispatch
def layout(spec) -> Layout:
    """The nodes and links a spec describes."""
    raise TypeError(f"not a fabric spec: {spec!r}")


def _host_names(count: int) -> tuple[str, ...]:
    return tuple(f"host{rank}" for rank in range(count))


def _rate_bps(gbps: float) -> int:
    return round(gbps * GBPS)


def _two_tier(hosts: tuple[str, ...], leaf_of_host: list[str], leaves: list[str], spines: int,
              rate_gbps: float, uplink_gbps: float, delay_us: float) -> Layout:
    spine_names = [f"spine{s}" for s in range(spines)]
    delay = delay_us * US
    links = [Link(host, leaf, _rate_bps(rate_gbps), delay, "host-leaf")
             for host, leaf in zip(hosts, leaf_of_host)]
    links += [Link(leaf, spine, _rate_bps(uplink_gbps), delay, "leaf-spine")
              for leaf in leaves for spine in spine_names]
    return Layout(hosts, tuple(leaves + spine_names), tuple(links))


@layout.register
def _(spec: LeafSpine) -> Layout:
    hosts = _host_names(spec.host_count)
    leaves = [f"leaf{i}" for i in range(spec.leaves)]
    leaf_of_host = [leaves[rank // spec.hosts_per_leaf] for rank in range(spec.host_count)]
    spines, uplink = spec.uplinks
    return _two_tier(hosts, leaf_of_host, leaves, spines, spec.rate_gbps, uplink, spec.delay_us)


@layout.register
def _(spec: RailOptimized) -> Layout:
    hosts = _host_names(spec.host_count)
    leaves = [f"rail{rail}-leaf{j}" for rail in range(spec.rails)
              for j in range(spec.leaves_per_rail)]
    leaf_of_host = []
    for rank in range(spec.host_count):
        server, rail = divmod(rank, spec.gpus_per_server)
        leaf_of_host.append(f"rail{rail}-leaf{server // spec.hosts_per_leaf}")
    spines, uplink = spec.uplinks
    return _two_tier(hosts, leaf_of_host, leaves, spines, spec.rate_gbps, uplink, spec.delay_us)


@layout.register
def _(spec: FatTree) -> Layout:
    half = spec.k // 2
    rate, delay = _rate_bps(spec.rate_gbps), spec.delay_us * US
    hosts = _host_names(spec.host_count)
    edges = [[f"pod{p}-edge{e}" for e in range(half)] for p in range(spec.k)]
    aggs = [[f"pod{p}-agg{a}" for a in range(half)] for p in range(spec.k)]
    cores = [f"core{c}" for c in range(half * half)]
    links = []
    for rank, host in enumerate(hosts):
        pod, within = divmod(rank, half * half)
        links.append(Link(host, edges[pod][within // half], rate, delay, "host-edge"))
    for pod in range(spec.k):
        links += [Link(edge, agg, rate, delay, "edge-agg") for edge in edges[pod] for agg in aggs[pod]]
        for a, agg in enumerate(aggs[pod]):
            links += [Link(agg, cores[a * half + c], rate, delay, "agg-core") for c in range(half)]
    switches = [n for pod in edges for n in pod] + [n for pod in aggs for n in pod] + cores
    return Layout(hosts, tuple(switches), tuple(links))


@layout.register
def _(spec: HpccTopologyFile) -> Layout:
    topology = spec.topology
    host_ids = topology.hosts
    names = {node: f"host{rank}" for rank, node in enumerate(host_ids)}
    names.update({node: f"nvswitch{node}" if node in topology.nvswitches else f"switch{node}"
                  for node in spec.switches})
    links = []
    for link in spec.links:
        touches_host = topology.is_host(link.src) or topology.is_host(link.dst)
        tier = "nvlink" if topology.is_nvlink(link) else "host-switch" if touches_host else "switch-switch"
        links.append(Link(names[link.src], names[link.dst], round(link.rate_bps), link.delay_s, tier,
                          link.error_rate))
    switches = tuple(names[node] for node in spec.switches)
    return Layout(tuple(names[node] for node in host_ids), switches, tuple(links))
