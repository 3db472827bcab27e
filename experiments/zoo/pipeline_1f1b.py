r"""A 1F1B pipeline across leaves with data-parallel gradient sync, written as an ns-3 user writes it.

The model is cut into --stages pipeline stages, and --replicas copies of the
pipeline train side by side (data parallelism). Stage p of every replica sits on
leaf p, so each activation (forward) and each activation gradient (backward) of
a micro-batch crosses the spine. Each host runs its stage's 1F1B schedule for
--micro-batches micro-batches: p's warm-up forwards (stages - p - 1 of them),
then one forward and one backward in turn, then the cool-down backwards; every
operation waits for its input (the activation from the stage before, the
gradient from the stage after), runs --forward-ms or --backward-ms, and its
output goes out as a new BulkSend started when the computation ends. Inputs
are seen arriving in the PacketSinks' Rx traces, in Python callbacks, which
work out what the stage can run next and create its BulkSends there and then.
After its last backward, each host all-reduces its stage's --grad-mb MB of
gradients in a ring with the same stage of the other replicas (all on its leaf),
takes an optimizer step (--optimizer-ms) and starts the next iteration.

Topology: one leaf per stage with --replicas hosts, --spines spines, all links
--rate / --delay; TCP DCTCP, every port a RED queue marking ECN at --k packets
(MinTh = MaxTh, QW 1, Gentle off). Global routing.

Output: per iteration the time its last gradient chunk arrived, then per host
the bytes each of its sinks received.
"""

import argparse

from ns import ns

ACTIVATION_PORT, GRADIENT_PORT, SYNC_PORT = 6000, 6001, 6002


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stages", type=int, default=4, help="pipeline stages, one leaf each")
    parser.add_argument("--replicas", type=int, default=4, help="data-parallel replicas, one host per leaf each")
    parser.add_argument("--spines", type=int, default=2)
    parser.add_argument("--micro-batches", type=int, default=8)
    parser.add_argument("--activation-mb", type=float, default=1.0, help="MB per micro-batch activation")
    parser.add_argument("--grad-mb", type=float, default=8.0, help="MB of gradients per stage")
    parser.add_argument("--forward-ms", type=float, default=0.2)
    parser.add_argument("--backward-ms", type=float, default=0.4)
    parser.add_argument("--optimizer-ms", type=float, default=0.5)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--rate", default="25Gbps")
    parser.add_argument("--delay", default="1us")
    parser.add_argument("--k", type=float, default=65, help="RED MinTh = MaxTh, packets")
    args = parser.parse_args(argv)
    if args.stages < 2 or args.replicas < 2:
        parser.error("a pipeline with gradient sync needs 2 or more stages and 2 or more replicas")
    return args


def leaf_spine(args):
    """One leaf per stage with a host per replica; returns the hosts (stage-major) and their addresses."""
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpDctcp"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(4 << 20))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(4 << 20))
    # ACK every segment: with delayed ACKs, a window cut to one segment by ECN waits for the 200 ms timer
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    hosts, leaves, spines = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    hosts.Create(args.stages * args.replicas)
    leaves.Create(args.stages)
    spines.Create(args.spines)
    stack = ns.InternetStackHelper()
    for nodes in (hosts, leaves, spines):
        stack.Install(nodes)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
    p2p.SetChannelAttribute("Delay", ns.StringValue(args.delay))
    red = ns.TrafficControlHelper()
    red.SetRootQueueDisc("ns3::RedQueueDisc",
                         "UseEcn", ns.BooleanValue(True), "UseHardDrop", ns.BooleanValue(False),
                         "Gentle", ns.BooleanValue(False), "QW", ns.DoubleValue(1.0),
                         "MinTh", ns.DoubleValue(args.k), "MaxTh", ns.DoubleValue(args.k),
                         "MaxSize", ns.QueueSizeValue(ns.QueueSize("1000p")))
    ip = ns.Ipv4AddressHelper("10.0.0.0", "255.255.255.0")
    addresses = []
    for h in range(hosts.GetN()):
        devices = p2p.Install(hosts.Get(h), leaves.Get(h // args.replicas))
        red.Install(devices)
        addresses.append(ip.Assign(devices).GetAddress(0))
        ip.NewNetwork()
    for leaf in range(args.stages):
        for spine in range(args.spines):
            devices = p2p.Install(leaves.Get(leaf), spines.Get(spine))
            red.Install(devices)
            ip.Assign(devices)
            ip.NewNetwork()
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return hosts, addresses


def one_f_one_b(stage, stages, micro_batches):
    """Stage ``stage``'s operations in 1F1B order: ("F", m) and ("B", m)."""
    warmup = min(stages - stage - 1, micro_batches)
    ops = [("F", m) for m in range(warmup)]
    for m in range(micro_batches - warmup):
        ops += [("F", warmup + m), ("B", m)]
    return ops + [("B", m) for m in range(micro_batches - warmup, micro_batches)]


class Host:
    """One host's place in the schedule: its stage, replica, next operation and what it has received."""

    def __init__(self, index, args):
        self.stage, self.replica = divmod(index, args.replicas)
        self.ops = one_f_one_b(self.stage, args.stages, args.micro_batches)
        self.iteration = 0
        self.next_op = 0
        self.free_at = 0  # ns: when its computation in hand ends
        self.activations = 0  # received, over all iterations
        self.gradients = 0
        self.sync_chunks = 0
        self.sync_begins = None  # ns: when this iteration's gradient sync begins, once known
        self.early_chunks = []  # sync chunks (iteration, step) that came before this host could use them
        self.done = 0  # iterations finished


class Pipeline:
    """The hosts' 1F1B schedules and gradient rings, advanced from their sinks' Rx traces."""

    def __init__(self, nodes, addresses, args):
        self.nodes = nodes
        self.addresses = addresses
        self.args = args
        self.hosts = [Host(h, args) for h in range(len(addresses))]
        self.activation_bytes = int(args.activation_mb * 1e6)
        self.chunk_bytes = int(args.grad_mb * 1e6) // args.replicas
        self.sync_steps = 2 * (args.replicas - 1)
        self.compute_ns = {"F": int(args.forward_ms * 1e6), "B": int(args.backward_ms * 1e6)}
        self.sinks = {}  # (host, port) -> PacketSink
        self.last_arrival = {}  # iteration -> time its last gradient chunk arrived
        self._alive = []

    def host_at(self, stage, replica):
        return stage * self.args.replicas + replica

    def install_sinks(self):
        for h, host in enumerate(self.hosts):
            ports = [SYNC_PORT]
            if host.stage > 0:
                ports.append(ACTIVATION_PORT)
            if host.stage < self.args.stages - 1:
                ports.append(GRADIENT_PORT)
            for port in ports:
                anywhere = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
                app = ns.PacketSinkHelper("ns3::TcpSocketFactory", anywhere).Install(self.nodes.Get(h))
                app.Start(ns.Seconds(0))
                sink = ns.DynamicCast[ns.PacketSink](app.Get(0))
                self.sinks[(h, port)] = sink

                def on_rx(packet, address, h=h, port=port):
                    self.received(h, port)

                function = ns.cppyy.gbl.std.function["void(ns3::Ptr<const ns3::Packet>, const ns3::Address&)"](on_rx)
                callback = ns.Callback["void", "ns3::Ptr<const ns3::Packet>", "const ns3::Address&"](function)
                self._alive += [on_rx, function, callback]  # C++ only borrows them
                sink.TraceConnectWithoutContext("Rx", callback)

    def send(self, src, dst, port, size, at_ns):
        """A BulkSend of ``size`` bytes from host src to host dst's ``port``, started at ``at_ns``."""
        helper = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                   ns.InetSocketAddress(self.addresses[dst], port).ConvertTo())
        helper.SetAttribute("MaxBytes", ns.UintegerValue(size))
        app = helper.Install(self.nodes.Get(src))
        app.Start(ns.NanoSeconds(max(0, at_ns - ns.Simulator.Now().GetNanoSeconds())))

    def received(self, h, port):
        host = self.hosts[h]
        total = self.sinks[(h, port)].GetTotalRx()
        if port == ACTIVATION_PORT:
            host.activations = total // self.activation_bytes
            self.advance(h)
        elif port == GRADIENT_PORT:
            host.gradients = total // self.activation_bytes
            self.advance(h)
        else:
            while host.sync_chunks < total // self.chunk_bytes:
                host.sync_chunks += 1
                iteration, step = divmod(host.sync_chunks - 1, self.sync_steps)
                self.last_arrival[iteration] = ns.Simulator.Now().GetSeconds()
                host.early_chunks.append((iteration, step))
            self.use_sync_chunks(h)

    def ready(self, host, op):
        kind, m = op
        wanted = host.iteration * self.args.micro_batches + m + 1
        if kind == "F":
            return host.stage == 0 or host.activations >= wanted
        return host.stage == self.args.stages - 1 or host.gradients >= wanted

    def advance(self, h):
        """Schedule every operation of host h whose input is here, in order; after the last, the gradient sync."""
        host = self.hosts[h]
        if host.done >= self.args.iterations:
            return
        now = ns.Simulator.Now().GetNanoSeconds()
        while host.next_op < len(host.ops) and self.ready(host, host.ops[host.next_op]):
            kind, m = host.ops[host.next_op]
            host.free_at = max(host.free_at, now) + self.compute_ns[kind]
            host.next_op += 1
            if kind == "F" and host.stage < self.args.stages - 1:
                self.send(h, self.host_at(host.stage + 1, host.replica), ACTIVATION_PORT, self.activation_bytes,
                          host.free_at)
            elif kind == "B" and host.stage > 0:
                self.send(h, self.host_at(host.stage - 1, host.replica), GRADIENT_PORT, self.activation_bytes,
                          host.free_at)
        if host.next_op == len(host.ops) and host.sync_begins is None:
            host.sync_begins = host.free_at
            self.send(h, self.sync_successor(host), SYNC_PORT, self.chunk_bytes, host.sync_begins)
            self.use_sync_chunks(h)

    def sync_successor(self, host):
        return self.host_at(host.stage, (host.replica + 1) % self.args.replicas)

    def use_sync_chunks(self, h):
        """Send on the gradient chunks of this iteration that host h has; finish its iteration after the last."""
        host = self.hosts[h]
        while host.sync_begins is not None:
            usable = [chunk for chunk in host.early_chunks if chunk[0] == host.iteration]
            if not usable:
                return
            host.early_chunks.remove(usable[0])
            if usable[0][1] + 1 < self.sync_steps:
                self.send(h, self.sync_successor(host), SYNC_PORT, self.chunk_bytes, host.sync_begins)
            else:
                self.finish_iteration(h)

    def finish_iteration(self, h):
        host = self.hosts[h]
        host.done += 1
        if host.done == self.args.iterations:
            host.sync_begins = None
            return
        host.free_at = max(host.sync_begins, ns.Simulator.Now().GetNanoSeconds()) + int(self.args.optimizer_ms * 1e6)
        host.iteration += 1
        host.next_op = 0
        host.sync_begins = None
        self.advance(h)

    def report(self):
        for it in range(self.args.iterations):
            finished = all(host.done > it for host in self.hosts)
            print(f"iteration {it} end " + (f"{self.last_arrival[it]:.9f}" if finished else "unfinished"))
        for (h, port), sink in sorted(self.sinks.items()):
            name = {ACTIVATION_PORT: "activations", GRADIENT_PORT: "gradients", SYNC_PORT: "gradient sync"}[port]
            print(f"host {h} (stage {self.hosts[h].stage}) {name} received {sink.GetTotalRx()}")


def main(argv=None):
    args = parse_args(argv)
    nodes, addresses = leaf_spine(args)
    pipeline = Pipeline(nodes, addresses, args)
    pipeline.install_sinks()
    for h, host in enumerate(pipeline.hosts):
        host.free_at = 1_000_000  # the first forward starts at 1 ms
        pipeline.advance(h)
    ns.Simulator.Run()
    pipeline.report()
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
