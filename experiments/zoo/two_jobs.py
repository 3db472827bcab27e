r"""Two training jobs sharing one leaf-spine, the second started later, written as an ns-3 user writes them.

Job A (data parallel): the first --hosts-per-job / leaves hosts of every leaf
run a ring all-reduce of --ring-mb MB after every --ring-compute-ms of compute.
Job B (expert parallel), started --second-start-ms later on the next hosts of
every leaf: per layer a dispatch all-to-all of --a2a-kb KB messages, --expert-ms
of compute, a combine all-to-all, then --attention-ms of compute. Both jobs
cross the spines, so from B's start on they share the uplinks. Every message of
either job is a BulkSend created in a Python callback on the PacketSink Rx
trace that tells its sender its inputs are in.

Topology: --leaves leaves of --hosts-per-leaf hosts, --spines spines, all links
--rate / --delay. TCP DCTCP. Every port a RED queue disc marking ECN:
--marking step is DCTCP's (MinTh = MaxTh = --k packets, QW 1, Gentle off);
--marking red-defaults leaves ns-3's RED defaults (MinTh 5, MaxTh 15, QW 0.002,
Gentle), as a user who only turns ECN on. Global routing.

Output: per iteration of job A the time its last chunk arrived, per iteration
of job B the same, then the bytes every sink received.
"""

import argparse

from ns import ns

RING_PORT = 4000
A2A_PORT_BASE = 4100


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=4)
    parser.add_argument("--spines", type=int, default=2)
    parser.add_argument("--hosts-per-leaf", type=int, default=4)
    parser.add_argument("--hosts-per-job", type=int, default=8)
    parser.add_argument("--ring-mb", type=float, default=8, help="MB job A all-reduces per iteration")
    parser.add_argument("--ring-iterations", type=int, default=6)
    parser.add_argument("--ring-compute-ms", type=float, default=5.0)
    parser.add_argument("--a2a-kb", type=float, default=256, help="KB per all-to-all message of job B")
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--a2a-iterations", type=int, default=4)
    parser.add_argument("--expert-ms", type=float, default=0.5)
    parser.add_argument("--attention-ms", type=float, default=1.0)
    parser.add_argument("--second-start-ms", type=float, default=15.0, help="when job B starts")
    parser.add_argument("--rate", default="40Gbps")
    parser.add_argument("--delay", default="1us")
    parser.add_argument("--marking", choices=("step", "red-defaults"), default="step")
    parser.add_argument("--k", type=float, default=65, help="step marking threshold, packets")
    args = parser.parse_args(argv)
    per_leaf, rest = divmod(args.hosts_per_job, args.leaves)
    if rest or 2 * per_leaf > args.hosts_per_leaf:
        parser.error(f"two jobs of {args.hosts_per_job} hosts do not fit evenly on {args.leaves} leaves "
                     f"of {args.hosts_per_leaf} hosts")
    return args


def network(args):
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpDctcp"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(2 << 20))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(2 << 20))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))  # no 200 ms delayed-ACK stalls
    ns.Config.SetDefault("ns3::RedQueueDisc::UseEcn", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::RedQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize("1000p")))
    if args.marking == "step":
        ns.Config.SetDefault("ns3::RedQueueDisc::UseHardDrop", ns.BooleanValue(False))
        ns.Config.SetDefault("ns3::RedQueueDisc::Gentle", ns.BooleanValue(False))
        ns.Config.SetDefault("ns3::RedQueueDisc::QW", ns.DoubleValue(1.0))
        ns.Config.SetDefault("ns3::RedQueueDisc::MinTh", ns.DoubleValue(args.k))
        ns.Config.SetDefault("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(args.k))
    nodes = ns.NodeContainer()
    nodes.Create(args.leaves * args.hosts_per_leaf + args.leaves + args.spines)
    hosts = args.leaves * args.hosts_per_leaf
    leaf = [hosts + k for k in range(args.leaves)]
    spine = [hosts + args.leaves + k for k in range(args.spines)]
    ns.InternetStackHelper().Install(nodes)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
    p2p.SetChannelAttribute("Delay", ns.StringValue(args.delay))
    tc = ns.TrafficControlHelper()
    tc.SetRootQueueDisc("ns3::RedQueueDisc")
    ip = ns.Ipv4AddressHelper()
    ip.SetBase("10.0.0.0", "255.255.255.0")
    address = []
    links = [(h, leaf[h // args.hosts_per_leaf]) for h in range(hosts)]
    links += [(a, b) for a in leaf for b in spine]
    for a, b in links:
        devices = p2p.Install(nodes.Get(a), nodes.Get(b))
        tc.Install(devices)
        interfaces = ip.Assign(devices)
        ip.NewNetwork()
        if a < hosts:
            address.append(interfaces.GetAddress(0))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return nodes, address


def sink_on(node, port, on_rx, keep):
    """A PacketSink on ``port`` whose Rx trace calls ``on_rx()``."""
    apps = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                               ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()).Install(node)
    apps.Start(ns.Seconds(0))
    sink = ns.DynamicCast[ns.PacketSink](apps.Get(0))

    def rx(packet, address):
        on_rx()

    fn = ns.cppyy.gbl.std.function["void(ns3::Ptr<const ns3::Packet>, const ns3::Address&)"](rx)
    cb = ns.Callback["void", "ns3::Ptr<const ns3::Packet>", "const ns3::Address&"](fn)
    keep += [rx, fn, cb]  # C++ only borrows them
    sink.TraceConnectWithoutContext("Rx", cb)
    return sink


def bulk_send(node, address, port, size, delay_ns):
    helper = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(address, port).ConvertTo())
    helper.SetAttribute("MaxBytes", ns.UintegerValue(size))
    helper.Install(node).Start(ns.NanoSeconds(delay_ns))


def now_ns():
    return ns.Simulator.Now().GetNanoSeconds()


class RingJob:
    """Job A: ring all-reduces; each host's next step leaves when its predecessor's chunk is in."""

    def __init__(self, nodes, address, members, args):
        self.nodes, self.address, self.members, self.args = nodes, address, members, args
        self.n = len(members)
        self.steps = 2 * (self.n - 1)
        self.chunk = int(args.ring_mb * 1e6) // self.n
        self.received = dict.fromkeys(members, 0)
        self.finished = dict.fromkeys(members, 0)
        self.begins_at = dict.fromkeys(members, 0)
        self.early = dict.fromkeys(members, 0)  # chunks of an iteration the host has not begun
        self.last_arrival = {}
        self.sinks = {}

    def install(self, keep):
        for h in self.members:
            self.sinks[h] = sink_on(self.nodes.Get(h), RING_PORT, lambda h=h: self.on_rx(h), keep)

    def send(self, h, delay_ns):
        successor = self.members[(self.members.index(h) + 1) % self.n]
        bulk_send(self.nodes.Get(h), self.address[successor], RING_PORT, self.chunk, delay_ns)

    def begin(self, h, delay_ns):
        self.begins_at[h] = now_ns() + delay_ns
        for _ in range(1 + self.early[h]):
            self.send(h, delay_ns)
        self.early[h] = 0

    def on_rx(self, h):
        while self.received[h] < self.sinks[h].GetTotalRx() // self.chunk:
            self.received[h] += 1
            iteration, step = divmod(self.received[h] - 1, self.steps)
            self.last_arrival[iteration] = ns.Simulator.Now().GetSeconds()
            if iteration > self.finished[h]:
                self.early[h] += 1
            elif step + 1 < self.steps:
                self.send(h, max(0, self.begins_at[h] - now_ns()))
            else:
                self.finished[h] += 1
                if self.finished[h] < self.args.ring_iterations:
                    self.begin(h, int(self.args.ring_compute_ms * 1e6))

    def iteration_ends(self):
        return [self.last_arrival[it] if all(f > it for f in self.finished.values()) else None
                for it in range(self.args.ring_iterations)]


class AllToAllJob:
    """Job B: per layer a dispatch and a combine all-to-all; a host's next one leaves after its compute."""

    def __init__(self, nodes, address, members, args):
        self.nodes, self.address, self.members, self.args = nodes, address, members, args
        self.size = int(args.a2a_kb * 1000)
        self.per_iteration = 2 * args.layers
        self.phases = self.per_iteration * args.a2a_iterations
        self.phase = dict.fromkeys(members, 0)  # the all-to-all each host is receiving
        self.last_arrival = {}
        self.sinks = {}  # (dst, src) -> PacketSink

    def install(self, keep):
        for dst in self.members:
            for src in self.members:
                if src != dst:
                    self.sinks[(dst, src)] = sink_on(self.nodes.Get(dst), A2A_PORT_BASE + src,
                                                     lambda dst=dst: self.on_rx(dst), keep)

    def all_to_all(self, src, delay_ns):
        for dst in self.members:
            if dst != src:
                bulk_send(self.nodes.Get(src), self.address[dst], A2A_PORT_BASE + src, self.size, delay_ns)

    def on_rx(self, h):
        phase = self.phase[h]
        if phase >= self.phases:
            return
        wanted = (phase + 1) * self.size
        if any(self.sinks[(h, src)].GetTotalRx() < wanted for src in self.members if src != h):
            return
        self.last_arrival[phase // self.per_iteration] = ns.Simulator.Now().GetSeconds()
        self.phase[h] = phase + 1
        if phase + 1 < self.phases:
            compute_ms = self.args.expert_ms if phase % 2 == 0 else self.args.attention_ms
            self.all_to_all(h, int(compute_ms * 1e6))

    def iteration_ends(self):
        return [self.last_arrival[it] if all(p >= (it + 1) * self.per_iteration for p in self.phase.values())
                else None for it in range(self.args.a2a_iterations)]


def main(argv=None):
    args = parse_args(argv)
    nodes, address = network(args)
    per_leaf = args.hosts_per_job // args.leaves
    on_leaf = [[leaf * args.hosts_per_leaf + k for leaf in range(args.leaves) for k in range(j, j + per_leaf)]
               for j in (0, per_leaf)]
    ring, experts = RingJob(nodes, address, on_leaf[0], args), AllToAllJob(nodes, address, on_leaf[1], args)
    keep = []
    ring.install(keep)
    experts.install(keep)
    for h in ring.members:
        ring.begin(h, int(args.ring_compute_ms * 1e6))
    for h in experts.members:
        experts.all_to_all(h, int(args.second_start_ms * 1e6))
    ns.Simulator.Run()
    for name, job in (("", ring), ("alltoall ", experts)):
        for it, end in enumerate(job.iteration_ends()):
            print(f"{name}iteration {it} end " + ("unfinished" if end is None else f"{end:.9f}"))
    for h, sink in sorted(ring.sinks.items()):
        print(f"ring host {h} received {sink.GetTotalRx()}")
    for (dst, src), sink in sorted(experts.sinks.items()):
        print(f"alltoall {dst}<-{src} received {sink.GetTotalRx()}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
