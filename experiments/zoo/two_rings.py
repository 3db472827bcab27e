r"""Two ring all-reduces that contend on a leaf-spine, written as an ns-3 user writes them.

Two communicators (as NCCL's rings) all-reduce a gradient bucket of --mb MB each,
at the same time, over the same hosts. Ring A visits the hosts leaf by leaf, so
only its hops from one leaf to the next cross a spine; ring B takes a host of each
leaf in turn, so every hop of it crosses a spine, and it contends with ring A on
the uplinks. An all-reduce is 2 (N - 1) steps, in each of which every host sends
a chunk of --mb / N MB to its successor. A host sends its next chunk as soon as
its PacketSink has received the chunk of the step before from its predecessor:
the sink's Rx trace tells it, in a Python callback, which creates the next
BulkSend there and then. A host done with both all-reduces computes for
--compute-ms (the next iteration's forward and backward passes), then starts
both rings again.

Topology: --leaves leaves of --hosts-per-leaf hosts, --spines spines, every
leaf linked to every spine; all links --rate / --delay. TCP DCTCP, and on every
port RED marking ECN as DCTCP wants it: MinTh = MaxTh = --k packets, QW 1,
Gentle off. Global routing (one path per destination unless --ecmp, ns-3's
random per-packet ECMP).

Output: per iteration the time its last chunk arrived, then the bytes each
host's sinks received.
"""

import argparse

from ns import ns

RING_PORTS = {"A": 5000, "B": 5001}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=2)
    parser.add_argument("--spines", type=int, default=2)
    parser.add_argument("--hosts-per-leaf", type=int, default=4)
    parser.add_argument("--mb", type=float, default=32, help="MB each ring all-reduces per iteration")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--compute-ms", type=float, default=2.0, help="compute between all-reduces")
    parser.add_argument("--rate", default="10Gbps")
    parser.add_argument("--delay", default="1us")
    parser.add_argument("--k", type=float, default=65, help="ECN marking threshold, packets")
    parser.add_argument("--ecmp", action="store_true", help="ns-3's random per-packet ECMP")
    args = parser.parse_args(argv)
    if args.leaves < 2 or args.hosts_per_leaf < 1:
        parser.error("two rings contend on the uplinks only with 2 or more leaves")
    return args


def build_network(args):
    """Hosts, leaves and spines with RED/ECN on every port; returns the hosts and their addresses."""
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpDctcp"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(4 << 20))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(4 << 20))
    ns.Config.SetDefault("ns3::RedQueueDisc::UseEcn", ns.BooleanValue(True))
    ns.Config.SetDefault("ns3::RedQueueDisc::UseHardDrop", ns.BooleanValue(False))
    ns.Config.SetDefault("ns3::RedQueueDisc::Gentle", ns.BooleanValue(False))
    ns.Config.SetDefault("ns3::RedQueueDisc::QW", ns.DoubleValue(1.0))
    ns.Config.SetDefault("ns3::RedQueueDisc::MinTh", ns.DoubleValue(args.k))
    ns.Config.SetDefault("ns3::RedQueueDisc::MaxTh", ns.DoubleValue(args.k))
    ns.Config.SetDefault("ns3::RedQueueDisc::MaxSize", ns.QueueSizeValue(ns.QueueSize("2000p")))
    ns.Config.SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", ns.BooleanValue(args.ecmp))

    hosts = ns.NodeContainer()
    hosts.Create(args.leaves * args.hosts_per_leaf)
    leaves = ns.NodeContainer()
    leaves.Create(args.leaves)
    spines = ns.NodeContainer()
    spines.Create(args.spines)
    internet = ns.InternetStackHelper()
    internet.Install(hosts)
    internet.Install(leaves)
    internet.Install(spines)

    link = ns.PointToPointHelper()
    link.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
    link.SetChannelAttribute("Delay", ns.StringValue(args.delay))
    red = ns.TrafficControlHelper()
    red.SetRootQueueDisc("ns3::RedQueueDisc")
    ip = ns.Ipv4AddressHelper()
    addresses = []
    for h in range(hosts.GetN()):
        devices = link.Install(hosts.Get(h), leaves.Get(h // args.hosts_per_leaf))
        red.Install(devices)
        ip.SetBase(ns.Ipv4Address(f"10.1.{h}.0"), ns.Ipv4Mask("255.255.255.0"))
        addresses.append(ip.Assign(devices).GetAddress(0))
    for leaf in range(args.leaves):
        for spine in range(args.spines):
            devices = link.Install(leaves.Get(leaf), spines.Get(spine))
            red.Install(devices)
            ip.SetBase(ns.Ipv4Address(f"10.2.{leaf * args.spines + spine}.0"), ns.Ipv4Mask("255.255.255.0"))
            ip.Assign(devices)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return hosts, addresses


def ring_orders(args):
    """Ring A leaf by leaf; ring B one host of each leaf in turn (every hop to another leaf)."""
    per_leaf = args.hosts_per_leaf
    ring_a = list(range(args.leaves * per_leaf))
    ring_b = [leaf * per_leaf + j for j in range(per_leaf) for leaf in range(args.leaves)]
    return {"A": ring_a, "B": ring_b}


class TwoRings:
    """Each host's progress through both rings' steps, advanced from its sinks' Rx traces."""

    def __init__(self, hosts, addresses, args):
        self.hosts = hosts
        self.addresses = addresses
        self.args = args
        self.orders = ring_orders(args)
        self.n = len(addresses)
        self.steps = 2 * (self.n - 1)
        self.chunk = int(args.mb * 1e6) // self.n
        self.successor = {ring: {order[k]: order[(k + 1) % self.n] for k in range(self.n)}
                          for ring, order in self.orders.items()}
        self.received = {ring: [0] * self.n for ring in self.orders}  # chunks each host has received
        self.finished = [0] * self.n  # iterations each host has finished
        self.begins_at = [0] * self.n  # ns: when each host's latest iteration begins (its compute ends)
        self.waiting = [[] for _ in range(self.n)]  # rings whose next step waits for the host's next iteration
        self.sinks = {}  # (ring, host) -> PacketSink
        self.last_arrival = {}  # iteration -> time its last chunk arrived
        self._alive = []

    def install_sinks(self):
        for ring, port in RING_PORTS.items():
            for h in range(self.n):
                helper = ns.PacketSinkHelper(
                    "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
                apps = helper.Install(self.hosts.Get(h))
                apps.Start(ns.Seconds(0))
                self.sinks[(ring, h)] = ns.DynamicCast[ns.PacketSink](apps.Get(0))

                def received(packet, address, ring=ring, h=h):
                    self.on_rx(ring, h)

                on_rx = ns.cppyy.gbl.std.function["void(ns3::Ptr<const ns3::Packet>, const ns3::Address&)"](received)
                callback = ns.Callback["void", "ns3::Ptr<const ns3::Packet>", "const ns3::Address&"](on_rx)
                self._alive += [received, on_rx, callback]  # C++ only borrows them
                self.sinks[(ring, h)].TraceConnectWithoutContext("Rx", callback)

    def send(self, ring, h, delay):
        """Host h's next chunk of ``ring`` to its successor, as a new BulkSend started ``delay`` from now."""
        successor = self.successor[ring][h]
        helper = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(self.addresses[successor], RING_PORTS[ring]).ConvertTo())
        helper.SetAttribute("MaxBytes", ns.UintegerValue(self.chunk))
        helper.Install(self.hosts.Get(h)).Start(delay)

    def start_iteration(self, h, delay):
        self.begins_at[h] = ns.Simulator.Now().GetNanoSeconds() + delay.GetNanoSeconds()
        for ring in self.orders:
            self.send(ring, h, delay)
        for ring in self.waiting[h]:  # chunks of this iteration that came while h was still in the one before
            self.send(ring, h, delay)
        self.waiting[h] = []

    def on_rx(self, ring, h):
        complete = self.sinks[(ring, h)].GetTotalRx() // self.chunk
        while self.received[ring][h] < complete:
            self.received[ring][h] += 1
            self.chunk_arrived(ring, h, self.received[ring][h])

    def chunk_arrived(self, ring, h, count):
        iteration, step = divmod(count - 1, self.steps)
        if step + 1 < self.steps:
            if iteration > self.finished[h]:  # h has not finished the iteration before: its data is not ready
                self.waiting[h].append(ring)
            else:  # the next step, now, or once h's compute ends
                self.send(ring, h, ns.NanoSeconds(max(0, self.begins_at[h] - ns.Simulator.Now().GetNanoSeconds())))
            return
        self.last_arrival[iteration] = ns.Simulator.Now().GetSeconds()
        done = (iteration + 1) * self.steps
        if all(self.received[r][h] >= done for r in self.orders):
            self.finished[h] = iteration + 1
            if iteration + 1 < self.args.iterations:
                self.start_iteration(h, ns.MicroSeconds(int(self.args.compute_ms * 1000)))

    def report(self):
        for it in range(self.args.iterations):
            end = self.last_arrival.get(it)
            finished = all(done > it for done in self.finished)
            print(f"iteration {it} end " + (f"{end:.9f}" if finished else "unfinished"))
        for (ring, h), sink in sorted(self.sinks.items()):
            print(f"ring {ring} host {h} received {sink.GetTotalRx()} bytes")


def main(argv=None):
    args = parse_args(argv)
    hosts, addresses = build_network(args)
    rings = TwoRings(hosts, addresses, args)
    rings.install_sinks()
    for h in range(rings.n):
        rings.start_iteration(h, ns.MilliSeconds(1))
    ns.Simulator.Run()
    rings.report()
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
