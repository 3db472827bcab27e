"""Build a fabric in ns-3 from a spec: nodes, links, queue discs, addresses, routes.

Every link is a point-to-point link with its own /30 subnet (10.0.0.0 + 4i
for link i), so addresses depend only on the layout. Queue discs are
installed before addresses are assigned; assigning first would give every
device ns-3's default FqCoDel. A transport that owns its queues (RDMA)
replaces those on the built fabric. Random streams are numbered from
``first_stream`` in a fixed order, so two builds of one spec run alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from wormhole_ns3.models.fabric.layout import Layout, Link, layout
from wormhole_ns3.models.fabric.queues import QueueConfig, fifo, step_marking_red
from wormhole_ns3.models.fabric.routing import RoutingConfig
from wormhole_ns3.models.fabric.specs import FabricSpec, FabricSpecError
from wormhole_ns3.models.fabric.transport import Transport, TransportConfig
from wormhole_ns3.runtime import native

FIRST_SUBNET = 0x0A000000  # 10.0.0.0
SUBNET_SIZE = 4  # a /30 per link
MAX_LINKS = 1 << 22  # 10.0.0.0/8 in /30s
MIN_MTU = 1500
#: Routing cost of a host's own links when a host has several (NVLink and NICs, two ToRs). Any path
#: through another host then costs more than any path through switches alone, so no flow is
#: forwarded by a GPU, as in SimAI, where only switches and NVSwitches forward; NVLink costs one
#: less, so traffic inside a server takes NVLink when the network offers a path as short.
HOST_LINK_METRIC = 1000


@dataclass(frozen=True)
class Port:
    """One end of a link: the device of ``node`` facing ``peer`` and the queue disc feeding it."""

    node: str
    peer: str
    link: int  #: index into Fabric.links
    device: object
    queue_disc: object  #: the device's root queue disc; None where a NIC owns the device (RDMA hosts)


@dataclass
class Fabric:
    """A built fabric: ns-3 nodes in rank order, its links and ports, and how it was made."""

    spec: FabricSpec
    layout: Layout
    hosts: list  #: ns-3 nodes, index = rank
    switches: list  #: ns-3 nodes, in layout order
    ports: list[Port]
    ecn_thresholds: dict[int, int]  #: switch port rate (bit/s) -> K in packets
    base_rtt_s: float
    routing: RoutingConfig
    transport: Transport
    addresses: list = field(repr=False)  #: ns-3 Ipv4Address of each rank
    names: dict[int, str] = field(repr=False)  #: ns-3 node id -> name
    _port_index: dict[tuple[str, str], Port] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._port_index = {}
        for port in self.ports:
            self._port_index.setdefault((port.node, port.peer), port)

    @property
    def links(self) -> tuple[Link, ...]:
        return self.layout.links

    def host_address(self, rank: int):
        """The IPv4 address of a host (its first link's), for sockets and sinks."""
        return self.addresses[rank]

    def name_of(self, node) -> str:
        return self.names[node.GetId()]

    def port(self, node: str, peer: str) -> Port:
        """The port of ``node`` facing ``peer`` (the first, if they share several links)."""
        try:
            return self._port_index[(node, peer)]
        except KeyError:
            raise KeyError(f"no link from {node} to {peer}") from None

    def peer_node(self, device):
        """The node at the other end of a point-to-point device."""
        channel = device.GetChannel()
        for i in range(channel.GetNDevices()):
            other = channel.GetDevice(i)
            if other.GetNode().GetId() != device.GetNode().GetId():
                return other.GetNode()
        raise ValueError("device has no peer")

    def describe(self) -> str:
        thresholds = ", ".join(f"{k} pkts at {rate / 1e9:g} Gbps"
                               for rate, k in sorted(self.ecn_thresholds.items()))
        marking = f"ECN step marking above {thresholds}" if thresholds else "drop-tail switches"
        if self.transport.owns_queues:
            marking = "queues of the transport"
        return "\n".join([
            self.spec.summary(),
            f"{len(self.hosts)} hosts, {len(self.switches)} switches, {len(self.links)} links; "
            f"base RTT {self.base_rtt_s * 1e6:.2f} us; {marking}",
            f"routing {self.routing.kind}; transport {self.transport.describe()}",
        ])


class _LinkBuilder:
    """Installs links one by one, reusing one helper per distinct rate and delay."""

    def __init__(self, ns, queues: QueueConfig, transport: Transport, base_rtt_s: float,
                 hosts: set[str]) -> None:
        self.ns, self.queues, self.transport = ns, queues, transport
        self.base_rtt_s, self.hosts = base_rtt_s, hosts
        self.addresses = ns.Ipv4AddressHelper()
        self.mask = ns.Ipv4Mask("255.255.255.252")
        self.thresholds: dict[int, int] = {}
        self.ports: list[Port] = []
        self.randomized: list = []  # objects whose random streams are assigned after the build
        self._p2p: dict[tuple[int, int], object] = {}
        self._queue_helpers: dict[tuple[str, int, int], object] = {}

    def point_to_point(self, rate_bps: int, delay_ns: int):
        key = (rate_bps, delay_ns)
        if key not in self._p2p:
            ns = self.ns
            helper = ns.PointToPointHelper()
            helper.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(rate_bps)))
            helper.SetDeviceAttribute("Mtu", ns.UintegerValue(
                max(MIN_MTU, self.transport.packet_bytes)))
            helper.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(delay_ns)))
            helper.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", ns.QueueSizeValue(
                ns.QueueSize(f"{self.queues.device_queue_packets}p")))
            self._p2p[key] = helper
        return self._p2p[key]

    def queue_helper(self, node: str, rate_bps: int, delay_ns: int):
        role = "host" if node in self.hosts else "switch"
        key = (role, rate_bps, delay_ns)
        if key not in self._queue_helpers:
            queues = self.queues
            if role == "host":
                helper = fifo(self.ns, queues.host_buffer_packets)
            elif queues.ecn_marking:
                k = queues.threshold_packets(rate_bps, self.base_rtt_s,
                                             self.transport.packet_bytes)
                self.thresholds[rate_bps] = k
                helper = step_marking_red(
                    self.ns, threshold_packets=k, buffer_packets=queues.switch_buffer_packets,
                    link_rate=f"{rate_bps}bps", link_delay=f"{delay_ns}ns",
                    packet_bytes=self.transport.packet_bytes)
            else:
                helper = fifo(self.ns, queues.switch_buffer_packets)
            self._queue_helpers[key] = helper
        return self._queue_helpers[key]

    def connect(self, index: int, link: Link, nodes: dict[str, object]):
        """Install link ``index``; return its Ipv4InterfaceContainer (a's address first)."""
        ns = self.ns
        delay_ns = round(link.delay_s * 1e9)
        devices = self.point_to_point(link.rate_bps, delay_ns).Install(nodes[link.a], nodes[link.b])
        for end, (node, peer) in enumerate(((link.a, link.b), (link.b, link.a))):
            device = devices.Get(end)
            disc = None
            if not self.transport.owns_queues:
                disc = self.queue_helper(node, link.rate_bps, delay_ns).Install(device).Get(0)
                red = ns.DynamicCast[ns.RedQueueDisc](disc)
                if red:
                    self.randomized.append(red)
            self.ports.append(Port(node, peer, index, device, disc))
            if link.error_rate > 0:
                self.randomized.append(self._lose_packets(device, link.error_rate))
        self.addresses.SetBase(ns.Ipv4Address(FIRST_SUBNET + SUBNET_SIZE * index), self.mask)
        return self.addresses.Assign(devices)

    def _lose_packets(self, device, rate: float):
        ns = self.ns
        model = ns.CreateObject[ns.RateErrorModel]()
        model.SetAttribute("ErrorRate", ns.DoubleValue(rate))
        model.SetAttribute("ErrorUnit", ns.EnumValue["ns3::RateErrorModel::ErrorUnit"](
            ns.RateErrorModel.ERROR_UNIT_PACKET))
        device.SetAttribute("ReceiveErrorModel", ns.PointerValue(model))
        return model


def build_fabric(ns, spec: FabricSpec, queues: QueueConfig | None = None,
                 transport: Transport | None = None, *, routing: RoutingConfig | None = None,
                 first_stream: int = 0) -> Fabric:
    """Build ``spec`` in the current ns-3 simulation and fill the routing tables.

    Applies the transport's defaults first (ns-3 reads them when sockets and
    protocols are created), and installs what the transport brings (RDMA
    NICs and switch queues) last. Call it before creating applications; call
    it once per simulation.
    """
    queues = queues or QueueConfig()
    transport = transport or TransportConfig()
    routing = routing or RoutingConfig()
    plan = layout(spec)
    if len(plan.links) > MAX_LINKS:
        raise FabricSpecError(f"{len(plan.links)} links do not fit the /30 subnets of 10.0.0.0/8")
    transport.apply(ns)
    if routing.kind == "flow-hash-ecmp":
        native.load()  # FlowHashEcmpRouting lives in the shim
    base_rtt = plan.base_rtt_s(transport.packet_bytes)

    names = plan.hosts + plan.switches
    container = ns.NodeContainer()
    container.Create(len(names))
    nodes = {name: container.Get(i) for i, name in enumerate(names)}
    stack = ns.InternetStackHelper()
    stack.SetRoutingHelper(routing.helper(ns))
    stack.Install(container)
    stream = first_stream + stack.AssignStreams(container, first_stream)
    for node in nodes.values():
        routing.configure(ns, node)

    builder = _LinkBuilder(ns, queues, transport, base_rtt, set(plan.hosts))
    addresses: dict[str, object] = {}
    for index, link in enumerate(plan.links):
        interfaces = builder.connect(index, link, nodes)
        for end, name in enumerate((link.a, link.b)):
            if name in builder.hosts:
                addresses.setdefault(name, interfaces.GetAddress(end))
    for randomized in builder.randomized:
        stream += randomized.AssignStreams(stream)
    _keep_hosts_from_forwarding(ns, plan, builder.ports, nodes)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    fabric = Fabric(
        spec=spec, layout=plan,
        hosts=[nodes[name] for name in plan.hosts],
        switches=[nodes[name] for name in plan.switches],
        ports=builder.ports, ecn_thresholds=builder.thresholds, base_rtt_s=base_rtt,
        routing=routing, transport=transport,
        addresses=[addresses[name] for name in plan.hosts],
        names={node.GetId(): name for name, node in nodes.items()},
    )
    transport.install(ns, fabric, stream)
    if not transport.owns_queues:
        return fabric
    return replace(fabric, ports=[replace(p, queue_disc=_root_queue_disc(ns, p.device)) for p in fabric.ports])


def _keep_hosts_from_forwarding(ns, plan: Layout, ports: list[Port], nodes: dict) -> None:
    """Give hosts' links a high routing cost when some host has several links (see HOST_LINK_METRIC).

    With one link per host every path starts and ends on a host link, so
    costs are left as ns-3 sets them (1 per link) and routes are unchanged.
    """
    hosts = set(plan.hosts)
    links_of: dict[str, int] = {}
    for link in plan.links:
        for end in (link.a, link.b):
            links_of[end] = links_of.get(end, 0) + 1
    if all(links_of.get(host, 0) <= 1 for host in hosts):
        return
    for port in ports:
        if port.node in hosts:
            ipv4 = nodes[port.node].GetObject[ns.Ipv4]()
            nvlink = plan.links[port.link].tier == "nvlink"
            ipv4.SetMetric(ipv4.GetInterfaceForDevice(port.device), HOST_LINK_METRIC - nvlink)


def _root_queue_disc(ns, device):
    """The queue disc traffic control feeds a device through, or None if it has none."""
    disc = device.GetNode().GetObject[ns.TrafficControlLayer]().GetRootQueueDiscOnDevice(device)
    return disc if disc else None
