"""ns-3's applications side by side on a star: what each one counts, as ns-3's application tests read it.

A BulkSend TCP transfer and a constant-rate OnOff UDP flow (flows the
accelerator tracks and skips), a UdpClient sending to a UdpServer and a
UdpEchoClient to a UdpEchoServer between two other hosts (applications it does
not track: their events end any skip, and their packets meet no skipped queue).
Prints each application's own counts.
"""

from ns import ns

std = ns.cppyy.gbl.std
alive = []


def star(hosts: int):
    """Hosts 0..n-1 around one router, 1 Gbps / 100 us links; return the hosts and their addresses."""
    router = ns.NodeContainer()
    router.Create(1)
    nodes = ns.NodeContainer()
    nodes.Create(hosts)
    stack = ns.InternetStackHelper()
    stack.Install(router)
    stack.Install(nodes)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue("1Gbps"))
    p2p.SetChannelAttribute("Delay", ns.StringValue("100us"))
    addresses = ns.Ipv4AddressHelper()
    host_addresses = []
    for i in range(hosts):
        devices = p2p.Install(nodes.Get(i), router.Get(0))
        addresses.SetBase(ns.Ipv4Address(f"10.0.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        host_addresses.append(addresses.Assign(devices).GetAddress(0))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return nodes, host_addresses


def sink_on(node, protocol: str, port: int):
    helper = ns.PacketSinkHelper(f"ns3::{protocol}SocketFactory",
                                 ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    return ns.DynamicCast[ns.PacketSink](helper.Install(node).Get(0))


def main():
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.TypeIdValue(ns.TcpNewReno.GetTypeId()))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(4 << 20))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(4 << 20))
    hosts, address = star(6)

    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(address[3], 5000).ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(90_000_000))
    bulk.SetAttribute("SendSize", ns.UintegerValue(1448))
    bulk.Install(hosts.Get(0)).Start(ns.Seconds(0.01))
    bulk_sink = sink_on(hosts.Get(3), "Tcp", 5000)

    onoff = ns.OnOffHelper("ns3::UdpSocketFactory", ns.InetSocketAddress(address[2], 6000).ConvertTo())
    onoff.SetConstantRate(ns.DataRate("200Mbps"), 1400)
    onoff.SetAttribute("MaxBytes", ns.UintegerValue(10_000_000))
    onoff.Install(hosts.Get(1)).Start(ns.Seconds(0.02))
    onoff_sink = sink_on(hosts.Get(2), "Udp", 6000)

    server = ns.UdpServerHelper(7000).Install(hosts.Get(5))
    client = ns.UdpClientHelper(address[5].ConvertTo(), 7000)
    client.SetAttribute("MaxPackets", ns.UintegerValue(40))
    client.SetAttribute("Interval", ns.TimeValue(ns.MilliSeconds(10)))
    client.SetAttribute("PacketSize", ns.UintegerValue(512))
    client.Install(hosts.Get(4)).Start(ns.Seconds(0.01))

    ns.UdpEchoServerHelper(9).Install(hosts.Get(4))
    echo = ns.UdpEchoClientHelper(address[4].ConvertTo(), 9)
    echo.SetAttribute("MaxPackets", ns.UintegerValue(5))
    echo.SetAttribute("Interval", ns.TimeValue(ns.MilliSeconds(50)))
    echo_client = echo.Install(hosts.Get(5))
    echo_client.Start(ns.Seconds(0.05))
    replies = []

    def on_reply(packet):
        replies.append((ns.Simulator.Now().GetTimeStep(), packet.GetSize()))
    rx = std.function["void(ns3::Ptr<const ns3::Packet>)"](on_reply)
    alive.append((on_reply, rx))
    echo_client.Get(0).TraceConnectWithoutContext("Rx", ns.Callback["void", "ns3::Ptr<const ns3::Packet>"](rx))

    ns.Simulator.Stop(ns.Seconds(1))
    ns.Simulator.Run()
    udp_server = ns.DynamicCast[ns.UdpServer](server.Get(0))
    print(f"bulk sink received {bulk_sink.GetTotalRx()} bytes")
    print(f"onoff sink received {onoff_sink.GetTotalRx()} bytes")
    print(f"udp server received {udp_server.GetReceived()} packets, lost {udp_server.GetLost()}")
    print(f"echo client heard {len(replies)} replies: {replies}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
