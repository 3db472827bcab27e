"""How packets find their way: per-flow ECMP by default, ns-3's own global routing on request.

``flow-hash-ecmp`` is the shim's FlowHashEcmpRouting: every packet of a flow
takes one path, flows spread over equal-cost paths by a hash of their
5-tuple, and the path of a flow can be asked for without sending anything
(``flow_path``). ``global`` is ns-3's Ipv4GlobalRouting, which always takes
the first equal-cost route; ``random-ecmp`` is the same with ns-3's
per-packet random spreading. Both exist to compare against.
"""

from __future__ import annotations

from dataclasses import dataclass

from wormhole_ns3.models.fabric.specs import FabricSpecError

ROUTING_KINDS = ("flow-hash-ecmp", "global", "random-ecmp")
MAX_HOPS = 64


@dataclass(frozen=True, kw_only=True)
class RoutingConfig:
    kind: str = "flow-hash-ecmp"
    hash_seed: int = 0  #: flow-hash ECMP only: another seed puts flows on other paths

    def __post_init__(self) -> None:
        if self.kind not in ROUTING_KINDS:
            raise FabricSpecError(f"routing kind must be one of {', '.join(ROUTING_KINDS)}, "
                                  f"got {self.kind!r}")
        if not 0 <= self.hash_seed < 2**32:
            raise FabricSpecError(f"hash_seed must fit in 32 bits, got {self.hash_seed}")

    def helper(self, ns):
        """The routing helper to give InternetStackHelper (alone: no static routing to consult
        first, which would cost a table walk per packet)."""
        if self.kind == "flow-hash-ecmp":
            helper = ns.FlowHashEcmpRoutingHelper()
            helper.SetAttribute("HashSeed", ns.UintegerValue(self.hash_seed))
            return helper
        return ns.Ipv4GlobalRoutingHelper()

    def configure(self, ns, node) -> None:
        """Per-node settings the helper cannot carry."""
        if self.kind == "random-ecmp":
            routing = ns.DynamicCast[ns.Ipv4GlobalRouting](
                node.GetObject[ns.Ipv4]().GetRoutingProtocol())
            routing.SetAttribute("RandomEcmpRouting", ns.BooleanValue(True))


TCP = 6
UDP = 17


def flow_path(ns, fabric, src_rank: int, dst_rank: int, protocol: int, src_port: int,
              dst_port: int) -> list[str]:
    """The names of the nodes a flow's packets visit, source and destination included.

    Asks FlowHashEcmpRouting::LookupFlow hop by hop, which is what a
    flow's packets are routed by; sends nothing and changes nothing.
    """
    src, dst = fabric.host_address(src_rank), fabric.host_address(dst_rank)
    node = fabric.hosts[src_rank]
    path = [fabric.name_of(node)]
    while node.GetObject[ns.Ipv4]().GetInterfaceForAddress(dst) < 0:
        if len(path) > MAX_HOPS:
            raise RuntimeError(f"routing loop from host{src_rank} to host{dst_rank}: {path}")
        routing = ns.DynamicCast[ns.FlowHashEcmpRouting](
            node.GetObject[ns.Ipv4]().GetRoutingProtocol())
        if not routing:
            raise RuntimeError(f"{path[-1]} does not route by flow hash")
        route = routing.LookupFlow(src, dst, protocol, src_port, dst_port)
        if not route:
            raise RuntimeError(f"no route from {path[-1]} to host{dst_rank}")
        node = fabric.peer_node(route.GetOutputDevice())
        path.append(fabric.name_of(node))
    return path
