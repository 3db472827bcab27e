"""Datacenter fabrics for ns-3 scripts: topology specs, ECN queues, transports, per-flow ECMP.

In an ordinary ns-3 script::

    from ns import ns
    from wormhole_ns3 import native
    from wormhole_ns3.fabric import RailOptimized, build_fabric

    native.load()
    fabric = build_fabric(ns, RailOptimized(servers=16))
    # start flows between fabric.hosts[rank], addressed by fabric.host_address(rank)
"""

from .build import Fabric, Port, build_fabric
from .layout import Layout, Link, layout
from .queues import QueueConfig, dctcp_threshold_packets
from .rdma import RDMA_CONGESTION_CONTROLS, RdmaTransportConfig
from .routing import RoutingConfig, flow_path
from .specs import FabricSpecError, FatTree, HpccTopologyFile, LeafSpine, RailOptimized
from .transport import CONGESTION_CONTROLS, Transport, TransportConfig

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
