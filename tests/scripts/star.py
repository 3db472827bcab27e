"""A star of hosts around one switch, DCTCP with a RED step marker at every switch port.

Shared by the FlowDag test scripts in this folder.
"""

from ns import ns


def star(hosts, rate="10Gbps", delay="10us", tcp="TcpDctcp"):
    """Build the star; return its host nodes in order."""
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue(f"ns3::{tcp}"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(1448))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(1 << 20))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(1 << 20))
    ns.Config.SetDefault("ns3::TcpSocketBase::UseEcn", ns.StringValue("On"))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(1))
    nodes = ns.NodeContainer()
    nodes.Create(hosts + 1)
    switch = nodes.Get(hosts)
    stack = ns.InternetStackHelper()
    stack.Install(nodes)
    stack.AssignStreams(nodes, 0)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
    p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
    red = ns.TrafficControlHelper()
    red.SetRootQueueDisc(
        "ns3::RedQueueDisc", "UseEcn", ns.BooleanValue(True), "UseHardDrop", ns.BooleanValue(False),
        "Gentle", ns.BooleanValue(False),
        "QW", ns.DoubleValue(1.0), "MinTh", ns.DoubleValue(65), "MaxTh", ns.DoubleValue(65),
        "MaxSize", ns.QueueSizeValue(ns.QueueSize("2666p")))
    addresses = ns.Ipv4AddressHelper()
    for i in range(hosts):
        devices = p2p.Install(nodes.Get(i), switch)
        red.Install(devices.Get(1))
        addresses.SetBase(ns.Ipv4Address(f"10.0.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addresses.Assign(devices)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return [nodes.Get(i) for i in range(hosts)]
