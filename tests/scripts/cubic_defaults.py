"""A TCP dumbbell as ns-3.44 builds one when nothing is set: Cubic, FQ-CoDel on every port, 536-byte segments.

--flows senders on one side, as many receivers on the other, a --rate
bottleneck between two routers and access links ten times faster, every
link --delay. Each sender runs one BulkSend of --mb megabytes, started
--stagger-ms after the one before. No attribute is set but the links' rates
and delays: the congestion control is ns-3's default (TcpCubic), each port
gets ns-3's default queue disc (FqCoDel, installed by Ipv4AddressHelper),
and the TCP buffers, segment size and RTO are ns-3's.

Output: one line per flow with the bytes its sink received, and whether the
bottleneck's queue disc dropped any packet.
"""

import argparse

from ns import ns


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=2)
    parser.add_argument("--mb", type=float, default=10.0, help="each flow's size in MB")
    parser.add_argument("--stagger-ms", type=float, default=20.0)
    parser.add_argument("--rate", default="100Mbps", help="the bottleneck's rate")
    parser.add_argument("--access-rate", default="1Gbps")
    parser.add_argument("--delay", default="1ms")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(args.flows)
    receivers.Create(args.flows)
    routers.Create(2)
    ns.InternetStackHelper().InstallAll()
    bottleneck, access = ns.PointToPointHelper(), ns.PointToPointHelper()
    bottleneck.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
    access.SetDeviceAttribute("DataRate", ns.StringValue(args.access_rate))
    for helper in (bottleneck, access):
        helper.SetChannelAttribute("Delay", ns.StringValue(args.delay))
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    core = bottleneck.Install(routers.Get(0), routers.Get(1))
    addresses.Assign(core)
    destinations = []
    for i in range(args.flows):
        addresses.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addresses.Assign(access.Install(senders.Get(i), routers.Get(0)))
        addresses.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        destinations.append(addresses.Assign(access.Install(receivers.Get(i), routers.Get(1))).GetAddress(0))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    sinks = []
    for i in range(args.flows):
        local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 5000 + i).ConvertTo()
        sink = ns.DynamicCast[ns.PacketSink](
            ns.PacketSinkHelper("ns3::TcpSocketFactory", local).Install(receivers.Get(i)).Get(0))
        sinks.append(sink)
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                 ns.InetSocketAddress(destinations[i], 5000 + i).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(int(args.mb * 1e6)))
        bulk.Install(senders.Get(i)).Start(ns.Seconds(0.01 + i * args.stagger_ms / 1e3))
    ns.Simulator.Run()
    for i, sink in enumerate(sinks):
        print(f"flow {i} received {sink.GetTotalRx()} bytes")
    # the default queue disc Ipv4AddressHelper installed; its counters count the packets a run simulates
    disc = routers.Get(0).GetObject[ns.TrafficControlLayer]().GetRootQueueDiscOnDevice(core.Get(0))
    print(f"{disc.GetInstanceTypeId().GetName()} at the bottleneck dropped some "
          f"{disc.GetStats().nTotalDroppedPackets > 0}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
