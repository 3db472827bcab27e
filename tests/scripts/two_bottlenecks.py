"""Two bottlenecks tied into one partition: long flows on one, a chain of short flows on the other.

A switch with four 40 Gbps senders and two 10 Gbps receivers, DCTCP with a RED step
marker at every switch port. Each sender sends --long flows of --long-mb to receiver
B, all from the start: they share B's port. Senders 0 and 1 also send a chain of
--chain steps to receiver A, each step a message of --chain-mb from each, a new
BulkSend that a Python callback on A's sink creates once the step before has arrived
whole: A's port changes flows every few ms, and the flows leaving or arriving there
never change B's flows' shares. The senders' 40 Gbps uplinks, which both cross, tie
them into one partition without ever filling. The script prints when each step
arrived and each sink's bytes.
"""

import argparse

from ns import ns

PORT_A, PORT_B = 9000, 9001


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--long", type=int, default=2, help="long flows per sender to receiver B")
    parser.add_argument("--long-senders", type=int, default=4, help="senders of long flows (1-4)")
    parser.add_argument("--delay", default="5us", help="every link's delay")
    parser.add_argument("--long-mb", type=float, default=12.0)
    parser.add_argument("--chain", type=int, default=6, help="steps of the chain to receiver A")
    parser.add_argument("--chain-mb", type=float, default=5.0)
    parser.add_argument("--chain-udp", default="", metavar="RATE",
                        help="the chain's messages are constant-rate OnOff/UDP flows at this rate (default: BulkSend)")
    return parser.parse_args()


def build(delay):
    """The switch, four senders on 40 Gbps and two receivers on 10 Gbps; returns (senders, [A, B])."""
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpDctcp"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(4 << 20))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(4 << 20))
    ns.Config.SetDefault("ns3::TcpSocketBase::UseEcn", ns.StringValue("On"))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    nodes = ns.NodeContainer()
    nodes.Create(7)
    switch = nodes.Get(6)
    stack = ns.InternetStackHelper()
    stack.Install(nodes)
    stack.AssignStreams(nodes, 0)
    red = ns.TrafficControlHelper()
    red.SetRootQueueDisc(
        "ns3::RedQueueDisc", "UseEcn", ns.BooleanValue(True), "UseHardDrop", ns.BooleanValue(False),
        "Gentle", ns.BooleanValue(False),
        "QW", ns.DoubleValue(1.0), "MinTh", ns.DoubleValue(65), "MaxTh", ns.DoubleValue(65),
        "MaxSize", ns.QueueSizeValue(ns.QueueSize("2666p")))
    addresses = ns.Ipv4AddressHelper()
    for i in range(6):
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue("40Gbps" if i < 4 else "10Gbps"))
        p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
        devices = p2p.Install(nodes.Get(i), switch)
        red.Install(devices.Get(1))
        addresses.SetBase(ns.Ipv4Address(f"10.0.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addresses.Assign(devices)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return [nodes.Get(i) for i in range(4)], [nodes.Get(4), nodes.Get(5)]


def address(node):
    return node.GetObject[ns.Ipv4]().GetAddress(1, 0).GetLocal()


def bulk(sender, receiver, port, nbytes, start):
    helper = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(address(receiver), port).ConvertTo())
    helper.SetAttribute("MaxBytes", ns.UintegerValue(nbytes))
    helper.SetAttribute("SendSize", ns.UintegerValue(1448 * 10))
    helper.Install(sender).Start(start)


def onoff(sender, receiver, port, nbytes, rate, start):
    helper = ns.OnOffHelper("ns3::UdpSocketFactory", ns.InetSocketAddress(address(receiver), port).ConvertTo())
    helper.SetConstantRate(ns.DataRate(rate), 1400)
    helper.SetAttribute("MaxBytes", ns.UintegerValue(nbytes))
    helper.Install(sender).Start(start)


def sink(receiver, port, factory="ns3::TcpSocketFactory"):
    helper = ns.PacketSinkHelper(factory, ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    apps = helper.Install(receiver)
    apps.Start(ns.Seconds(0))
    return ns.DynamicCast[ns.PacketSink](apps.Get(0))


class Chain:
    """Senders' steps of messages to A: the next step is created when A's sink has the whole of the last."""

    def __init__(self, senders, receiver, nbytes, steps, udp_rate=""):
        self.senders, self.receiver, self.nbytes, self.steps = senders, receiver, nbytes, steps
        self.udp_rate = udp_rate
        self.sink = sink(receiver, PORT_A, "ns3::UdpSocketFactory" if udp_rate else "ns3::TcpSocketFactory")
        self.arrived = []
        self._alive = []

        def received(packet, source):
            while len(self.arrived) < self.sink.GetTotalRx() // (self.nbytes * len(self.senders)):
                self.arrived.append(ns.Simulator.Now().GetSeconds())
                if len(self.arrived) < self.steps:
                    self.start(ns.Seconds(0))

        on_rx = ns.cppyy.gbl.std.function["void(ns3::Ptr<const ns3::Packet>, const ns3::Address&)"](received)
        callback = ns.Callback["void", "ns3::Ptr<const ns3::Packet>", "const ns3::Address&"](on_rx)
        self._alive += [received, on_rx, callback]  # C++ only borrows them
        self.sink.TraceConnectWithoutContext("Rx", callback)

    def start(self, when):
        for sender in self.senders:
            if self.udp_rate:
                onoff(sender, self.receiver, PORT_A, self.nbytes, self.udp_rate, when)
            else:
                bulk(sender, self.receiver, PORT_A, self.nbytes, when)


def main():
    args = parse_args()
    senders, (a, b) = build(args.delay)
    sink_b = sink(b, PORT_B)
    for sender in senders[:args.long_senders]:
        for _ in range(args.long):
            bulk(sender, b, PORT_B, int(args.long_mb * 1e6), ns.MilliSeconds(1))
    chain = Chain(senders[:2], a, int(args.chain_mb * 1e6), args.chain, args.chain_udp)
    chain.start(ns.MilliSeconds(1))
    ns.Simulator.Run()
    for k, t in enumerate(chain.arrived):
        print(f"step {k} arrived {t:.9f}")
    print(f"sink A bytes {chain.sink.GetTotalRx()}")
    print(f"sink B bytes {sink_b.GetTotalRx()}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
