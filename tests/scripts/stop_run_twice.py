"""Two Simulator::Run() calls, each ended by Simulator::Stop, with traffic in both.

A TCP bulk transfer runs through the first Run(); between the two, the script
reads its sink, starts a UDP OnOff flow and stops again later: the second
Run() resumes the queue where the first left it, and the traces go on in the
same files.
"""

import sys

from ns import ns


def main(argv):
    ns.CommandLine().Parse(argv)
    nodes = ns.NodeContainer()
    nodes.Create(2)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue("5Mbps"))
    p2p.SetChannelAttribute("Delay", ns.StringValue("2ms"))
    devices = p2p.Install(nodes)
    ns.InternetStackHelper().Install(nodes)
    ipv4 = ns.Ipv4AddressHelper()
    ipv4.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    interfaces = ipv4.Assign(devices)

    remote = ns.InetSocketAddress(interfaces.GetAddress(1), 9)
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", remote.ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    bulk.Install(nodes.Get(0)).Start(ns.Seconds(0.0))
    local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 9)
    tcp_sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", local.ConvertTo()).Install(nodes.Get(1))
    p2p.EnablePcapAll("twice", False)
    p2p.EnableAsciiAll(ns.AsciiTraceHelper().CreateFileStream("twice.tr"))

    ns.Simulator.Stop(ns.Seconds(0.2))
    ns.Simulator.Run()
    print(f"first Run() returned at {ns.Simulator.Now().GetSeconds():.6f} s,",
          "tcp received", ns.DynamicCast[ns.PacketSink](tcp_sink.Get(0)).GetTotalRx())

    udp_remote = ns.InetSocketAddress(interfaces.GetAddress(1), 10)
    onoff = ns.OnOffHelper("ns3::UdpSocketFactory", udp_remote.ConvertTo())
    onoff.SetConstantRate(ns.DataRate("1Mbps"))
    udp_app = onoff.Install(nodes.Get(0))
    # an application added after the first Run() starts relative to now (0.2 s)
    udp_app.Start(ns.Seconds(0.01))
    udp_app.Stop(ns.Seconds(0.12))
    udp_local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 10)
    udp_sink = ns.PacketSinkHelper("ns3::UdpSocketFactory", udp_local.ConvertTo()).Install(nodes.Get(1))

    ns.Simulator.Stop(ns.Seconds(0.2))
    ns.Simulator.Run()
    print(f"second Run() returned at {ns.Simulator.Now().GetSeconds():.6f} s,",
          "tcp received", ns.DynamicCast[ns.PacketSink](tcp_sink.Get(0)).GetTotalRx(),
          "udp received", ns.DynamicCast[ns.PacketSink](udp_sink.Get(0)).GetTotalRx())
    ns.Simulator.Destroy()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
