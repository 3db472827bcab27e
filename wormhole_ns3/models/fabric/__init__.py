"""Datacenter fabrics for ns-3 scripts: topology specs, ECN queues, transports, per-flow ECMP.

In an ordinary ns-3 script::

    from ns import ns
    from wormhole_ns3.runtime import native
    from wormhole_ns3.models.fabric import RailOptimized, build_fabric

    native.load()
    fabric = build_fabric(ns, RailOptimized(servers=16))
    # start flows between fabric.hosts[rank], addressed by fabric.host_address(rank)
"""

from wormhole_ns3.models.fabric.build import Fabric, Port, build_fabric
from wormhole_ns3.models.fabric.layout import Layout, Link, layout
from wormhole_ns3.models.fabric.queues import QueueConfig, dctcp_threshold_packets
from wormhole_ns3.models.fabric.rdma import RDMA_CONGESTION_CONTROLS, RdmaTransportConfig
from wormhole_ns3.models.fabric.routing import RoutingConfig, flow_path
from wormhole_ns3.models.fabric.specs import FabricSpecError, FatTree, HpccTopologyFile, LeafSpine, RailOptimized
from wormhole_ns3.models.fabric.transport import CONGESTION_CONTROLS, Transport, TransportConfig

__all__ = [
    "CONGESTION_CONTROLS",
    "Fabric",
    "FabricSpecError",
    "FatTree",
    "HpccTopologyFile",
    "Layout",
    "LeafSpine",
    "Link",
    "Port",
    "QueueConfig",
    "RDMA_CONGESTION_CONTROLS",
    "RailOptimized",
    "RdmaTransportConfig",
    "RoutingConfig",
    "Transport",
    "TransportConfig",
    "build_fabric",
    "dctcp_threshold_packets",
    "flow_path",
    "layout",
]
