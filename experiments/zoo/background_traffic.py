r"""A training job beside background traffic on a leaf-spine, written as an ns-3 user writes it.

The job: --job-hosts hosts (the first ones of every leaf, so that its ring
crosses the spines) train with a ring all-reduce of --mb MB after every
--compute-ms of compute. In each of its 2 (N - 1) steps every host sends a chunk
of --mb / N MB to its successor, as a new BulkSend created, in a Python callback
on its PacketSink's Rx trace, as soon as the chunk of the step before has
arrived.

The background: flows arriving as a Poisson process (exponential inter-arrival
times from ns-3's ExponentialRandomVariable) for --background-ms, between random
pairs of hosts, sized after the web-search workload of the DCTCP paper
(EmpiricalRandomVariable over its CDF), at --load of the hosts' link capacity.
They are all made before the simulation starts, each a BulkSend with its start
time, to a PacketSink per host.

Topology: --leaves leaves of --hosts-per-leaf hosts, --spines spines, all links
--rate / --delay. TCP DCTCP. Every port a RED queue disc of --queue-packets
packets that marks ECN: --marking red-defaults leaves ns-3's other RED settings
as they are (MinTh 5, MaxTh 15, QW 0.002, Gentle, UseHardDrop), as a user who
only turns ECN on; its average queue then sits above twice MaxTh, where RED
drops instead of marking, and most flows wait out a retransmission timeout.
--marking step is DCTCP's (MinTh = MaxTh = --k packets, QW 1, Gentle off).
Global routing.

Output: per iteration of the job the time its last chunk arrived, the
background flows made and their bytes, then each sink's received bytes.
"""

import argparse

from ns import ns

JOB_PORT = 5000
BACKGROUND_PORT = 8000
#: Web search flow sizes (bytes) and their cumulative probabilities (DCTCP paper, as HPCC's generator uses them).
WEB_SEARCH_CDF = ((0, 0.0), (10_000, 0.15), (20_000, 0.2), (30_000, 0.3), (50_000, 0.4), (80_000, 0.53),
                  (200_000, 0.6), (1_000_000, 0.7), (2_000_000, 0.8), (5_000_000, 0.9), (10_000_000, 0.97),
                  (30_000_000, 1.0))


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=4)
    parser.add_argument("--spines", type=int, default=2)
    parser.add_argument("--hosts-per-leaf", type=int, default=4)
    parser.add_argument("--job-hosts", type=int, default=8, help="hosts of the training job")
    parser.add_argument("--mb", type=float, default=16, help="MB the job all-reduces per iteration")
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--compute-ms", type=float, default=5.0)
    parser.add_argument("--load", type=float, default=0.1, help="background load, a fraction of host capacity")
    parser.add_argument("--background-ms", type=float, default=150, help="how long background flows arrive")
    parser.add_argument("--rate", default="10Gbps")
    parser.add_argument("--delay", default="2us")
    parser.add_argument("--queue-packets", type=int, default=1000)
    parser.add_argument("--marking", choices=("red-defaults", "step"), default="red-defaults")
    parser.add_argument("--k", type=float, default=65, help="step marking threshold, packets")
    args = parser.parse_args(argv)
    if args.job_hosts % args.leaves or args.job_hosts // args.leaves > args.hosts_per_leaf:
        parser.error(f"{args.job_hosts} job hosts do not spread evenly over {args.leaves} leaves")
    return args


def build(args):
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpDctcp"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 21))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 21))
    hosts = ns.NodeContainer()
    hosts.Create(args.leaves * args.hosts_per_leaf)
    switches = ns.NodeContainer()
    switches.Create(args.leaves + args.spines)
    ns.InternetStackHelper().InstallAll()
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
    p2p.SetChannelAttribute("Delay", ns.StringValue(args.delay))
    tch = ns.TrafficControlHelper()
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "UseEcn", ns.BooleanValue(True),
                         "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{args.queue_packets}p")))
    if args.marking == "step":  # set before Install makes the queue discs
        for name, value in (("MinTh", ns.DoubleValue(args.k)), ("MaxTh", ns.DoubleValue(args.k)),
                            ("QW", ns.DoubleValue(1.0)), ("Gentle", ns.BooleanValue(False)),
                            ("UseHardDrop", ns.BooleanValue(False))):
            ns.Config.SetDefault(f"ns3::RedQueueDisc::{name}", value)
    addr = ns.Ipv4AddressHelper()
    addr.SetBase("10.1.0.0", "255.255.255.0")
    addresses = []
    for h in range(hosts.GetN()):
        devs = p2p.Install(hosts.Get(h), switches.Get(h // args.hosts_per_leaf))
        tch.Install(devs)
        addresses.append(addr.Assign(devs).GetAddress(0))
        addr.NewNetwork()
    for leaf in range(args.leaves):
        for spine in range(args.spines):
            devs = p2p.Install(switches.Get(leaf), switches.Get(args.leaves + spine))
            tch.Install(devs)
            addr.Assign(devs)
            addr.NewNetwork()
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return hosts, addresses


def background(hosts, addresses, args):
    """Poisson arrivals of web-search flows between random host pairs; returns the sinks, how many flows and
    their bytes."""
    sinks = []
    for h in range(hosts.GetN()):
        helper = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                     ns.InetSocketAddress(ns.Ipv4Address.GetAny(), BACKGROUND_PORT).ConvertTo())
        apps = helper.Install(hosts.Get(h))
        apps.Start(ns.Seconds(0))
        sinks.append(ns.DynamicCast[ns.PacketSink](apps.Get(0)))
    sizes = ns.CreateObject[ns.EmpiricalRandomVariable]()
    sizes.SetInterpolate(True)
    for size, probability in WEB_SEARCH_CDF:
        sizes.CDF(size, probability)
    mean_size = sum((b - a) * (p - q) / 2 + a * (p - q) for (a, q), (b, p) in zip(WEB_SEARCH_CDF, WEB_SEARCH_CDF[1:]))
    link_bps = ns.DataRate(args.rate).GetBitRate()
    arrivals_per_s = args.load * link_bps / 8 * hosts.GetN() / mean_size
    gaps = ns.CreateObject[ns.ExponentialRandomVariable]()
    gaps.SetAttribute("Mean", ns.DoubleValue(1.0 / arrivals_per_s))
    pick = ns.CreateObject[ns.UniformRandomVariable]()
    t, flows, total = 0.001 + gaps.GetValue(), 0, 0
    while t < 0.001 + args.background_ms / 1000:
        src = pick.GetInteger(0, hosts.GetN() - 1)
        dst = (src + pick.GetInteger(1, hosts.GetN() - 1)) % hosts.GetN()
        size = max(1, int(sizes.GetValue()))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                 ns.InetSocketAddress(addresses[dst], BACKGROUND_PORT).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(size))
        bulk.Install(hosts.Get(src)).Start(ns.Seconds(t))
        flows, total = flows + 1, total + size
        t += gaps.GetValue()
    return sinks, flows, total


class RingJob:
    """A ring all-reduce after every compute phase, each step a BulkSend made in an Rx callback."""

    def __init__(self, hosts, addresses, ring, args):
        self.hosts = hosts
        self.addresses = addresses
        self.ring = ring
        self.args = args
        self.n = len(ring)
        self.steps = 2 * (self.n - 1)
        self.chunk = int(args.mb * 1e6) // self.n
        self.received = {h: 0 for h in ring}
        self.finished = {h: 0 for h in ring}  # iterations each host has finished
        self.begins_at = {h: 0 for h in ring}  # ns: when its latest iteration's all-reduce begins
        self.waiting = {h: 0 for h in ring}  # steps that came before the host's own iteration began
        self.last_arrival = {}
        self.sinks = {}
        self._keep = []

    def successor(self, h):
        return self.ring[(self.ring.index(h) + 1) % self.n]

    def install(self):
        for h in self.ring:
            helper = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                         ns.InetSocketAddress(ns.Ipv4Address.GetAny(), JOB_PORT).ConvertTo())
            apps = helper.Install(self.hosts.Get(h))
            apps.Start(ns.Seconds(0))
            self.sinks[h] = ns.DynamicCast[ns.PacketSink](apps.Get(0))

            def rx(packet, address, h=h):
                self.on_rx(h)

            fn = ns.cppyy.gbl.std.function["void(ns3::Ptr<const ns3::Packet>, const ns3::Address&)"](rx)
            cb = ns.Callback["void", "ns3::Ptr<const ns3::Packet>", "const ns3::Address&"](fn)
            self._keep += [rx, fn, cb]  # C++ only borrows them
            self.sinks[h].TraceConnectWithoutContext("Rx", cb)

    def send(self, h, delay_ns):
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                 ns.InetSocketAddress(self.addresses[self.successor(h)], JOB_PORT).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(self.chunk))
        bulk.Install(self.hosts.Get(h)).Start(ns.NanoSeconds(delay_ns))

    def begin(self, h, delay_ns):
        """Host h's all-reduce begins ``delay_ns`` from now: its first chunk, and those waiting for it."""
        self.begins_at[h] = ns.Simulator.Now().GetNanoSeconds() + delay_ns
        for _ in range(1 + self.waiting[h]):
            self.send(h, delay_ns)
        self.waiting[h] = 0

    def on_rx(self, h):
        while self.received[h] < self.sinks[h].GetTotalRx() // self.chunk:
            self.received[h] += 1
            iteration, step = divmod(self.received[h] - 1, self.steps)
            self.last_arrival[iteration] = ns.Simulator.Now().GetSeconds()
            if iteration > self.finished[h]:  # the predecessor is an iteration ahead
                self.waiting[h] += 1
            elif step + 1 < self.steps:
                self.send(h, max(0, self.begins_at[h] - ns.Simulator.Now().GetNanoSeconds()))
            else:
                self.finished[h] += 1
                if self.finished[h] < self.args.iterations:
                    self.begin(h, int(self.args.compute_ms * 1e6))

    def report(self):
        for it in range(self.args.iterations):
            done = all(count > it for count in self.finished.values())
            print(f"iteration {it} end " + (f"{self.last_arrival[it]:.9f}" if done else "unfinished"))


def main(argv=None):
    args = parse_args(argv)
    hosts, addresses = build(args)
    per_leaf = args.job_hosts // args.leaves
    ring = [leaf * args.hosts_per_leaf + k for leaf in range(args.leaves) for k in range(per_leaf)]
    job = RingJob(hosts, addresses, ring, args)
    job.install()
    sinks, flows, total = background(hosts, addresses, args)
    for h in ring:
        job.begin(h, int(args.compute_ms * 1e6))
    ns.Simulator.Run()
    job.report()
    print(f"background flows {flows} bytes {total}")
    for h, sink in job.sinks.items():
        print(f"host {h} job sink received {sink.GetTotalRx()}")
    for h, sink in enumerate(sinks):
        print(f"host {h} background sink received {sink.GetTotalRx()}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
