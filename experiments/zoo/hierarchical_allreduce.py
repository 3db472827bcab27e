r"""A hierarchical all-reduce on a leaf-spine, written as an ns-3 user writes it.

Every iteration, each host all-reduces --mb MB of gradients in three phases:

  reduce-scatter  a ring among the hosts of its leaf: H - 1 steps of --mb / H MB
                  (H hosts per leaf); each host then holds 1/H of the leaf's sum;
  all-reduce      a ring among the hosts of the same local rank on every leaf:
                  2 (L - 1) steps of --mb / (H L) MB (L leaves), over the spines;
  all-gather      the leaf ring again: H - 1 steps of --mb / H MB.

Each phase has its own port, and each host a PacketSink on it whose Rx trace
tells the host, in a Python callback, that a chunk has arrived: it then creates
the BulkSend of its next step there and then, or enters the next phase. A host
done with the all-gather computes for --compute-ms (the next forward and
backward passes) and starts the next iteration's reduce-scatter.

Topology: --leaves leaves of --hosts-per-leaf hosts, --spines spines, every
leaf linked to every spine, all links --rate / --delay. TCP DCTCP; every
switch port (and host NIC) a RED queue marking ECN at --k packets (MinTh =
MaxTh, QW 1, Gentle off). Global routing.

Output: per iteration the time its last chunk arrived, then per host the bytes
each phase's sink received.
"""

import argparse

from ns import ns

PORT_BASE = 7000
PHASES = ("reduce-scatter", "all-reduce", "all-gather")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--leaves", type=int, default=4)
    parser.add_argument("--spines", type=int, default=2)
    parser.add_argument("--hosts-per-leaf", type=int, default=4)
    parser.add_argument("--mb", type=float, default=25, help="MB each host all-reduces per iteration")
    parser.add_argument("--iterations", type=int, default=2)
    parser.add_argument("--compute-ms", type=float, default=3.0, help="compute between all-reduces")
    parser.add_argument("--rate", default="25Gbps")
    parser.add_argument("--delay", default="2us")
    parser.add_argument("--k", type=float, default=65, help="RED MinTh = MaxTh, packets")
    args = parser.parse_args(argv)
    if args.leaves < 2 or args.hosts_per_leaf < 2:
        parser.error("a hierarchical all-reduce needs 2 or more leaves of 2 or more hosts")
    return args


class Fabric:
    """A leaf-spine of hosts, with DCTCP's RED marking on every port."""

    def __init__(self, args):
        ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpDctcp"))
        ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
        ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(2 << 20))
        ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(2 << 20))
        self.hosts = ns.NodeContainer()
        self.hosts.Create(args.leaves * args.hosts_per_leaf)
        switches = ns.NodeContainer()
        switches.Create(args.leaves + args.spines)
        ns.InternetStackHelper().InstallAll()

        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
        p2p.SetChannelAttribute("Delay", ns.StringValue(args.delay))
        tch = ns.TrafficControlHelper()
        tch.SetRootQueueDisc(
            "ns3::RedQueueDisc", "MinTh", ns.DoubleValue(args.k), "MaxTh", ns.DoubleValue(args.k),
            "QW", ns.DoubleValue(1), "Gentle", ns.BooleanValue(False), "UseEcn", ns.BooleanValue(True),
            "UseHardDrop", ns.BooleanValue(False), "MaxSize", ns.QueueSizeValue(ns.QueueSize("1000p")))
        ipv4 = ns.Ipv4AddressHelper()
        ipv4.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.252"))
        self.address = []
        for h in range(self.hosts.GetN()):
            devices = p2p.Install(self.hosts.Get(h), switches.Get(h // args.hosts_per_leaf))
            tch.Install(devices)
            self.address.append(ipv4.Assign(devices).GetAddress(0))
            ipv4.NewNetwork()
        for leaf in range(args.leaves):
            for spine in range(args.spines):
                devices = p2p.Install(switches.Get(leaf), switches.Get(args.leaves + spine))
                tch.Install(devices)
                ipv4.Assign(devices)
                ipv4.NewNetwork()
        ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()


class HierarchicalAllReduce:
    """Each host's way through the phases of every iteration, advanced from its sinks' Rx traces.

    A host's *stage* counts the phases it has entered over all iterations:
    stage = iteration * 3 + phase. A chunk of a stage the host has not
    entered yet (its ring neighbour is ahead of it) waits for it.
    """

    def __init__(self, fabric, args):
        self.fabric = fabric
        self.args = args
        H, L = args.hosts_per_leaf, args.leaves
        self.n = H * L
        total = int(args.mb * 1e6)
        leaf_ring = {h: (h // H) * H + (h % H + 1) % H for h in range(self.n)}
        rank_ring = {h: (h + H) % self.n for h in range(self.n)}
        self.successor = [leaf_ring, rank_ring, leaf_ring]
        self.steps = [H - 1, 2 * (L - 1), H - 1]
        self.chunk = [total // H, total // (H * L), total // H]
        self.received = [[0] * self.n for _ in PHASES]
        self.stage = [-1] * self.n  # the stage each host has entered
        self.begins_at = [0] * self.n  # ns: when the host's current stage begins
        self.waiting = [{} for _ in range(self.n)]  # stage -> chunks that came before the host entered it
        self.sinks = {}  # (host, phase) -> PacketSink
        self.last_arrival = {}  # iteration -> time its last chunk arrived
        self._alive = []

    def install_sinks(self):
        for h in range(self.n):
            for phase in range(len(PHASES)):
                local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT_BASE + phase)
                apps = ns.PacketSinkHelper("ns3::TcpSocketFactory", local.ConvertTo()).Install(self.fabric.hosts.Get(h))
                apps.Start(ns.Seconds(0))
                sink = ns.DynamicCast[ns.PacketSink](apps.Get(0))
                self.sinks[(h, phase)] = sink

                def rx(packet, address, h=h, phase=phase):
                    self.on_rx(h, phase)

                fn = ns.cppyy.gbl.std.function["void(ns3::Ptr<const ns3::Packet>, const ns3::Address&)"](rx)
                cb = ns.Callback["void", "ns3::Ptr<const ns3::Packet>", "const ns3::Address&"](fn)
                self._alive += [rx, fn, cb]  # C++ only borrows them
                sink.TraceConnectWithoutContext("Rx", cb)

    def send(self, h, phase, delay_ns):
        peer = self.successor[phase][h]
        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(self.fabric.address[peer], PORT_BASE + phase).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(self.chunk[phase]))
        bulk.SetAttribute("SendSize", ns.UintegerValue(65536))
        bulk.Install(self.fabric.hosts.Get(h)).Start(ns.NanoSeconds(delay_ns))

    def enter(self, h, stage, delay_ns):
        """Host h enters ``stage`` ``delay_ns`` from now: its first step, then the chunks that came early."""
        self.stage[h] = stage
        self.begins_at[h] = ns.Simulator.Now().GetNanoSeconds() + delay_ns
        self.send(h, stage % len(PHASES), delay_ns)
        for step in self.waiting[h].pop(stage, []):
            self.arrived(h, stage, step)

    def on_rx(self, h, phase):
        complete = self.sinks[(h, phase)].GetTotalRx() // self.chunk[phase]
        while self.received[phase][h] < complete:
            self.received[phase][h] += 1
            iteration, step = divmod(self.received[phase][h] - 1, self.steps[phase])
            self.last_arrival[iteration] = ns.Simulator.Now().GetSeconds()
            self.arrived(h, iteration * len(PHASES) + phase, step)

    def arrived(self, h, stage, step):
        """Chunk ``step`` of ``stage`` is at host h: its next step, or its next stage."""
        if stage > self.stage[h]:  # a neighbour is ahead: h's own data for that stage is not ready
            self.waiting[h].setdefault(stage, []).append(step)
            return
        phase = stage % len(PHASES)
        ready_in = max(0, self.begins_at[h] - ns.Simulator.Now().GetNanoSeconds())
        if step + 1 < self.steps[phase]:
            self.send(h, phase, ready_in)
        elif phase + 1 < len(PHASES):
            self.enter(h, stage + 1, ready_in)
        elif stage // len(PHASES) + 1 < self.args.iterations:
            self.enter(h, stage + 1, ready_in + int(self.args.compute_ms * 1e6))
        else:
            self.stage[h] = stage + 1  # done

    def report(self):
        for it in range(self.args.iterations):
            done = all(stage >= (it + 1) * len(PHASES) for stage in self.stage)
            print(f"iteration {it} end " + (f"{self.last_arrival[it]:.9f}" if done else "unfinished"))
        for (h, phase), sink in sorted(self.sinks.items()):
            print(f"host {h} {PHASES[phase]} received {sink.GetTotalRx()}")


def main(argv=None):
    args = parse_args(argv)
    fabric = Fabric(args)
    job = HierarchicalAllReduce(fabric, args)
    job.install_sinks()
    for h in range(job.n):
        job.enter(h, 0, 1_000_000)  # after 1 ms
    ns.Simulator.Run()
    job.report()
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
