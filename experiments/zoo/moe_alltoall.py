r"""Mixture-of-experts layers on a leaf-spine, written as an ns-3 user writes them.

Expert-parallel groups of hosts run, layer after layer, a *dispatch* all-to-all
(every host sends one message to every other host of its group), expert compute,
a *combine* all-to-all, then the next layer's attention compute. A host moves on
when it has received every message of its current all-to-all: its PacketSinks'
Rx traces tell it, in a Python callback, and it then creates the BulkSends of its
next all-to-all, there and then. Nothing is known in advance; nothing is a preset.

Topology: --leaves leaves, --spines spines, --hosts-per-leaf hosts on each leaf,
every leaf linked to every spine; all links --rate / --delay. DCTCP, with RED
marking ECN on every switch port (MinTh = MaxTh = --red-threshold packets, QW 1, marks rather
than drops above twice the threshold, ns-3's other RED defaults: Gentle on, so between
the threshold and twice it RED marks at random).
Global routing; --ecmp turns on ns-3's random per-packet ECMP.

Placement of the --groups groups:
  disjoint     each group owns whole leaves: groups never share a link, so the
               accelerator sees one independent partition per group, alike.
  interleaved  every leaf holds hosts of every group: their all-to-alls contend
               on every uplink.

Output: per iteration the time its last host finished, then per host and layer
the time it finished the layer's combine, then every sink's received bytes.
"""

import argparse

from ns import ns

PORT_BASE = 9000


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=4)
    parser.add_argument("--spines", type=int, default=2)
    parser.add_argument("--hosts-per-leaf", type=int, default=4)
    parser.add_argument("--groups", type=int, default=2, help="expert-parallel groups")
    parser.add_argument("--placement", choices=("disjoint", "interleaved"), default="disjoint")
    parser.add_argument("--message-kb", type=float, default=512, help="bytes per all-to-all message, in KB")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--expert-ms", type=float, default=1.0, help="compute between dispatch and combine")
    parser.add_argument("--attention-ms", type=float, default=2.0, help="compute between layers")
    parser.add_argument("--rate", default="10Gbps")
    parser.add_argument("--delay", default="2us")
    parser.add_argument("--red-threshold", type=float, default=65, help="RED MinTh = MaxTh, packets")
    parser.add_argument("--queue-packets", type=int, default=1000, help="RED MaxSize, packets")
    parser.add_argument("--ecmp", action="store_true", help="ns-3's random per-packet ECMP")
    parser.add_argument("--seed-run", type=int, default=0, help="RngRun; 0 keeps ns-3's (or NS_GLOBAL_VALUE's)")
    args = parser.parse_args(argv)
    hosts = args.leaves * args.hosts_per_leaf
    if hosts % args.groups:
        parser.error(f"{hosts} hosts do not split into {args.groups} equal groups")
    if args.placement == "disjoint" and args.leaves % args.groups:
        parser.error(f"{args.leaves} leaves do not split into {args.groups} groups of whole leaves")
    if args.placement == "interleaved" and args.hosts_per_leaf % args.groups:
        parser.error(f"{args.hosts_per_leaf} hosts per leaf do not split into {args.groups} groups")
    return args


def configure(args):
    if args.seed_run:
        ns.RngSeedManager.SetRun(args.seed_run)
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpDctcp"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 21))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 21))
    ns.Config.SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", ns.BooleanValue(args.ecmp))


class LeafSpine:
    """Hosts, leaves and spines; every switch port with RED marking ECN."""

    def __init__(self, args):
        self.hosts = ns.NodeContainer()
        self.hosts.Create(args.leaves * args.hosts_per_leaf)
        self.leaves = ns.NodeContainer()
        self.leaves.Create(args.leaves)
        self.spines = ns.NodeContainer()
        self.spines.Create(args.spines)
        ns.InternetStackHelper().InstallAll()

        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
        p2p.SetChannelAttribute("Delay", ns.StringValue(args.delay))
        red = ns.TrafficControlHelper()
        red.SetRootQueueDisc(
            "ns3::RedQueueDisc", "UseEcn", ns.BooleanValue(True), "UseHardDrop", ns.BooleanValue(False),
            "MinTh", ns.DoubleValue(args.red_threshold), "MaxTh", ns.DoubleValue(args.red_threshold),
            "QW", ns.DoubleValue(1.0), "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{args.queue_packets}p")))
        addresses = ns.Ipv4AddressHelper()
        self.addresses = []
        subnet = 0

        def connect(a, b, host_side=False):
            nonlocal subnet
            devices = p2p.Install(a, b)
            if host_side:  # the host's NIC keeps ns-3's default queue disc
                red.Install(devices.Get(1))
            else:
                red.Install(devices)
            addresses.SetBase(ns.Ipv4Address(f"10.{subnet // 256}.{subnet % 256}.0"), ns.Ipv4Mask("255.255.255.0"))
            subnet += 1
            return addresses.Assign(devices)

        for h in range(self.hosts.GetN()):
            interfaces = connect(self.hosts.Get(h), self.leaves.Get(h // args.hosts_per_leaf), host_side=True)
            self.addresses.append(interfaces.GetAddress(0))
        for leaf in range(args.leaves):
            for spine in range(args.spines):
                connect(self.leaves.Get(leaf), self.spines.Get(spine))
        ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()


def groups_of(args):
    """Host indices of each expert-parallel group."""
    hosts = args.leaves * args.hosts_per_leaf
    if args.placement == "disjoint":
        size = hosts // args.groups
        return [list(range(g * size, (g + 1) * size)) for g in range(args.groups)]
    share = args.hosts_per_leaf // args.groups
    return [[leaf * args.hosts_per_leaf + g * share + k for leaf in range(args.leaves) for k in range(share)]
            for g in range(args.groups)]


class ExpertParallelJob:
    """Every host's progress through its all-to-alls, advanced from its sinks' Rx traces."""

    def __init__(self, fabric, groups, args):
        self.fabric = fabric
        self.args = args
        self.message_bytes = int(args.message_kb * 1000)
        self.phases = 2 * args.layers * args.iterations  # dispatch and combine of every layer
        self.group_of = {h: g for g, members in enumerate(groups) for h in members}
        self.groups = groups
        self.phase = {h: 0 for h in self.group_of}  # the all-to-all each host is receiving
        self.sinks = {}  # (dst, src) -> PacketSink
        self.finished = {}  # (host, phase) -> time
        self._alive = []

    def peers(self, host):
        return [p for p in self.groups[self.group_of[host]] if p != host]

    def install_sinks(self):
        for dst in self.group_of:
            for src in self.peers(dst):
                helper = ns.PacketSinkHelper(
                    "ns3::TcpSocketFactory",
                    ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT_BASE + src).ConvertTo())
                apps = helper.Install(self.fabric.hosts.Get(dst))
                apps.Start(ns.Seconds(0))
                sink = ns.DynamicCast[ns.PacketSink](apps.Get(0))
                self.sinks[(dst, src)] = sink

                def received(packet, address, dst=dst):
                    self.on_rx(dst)

                on_rx = ns.cppyy.gbl.std.function["void(ns3::Ptr<const ns3::Packet>, const ns3::Address&)"](received)
                callback = ns.Callback["void", "ns3::Ptr<const ns3::Packet>", "const ns3::Address&"](on_rx)
                self._alive += [received, on_rx, callback]  # C++ only borrows them
                sink.TraceConnectWithoutContext("Rx", callback)

    def start(self, at_ms=1.0):
        for host in self.group_of:
            self.send_all_to_all(host, ns.MicroSeconds(int(at_ms * 1000)))

    def send_all_to_all(self, src, delay):
        for dst in self.peers(src):
            helper = ns.BulkSendHelper(
                "ns3::TcpSocketFactory",
                ns.InetSocketAddress(self.fabric.addresses[dst], PORT_BASE + src).ConvertTo())
            helper.SetAttribute("MaxBytes", ns.UintegerValue(self.message_bytes))
            helper.Install(self.fabric.hosts.Get(src)).Start(delay)

    def on_rx(self, host):
        phase = self.phase[host]
        if phase >= self.phases:
            return
        wanted = (phase + 1) * self.message_bytes
        if any(self.sinks[(host, src)].GetTotalRx() < wanted for src in self.peers(host)):
            return
        self.finished[(host, phase)] = ns.Simulator.Now().GetSeconds()
        self.phase[host] = phase + 1
        if phase + 1 < self.phases:
            compute_ms = self.args.expert_ms if phase % 2 == 0 else self.args.attention_ms
            self.send_all_to_all(host, ns.MicroSeconds(int(compute_ms * 1000)))

    def report(self):
        per_iteration = 2 * self.args.layers
        for it in range(self.args.iterations):
            last = (it + 1) * per_iteration - 1
            ends = [self.finished.get((h, last)) for h in self.group_of]
            end = "unfinished" if None in ends else f"{max(ends):.9f}"
            print(f"iteration {it} end {end}")
        for host in sorted(self.group_of):
            for it in range(self.args.iterations):
                for layer in range(self.args.layers):
                    t = self.finished.get((host, it * per_iteration + 2 * layer + 1))
                    print(f"host {host} iteration {it} layer {layer} end "
                          + ("unfinished" if t is None else f"{t:.9f}"))
        for (dst, src), sink in sorted(self.sinks.items()):
            print(f"sink {dst}<-{src} bytes {sink.GetTotalRx()}")


def main(argv=None):
    args = parse_args(argv)
    configure(args)
    fabric = LeafSpine(args)
    job = ExpertParallelJob(fabric, groups_of(args), args)
    job.install_sinks()
    job.start()
    ns.Simulator.Run()
    job.report()
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
