r"""Leaf-spine fabric carrying two traffic groups that never share a link.

Topology: 4 leaves, 2 spines, 2 hosts per leaf; every leaf connects to both spines.
All links run at --rate / --delay (10 Gbps / 10 us by default)::

            spine 0              spine 1
           /  |  |  \           /  |  |  \        (full mesh: each leaf to each spine)
      leaf 0  leaf 1  leaf 2  leaf 3
      h0 h1   h2 h3   h4 h5   h6 h7

Group A (steady): --steady-flows long DCTCP BulkSend flows of --steady-mb MB each, from
the hosts of leaf 0 to the hosts of leaf 1, all starting at 0.1 s.
Group B (bursty): --bursty-flows short DCTCP BulkSend flows of --bursty-kb KB each, from
the hosts of leaf 2 to the hosts of leaf 3, started --gap-ms apart from 0.1 s on.

Routing is global (Dijkstra) routing with interface metrics chosen so that leaves 0 and 1
reach each other only through spine 0 and leaves 2 and 3 only through spine 1: a leaf's
uplink to its own group's spine has metric 1, its uplink to the other spine metric 10.
So group A uses only spine 0 and group B only spine 1 (ECMP stays off).

Switch egress ports run RED as a DCTCP step marker (mark above 65 packets, Gentle off);
hosts use a FIFO queue disc.

Output: one line per flow, ``flow <i> bytes <received bytes>`` (flows 0 .. steady-1 are
group A, the rest group B), then one line per leaf-spine link with the number of packets
sent over it in both directions, ``link leaf<l>-spine<s> packets <n>``, which shows that
the groups are link-disjoint (spine 0 never carries leaf 2/3 traffic and vice versa).
"""

import argparse

from ns import ns

from wormhole_ns3.models.fabric import queues
from wormhole_ns3.models.fabric.transport import MIB, TransportConfig

N_LEAVES = 4
N_SPINES = 2
HOSTS_PER_LEAF = 2
HOME_METRIC = 1
AWAY_METRIC = 10
START_S = 0.1
STEADY_PORT = 5000
BURSTY_PORT = 6000
QUEUE_PACKETS = 2666
RED_THRESHOLD_PACKETS = 65


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steady-flows", type=int, default=2, help="group A flow count")
    parser.add_argument("--steady-mb", type=float, default=100, help="group A flow size (MB)")
    parser.add_argument("--bursty-flows", type=int, default=40, help="group B flow count")
    parser.add_argument("--bursty-kb", type=float, default=200, help="group B flow size (KB)")
    parser.add_argument("--gap-ms", type=float, default=0.5, help="group B start-time gap")
    parser.add_argument("--rate", default="10Gbps", help="data rate of every link")
    parser.add_argument("--delay", default="10us", help="propagation delay of every link")
    parser.add_argument("--stop", type=float, default=0,
                        help="stop time in seconds; 0 runs until all flows finish")
    return parser.parse_args()


def configure_tcp():
    """DCTCP, 1448-byte segments, 4 MiB buffers, ECN; ns-3's delayed ACK (2) and minimum RTO (1 s)."""
    TransportConfig(segment_bytes=1448, send_buffer_bytes=4 * MIB, receive_buffer_bytes=4 * MIB,
                    delayed_ack_count=2, min_rto_ms=1000).apply(ns)
    ns.Config.SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", ns.BooleanValue(False))


def home_spine(leaf):
    """Leaves 0 and 1 (group A) belong to spine 0, leaves 2 and 3 (group B) to spine 1."""
    return 0 if leaf < 2 else 1


def set_metric(node, device, metric):
    ipv4 = node.GetObject[ns.Ipv4]()
    ipv4.SetMetric(ipv4.GetInterfaceForDevice(device), metric)


class Fabric:
    """Nodes, links and addresses of the leaf-spine fabric."""

    def __init__(self, rate, delay):
        self.hosts = ns.NodeContainer()
        self.hosts.Create(N_LEAVES * HOSTS_PER_LEAF)
        self.leaves = ns.NodeContainer()
        self.leaves.Create(N_LEAVES)
        self.spines = ns.NodeContainer()
        self.spines.Create(N_SPINES)

        stack = ns.InternetStackHelper()
        stream = 0
        for group in (self.hosts, self.leaves, self.spines):
            stack.Install(group)
            stream += stack.AssignStreams(group, stream)

        self.p2p = ns.PointToPointHelper()
        self.p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
        self.p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
        self.red = queues.step_marking_red(ns, threshold_packets=RED_THRESHOLD_PACKETS,
                                           buffer_packets=QUEUE_PACKETS, link_rate=rate,
                                           link_delay=delay)
        self.fifo = queues.fifo(ns, QUEUE_PACKETS)
        self.addresses = ns.Ipv4AddressHelper()
        self.red_discs = []
        self.host_addrs = []
        self.uplink_discs = {}  # (leaf, spine) -> (leaf-side disc, spine-side disc)

        self._connect_hosts()
        self._connect_spines()
        for disc in self.red_discs:
            stream += ns.DynamicCast[ns.RedQueueDisc](disc).AssignStreams(stream)
        ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    def _assign(self, devices, subnet):
        self.addresses.SetBase(ns.Ipv4Address(subnet), ns.Ipv4Mask("255.255.255.0"))
        return self.addresses.Assign(devices)

    def _connect_hosts(self):
        for h in range(self.hosts.GetN()):
            leaf = h // HOSTS_PER_LEAF
            devices = self.p2p.Install(self.hosts.Get(h), self.leaves.Get(leaf))
            self.fifo.Install(devices.Get(0))
            self.red_discs.append(self.red.Install(devices.Get(1)).Get(0))
            self.host_addrs.append(self._assign(devices, f"10.1.{h}.0").GetAddress(0))

    def _connect_spines(self):
        for leaf in range(N_LEAVES):
            for spine in range(N_SPINES):
                leaf_node, spine_node = self.leaves.Get(leaf), self.spines.Get(spine)
                devices = self.p2p.Install(leaf_node, spine_node)
                discs = self.red.Install(devices)
                self.red_discs.extend([discs.Get(0), discs.Get(1)])
                self.uplink_discs[(leaf, spine)] = (discs.Get(0), discs.Get(1))
                self._assign(devices, f"10.2.{leaf * N_SPINES + spine}.0")
                metric = HOME_METRIC if spine == home_spine(leaf) else AWAY_METRIC
                set_metric(leaf_node, devices.Get(0), metric)
                set_metric(spine_node, devices.Get(1), metric)

    def link_packets(self, leaf, spine):
        up, down = self.uplink_discs[(leaf, spine)]
        return up.GetStats().nTotalSentPackets + down.GetStats().nTotalSentPackets


def add_flow(fabric, src, dst, port, n_bytes, start_s):
    """BulkSend from host src to a PacketSink on host dst; return the sink."""
    sink_helper = ns.PacketSinkHelper(
        "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    sink_apps = sink_helper.Install(fabric.hosts.Get(dst))
    sink_apps.Start(ns.Seconds(0))

    bulk = ns.BulkSendHelper(
        "ns3::TcpSocketFactory",
        ns.InetSocketAddress(fabric.host_addrs[dst], port).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(n_bytes))
    bulk.SetAttribute("SendSize", ns.UintegerValue(1448))
    bulk_apps = bulk.Install(fabric.hosts.Get(src))
    bulk_apps.Start(ns.Seconds(start_s))
    return ns.DynamicCast[ns.PacketSink](sink_apps.Get(0))


def install_groups(fabric, args):
    """Group A: leaf 0 hosts (0, 1) -> leaf 1 hosts (2, 3).
    Group B: leaf 2 hosts (4, 5) -> leaf 3 hosts (6, 7), cycling over the four pairs."""
    sinks = []
    for k in range(args.steady_flows):
        src, dst = k % 2, 2 + k % 2
        sinks.append(add_flow(fabric, src, dst, STEADY_PORT + k,
                              int(args.steady_mb * 10**6), START_S))
    for j in range(args.bursty_flows):
        src, dst = 4 + j % 2, 6 + (j // 2) % 2
        sinks.append(add_flow(fabric, src, dst, BURSTY_PORT + j,
                              int(args.bursty_kb * 10**3), START_S + j * args.gap_ms / 1000.0))
    return sinks


def main():
    args = parse_args()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    configure_tcp()

    fabric = Fabric(args.rate, args.delay)
    sinks = install_groups(fabric, args)

    if args.stop > 0:
        ns.Simulator.Stop(ns.Seconds(args.stop))
    ns.Simulator.Run()

    for i, sink in enumerate(sinks):
        print(f"flow {i} bytes {sink.GetTotalRx()}")
    for leaf in range(N_LEAVES):
        for spine in range(N_SPINES):
            print(f"link leaf{leaf}-spine{spine} packets {fabric.link_packets(leaf, spine)}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
