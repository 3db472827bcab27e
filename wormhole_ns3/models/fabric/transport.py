"""The transport a run uses, applied as ns-3 defaults before any node exists.

ns-3 reads a socket's options from attribute defaults when the socket is
made, and TCP's congestion control from TcpL4Protocol's SocketType, so the
transport is applied with Config::SetDefault before the fabric is built.

The fabric asks a transport only for what it must know of any transport
(the ``Transport`` protocol): how big its packets get, to size device MTUs
and queue thresholds, whether it brings its own queues, what to install on
the built fabric, and how a FlowDag starts its flows. TCP (here) uses the
fabric's queues and sockets; RDMA (``rdma.py``) installs NICs and switch
queues of its own and starts queue pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from wormhole_ns3.models.fabric.specs import FabricSpecError, require_at_least_one

#: Short names of the TCP variants experiments choose between, and their ns-3 TypeIds.
CONGESTION_CONTROLS = {"dctcp": "ns3::TcpDctcp", "newreno": "ns3::TcpNewReno",
                       "cubic": "ns3::TcpCubic"}

#: IPv4 header (20) + TCP header (20) + the timestamp option ns-3 puts on every segment (12).
TCP_IP_HEADER_BYTES = 52

MIB = 1024 * 1024


class BuiltFabric(Protocol):
    """What a transport may read of a built fabric (``build.Fabric`` is one) when installing itself."""

    hosts: list  #: ns-3 nodes, index = rank
    switches: list  #: ns-3 nodes
    base_rtt_s: float


class Transport(Protocol):
    """What the fabric builder needs from a transport."""

    @property
    def packet_bytes(self) -> int:
        """The largest IP packet the transport sends (device MTU, queue sizing)."""

    @property
    def owns_queues(self) -> bool:
        """True if ``install`` puts queues of its own on every port (the builder installs none)."""

    def apply(self, ns) -> None:
        """Set ns-3 defaults; called before any node is created."""

    def install(self, ns, fabric: BuiltFabric, first_stream: int) -> int:
        """Install what the transport needs on the built, routed fabric; return random streams used."""

    def configure_flows(self, ns, dag) -> None:
        """Make an ns3::FlowDag start this transport's flows."""

    def describe(self) -> str:
        """One line for reports."""


@dataclass(frozen=True, kw_only=True)
class TransportConfig:
    """TCP for a datacenter run.

    ``congestion_control`` is one of CONGESTION_CONTROLS or an ns-3 TCP
    congestion-control TypeId name ("TcpBbr", "ns3::TcpVegas"). Buffers of
    8 MiB hold the bandwidth-delay product of a 400 Gbps path with a 160 us
    round trip. Receivers ACK every segment by default, as DCTCP requires to
    echo marks exactly (ns-3's default of 2 stalls a flow that starts into a
    marked queue). ECN is on (DCTCP needs it; NewReno and Cubic then treat a
    mark as a loss, RFC 3168). ``min_rto_ms`` is a datacenter value: ns-3's
    default of 1 s stalls a collective for a second on any loss.
    """

    congestion_control: str = "dctcp"
    segment_bytes: int = 1448
    send_buffer_bytes: int = 8 * MIB
    receive_buffer_bytes: int = 8 * MIB
    delayed_ack_count: int = 1
    ecn: bool = True
    min_rto_ms: float = 10.0

    def __post_init__(self) -> None:
        if not (self.congestion_control in CONGESTION_CONTROLS
                or self.congestion_control.removeprefix("ns3::").startswith("Tcp")):
            raise FabricSpecError(
                f"congestion_control must be one of {', '.join(CONGESTION_CONTROLS)} or an ns-3 "
                f"TCP TypeId name like TcpBbr, got {self.congestion_control!r}")
        if self.type_id == CONGESTION_CONTROLS["dctcp"] and not self.ecn:
            raise FabricSpecError("DCTCP needs ECN: ecn=False is not allowed with dctcp")
        require_at_least_one(self, "segment_bytes", "send_buffer_bytes", "receive_buffer_bytes",
                             "delayed_ack_count")
        if self.send_buffer_bytes < self.segment_bytes or \
                self.receive_buffer_bytes < self.segment_bytes:
            raise FabricSpecError("socket buffers must hold at least one segment")
        if self.min_rto_ms <= 0:
            raise FabricSpecError(f"min_rto_ms must be positive, got {self.min_rto_ms}")

    @property
    def type_id(self) -> str:
        """The ns-3 TypeId name of the congestion control."""
        name = CONGESTION_CONTROLS.get(self.congestion_control, self.congestion_control)
        return name if name.startswith("ns3::") else f"ns3::{name}"

    @property
    def packet_bytes(self) -> int:
        return self.segment_bytes + TCP_IP_HEADER_BYTES

    @property
    def socket_factory(self) -> str:
        """The ns-3 socket factory of this transport's applications."""
        return "ns3::TcpSocketFactory"

    @property
    def owns_queues(self) -> bool:
        return False

    def install(self, ns, fabric: BuiltFabric, first_stream: int) -> int:
        """Nothing: TCP is in every node's Internet stack, its queues are the fabric's."""
        return 0

    def configure_flows(self, ns, dag) -> None:
        """BulkSend flows over this transport's sockets."""
        dag.SetAttribute("Transport", ns.StringValue("Socket"))
        dag.SetAttribute("Protocol", ns.TypeIdValue(ns.TypeId.LookupByName(self.socket_factory)))

    def describe(self) -> str:
        ecn = "ECN" if self.ecn else "no ECN"
        return (f"TCP {self.congestion_control}, {self.segment_bytes}-byte segments, {ecn}, "
                f"ACK every {self.delayed_ack_count} segment(s), min RTO {self.min_rto_ms:g} ms")

    def apply(self, ns) -> None:
        """Make these the defaults of every TCP socket created from now on."""
        found, _ = ns.LookupByNameFailSafe(self.type_id)
        if not found:
            raise FabricSpecError(f"ns-3 has no TCP congestion control {self.type_id}")
        set_default = ns.Config.SetDefault
        set_default("ns3::TcpL4Protocol::SocketType", ns.StringValue(self.type_id))
        set_default("ns3::TcpSocket::SegmentSize", ns.UintegerValue(self.segment_bytes))
        set_default("ns3::TcpSocket::SndBufSize", ns.UintegerValue(self.send_buffer_bytes))
        set_default("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(self.receive_buffer_bytes))
        set_default("ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if self.ecn else "Off"))
        set_default("ns3::TcpSocket::DelAckCount", ns.UintegerValue(self.delayed_ack_count))
        set_default("ns3::TcpSocketBase::MinRto", ns.TimeValue(ns.MicroSeconds(
            round(self.min_rto_ms * 1000))))
