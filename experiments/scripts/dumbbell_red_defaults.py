r"""A DCTCP dumbbell as a user sets one up from ns-3's defaults: RED/ECN at the bottleneck, nothing tuned.

--flows senders on one side, as many receivers on the other, one 10 Gbps
bottleneck between two routers; every other link 10x faster. Each sender
runs one BulkSend of a size taken in turn from --sizes-mb, started
--stagger-ms after the one before. DCTCP (which turns ECN on), and RED on
the bottleneck with ns-3's defaults but for UseEcn (so it marks rather than
drops) and a MaxSize that holds a bandwidth-delay product: MinTh 5, MaxTh 15,
QW 0.002, Gentle. RED marks between its thresholds at random.

Output: one line per flow with its bytes received and when its last byte came.
"""

import argparse

from ns import ns


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=8)
    parser.add_argument("--sizes-mb", default="100,200,300,400,500,600,400,500",
                        help="comma-separated flow sizes in MB, used in turn")
    parser.add_argument("--stagger-ms", type=float, default=5.0)
    parser.add_argument("--rate", default="10Gbps", help="the bottleneck's rate")
    parser.add_argument("--access-rate", default="100Gbps")
    parser.add_argument("--delay", default="10us")
    return parser.parse_args()


def main():
    args = parse_args()
    sizes = [int(float(mb) * 1e6) for mb in args.sizes_mb.split(",")]
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue("ns3::TcpDctcp"))

    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(args.flows)
    receivers.Create(args.flows)
    routers.Create(2)
    ns.InternetStackHelper().InstallAll()

    access = ns.PointToPointHelper()
    access.SetDeviceAttribute("DataRate", ns.StringValue(args.access_rate))
    access.SetChannelAttribute("Delay", ns.StringValue(args.delay))
    bottleneck = ns.PointToPointHelper()
    bottleneck.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
    bottleneck.SetChannelAttribute("Delay", ns.StringValue(args.delay))

    addresses = ns.Ipv4AddressHelper()
    red = ns.TrafficControlHelper()
    red.SetRootQueueDisc("ns3::RedQueueDisc", "UseEcn", ns.BooleanValue(True),
                         "MaxSize", ns.QueueSizeValue(ns.QueueSize("1000p")))
    core = bottleneck.Install(routers.Get(0), routers.Get(1))
    red.Install(core)
    addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addresses.Assign(core)
    sinks, destinations = [], []
    for i in range(args.flows):
        left = access.Install(senders.Get(i), routers.Get(0))
        addresses.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addresses.Assign(left)
        right = access.Install(routers.Get(1), receivers.Get(i))
        addresses.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        destinations.append(addresses.Assign(right).GetAddress(1))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    for i in range(args.flows):
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                   ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 5000).ConvertTo())
        apps = sink.Install(receivers.Get(i))
        apps.Start(ns.Seconds(0))
        sinks.append(ns.DynamicCast[ns.PacketSink](apps.Get(0)))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(destinations[i], 5000).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(sizes[i % len(sizes)]))
        bulk.Install(senders.Get(i)).Start(ns.MilliSeconds(1 + i * args.stagger_ms))

    ns.Simulator.Run()
    for i, sink in enumerate(sinks):
        print(f"flow {i} bytes {sink.GetTotalRx()}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
