"""RoCEv2 for a fabric: RDMA NICs on the hosts, DCQCN's ECN marking (and PFC) on the switches.

The RDMA models are the ns-3 module ``native/rdma`` (experiments/rdma/README.md):
every host gets an ``RdmaNic`` (queue pairs over UDP port 4791, DCQCN or HPCC),
every switch port an ``RdmaEgressQueueDisc`` whose data class is ns-3's RED set up
as DCQCN's marker (probability rising from 0 at Kmin to Pmax at Kmax, instantaneous
queue), its control class (ACKs, NAKs, CNPs) served first. Unless given, Kmin and Kmax
follow each port's rate (4 KB and 16 KB per Gb/s, HPCC's and SimAI's settings).

Unlike TCP, the transport owns the queues: the fabric builder installs none, and
``install`` puts the NICs and switch queues on the built fabric. Flows are queue
pairs, which a FlowDag starts with its ``Rdma`` transport.
"""

from __future__ import annotations

from dataclasses import dataclass

from wormhole_ns3.models.fabric.specs import FabricSpecError, require_at_least_one
from wormhole_ns3.models.fabric.transport import BuiltFabric

#: Short names of the RDMA congestion controls, and their ns-3 TypeIds.
RDMA_CONGESTION_CONTROLS = {"dcqcn": "ns3::RdmaDcqcn", "hpcc": "ns3::RdmaHpcc"}

#: IPv4 (20) + UDP (8) + BTH (12) + ICRC (4) around each RDMA payload.
ROCE_HEADER_BYTES = 44
#: HPCC's INT header on every data packet (RdmaIntHeader: 2 + 5 hops x 12 bytes).
INT_HEADER_BYTES = 62
#: The point-to-point header RED's byte mode sees on top of the IP packet.
PPP_HEADER_BYTES = 2
#: DCQCN's marking probability at Kmax (RdmaSwitchHelper's, with rate-scaled thresholds).
DEFAULT_PMAX = 0.2


@dataclass(frozen=True, kw_only=True)
class RdmaTransportConfig:
    """RoCEv2 with DCQCN (or HPCC) for a datacenter run.

    ``payload_bytes`` is the RDMA MTU (HPCC's ns-3 default of 1000 bytes).
    ``kmin_bytes``/``kmax_bytes`` fix the ECN thresholds of every switch port;
    by default they scale with the port's rate. With ``pfc`` every switch
    sends PAUSE upstream when an ingress port holds ``pfc_xoff_bytes`` and
    RESUME at ``pfc_xon_bytes``. HPCC's base RTT is the fabric's longest.
    """

    congestion_control: str = "dcqcn"
    payload_bytes: int = 1000
    ack_interval: int = 1
    kmin_bytes: int | None = None
    kmax_bytes: int | None = None
    pmax: float = DEFAULT_PMAX
    buffer_bytes: int = 32_000_000
    pfc: bool = False
    pfc_xoff_bytes: int = 200_000
    pfc_xon_bytes: int = 180_000
    pfc_headroom_bytes: int = 100_000

    def __post_init__(self) -> None:
        if self.congestion_control not in RDMA_CONGESTION_CONTROLS:
            raise FabricSpecError(f"congestion_control must be one of "
                                  f"{', '.join(RDMA_CONGESTION_CONTROLS)}, got {self.congestion_control!r}")
        require_at_least_one(self, "payload_bytes", "ack_interval", "buffer_bytes")
        if (self.kmin_bytes is None) != (self.kmax_bytes is None):
            raise FabricSpecError("give both kmin_bytes and kmax_bytes, or neither")
        if self.kmin_bytes is not None and self.kmax_bytes is not None and not 0 < self.kmin_bytes <= self.kmax_bytes:
            raise FabricSpecError(f"need 0 < kmin_bytes <= kmax_bytes, got {self.kmin_bytes} and "
                                  f"{self.kmax_bytes}")
        if not 0 < self.pmax <= 1:
            raise FabricSpecError(f"pmax must be in (0, 1], got {self.pmax}")
        if self.kmin_bytes is None and self.pmax != DEFAULT_PMAX:
            raise FabricSpecError(f"pmax goes with kmin_bytes and kmax_bytes (thresholds that "
                                  f"follow the port rate use Pmax {DEFAULT_PMAX})")
        if self.pfc and not 0 < self.pfc_xon_bytes < self.pfc_xoff_bytes:
            raise FabricSpecError(f"PFC needs 0 < pfc_xon_bytes < pfc_xoff_bytes, got "
                                  f"{self.pfc_xon_bytes} and {self.pfc_xoff_bytes}")

    @property
    def type_id(self) -> str:
        """The ns-3 TypeId name of the congestion control."""
        return RDMA_CONGESTION_CONTROLS[self.congestion_control]

    @property
    def packet_bytes(self) -> int:
        telemetry = INT_HEADER_BYTES if self.congestion_control == "hpcc" else 0
        return self.payload_bytes + ROCE_HEADER_BYTES + telemetry

    @property
    def owns_queues(self) -> bool:
        return True

    def describe(self) -> str:
        if self.kmin_bytes is None or self.kmax_bytes is None:
            marking = "Kmin/Kmax 4/16 KB per Gbps"
        else:
            marking = f"Kmin {self.kmin_bytes / 1e3:g} KB, Kmax {self.kmax_bytes / 1e3:g} KB"
        pfc = (f"PFC XOFF {self.pfc_xoff_bytes / 1e3:g} KB / XON {self.pfc_xon_bytes / 1e3:g} KB"
               if self.pfc else "no PFC")
        return (f"RDMA {self.congestion_control} (RoCEv2, {self.payload_bytes}-byte payloads, ACK "
                f"every {self.ack_interval} packet(s)); switch ports mark ECN with RED, {marking}, "
                f"Pmax {self.pmax:g}; {pfc}")

    def apply(self, ns) -> None:
        """Nothing to set before nodes exist: the NICs are configured when installed."""

    def install(self, ns, fabric: BuiltFabric, first_stream: int) -> int:
        """Give every host an RdmaNic and every switch port DCQCN's queues; return the streams used.

        An RdmaNic drives a host's one device: a host with several links (a
        GPU with NVLink, or on two ToRs) is refused here, in one line, before
        ns-3 would abort on it.
        """
        for rank, host in enumerate(fabric.hosts):
            links = host.GetNDevices() - 1  # the loopback is device 0
            if links != 1:
                raise FabricSpecError(
                    f"RDMA ({self.congestion_control}) needs one link per host, the host of rank {rank} has "
                    f"{links}; with a SimAI topology, --intra-server skip leaves NVLink out")
        if self.congestion_control == "hpcc":
            ns.Config.SetDefault("ns3::RdmaHpcc::BaseRtt", ns.TimeValue(
                ns.NanoSeconds(round(fabric.base_rtt_s * 1e9))))
        nics = ns.RdmaHelper()
        nics.SetNicAttribute("Mtu", ns.UintegerValue(self.payload_bytes))
        nics.SetNicAttribute("AckInterval", ns.UintegerValue(self.ack_interval))
        nics.SetNicAttribute("CongestionControl", ns.TypeIdValue(ns.TypeId.LookupByName(self.type_id)))
        for host in fabric.hosts:
            nics.Install(host)
        switches = ns.RdmaSwitchHelper()
        switches.SetBufferSize(self.buffer_bytes)
        switches.SetMeanPacketSize(self.packet_bytes + PPP_HEADER_BYTES)
        if self.kmin_bytes is not None:
            switches.SetEcn(self.kmin_bytes, self.kmax_bytes, self.pmax)
        if self.pfc:
            switches.EnablePfc(self.pfc_xoff_bytes, self.pfc_xon_bytes, self.pfc_headroom_bytes)
        if self.congestion_control == "hpcc":
            switches.EnableTelemetry()
        container = ns.NodeContainer()
        for switch in fabric.switches:
            container.Add(switch)
        return int(ns.RdmaSwitchHelper.AssignStreams(switches.Install(container), first_stream))

    def configure_flows(self, ns, dag) -> None:
        """Make a FlowDag's flows queue pairs."""
        dag.SetAttribute("Transport", ns.StringValue("Rdma"))
