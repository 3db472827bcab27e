"""Two constant-rate OnOff/UDP flows (3 and 4 Gbps) through a 10 Gbps link, plus one
OnOff flow with random off periods; prints the bytes each PacketSink received."""

from ns import ns

ns.RngSeedManager.SetSeed(1)
ns.RngSeedManager.SetRun(1)
nodes = ns.NodeContainer()
nodes.Create(4)  # 0, 1 senders -> 2 switch -> 3 receiver
p2p = ns.PointToPointHelper()
p2p.SetDeviceAttribute("DataRate", ns.StringValue("10Gbps"))
p2p.SetChannelAttribute("Delay", ns.StringValue("10us"))
stack = ns.InternetStackHelper()
stack.Install(nodes)
stack.AssignStreams(nodes, 0)
addresses = ns.Ipv4AddressHelper()
receiver = None
for i, (a, b) in enumerate([(0, 2), (1, 2), (2, 3)]):
    devices = p2p.Install(nodes.Get(a), nodes.Get(b))
    addresses.SetBase(ns.Ipv4Address(f"10.0.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
    interfaces = addresses.Assign(devices)
    receiver = interfaces.GetAddress(1)
ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

sinks = []
for port, sender, rate, bursty in [(7000, 0, "3Gbps", False), (7001, 1, "4Gbps", False),
                                   (7002, 1, "500Mbps", True)]:
    sink = ns.PacketSinkHelper("ns3::UdpSocketFactory",
                               ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
    apps = sink.Install(nodes.Get(3))
    sinks.append(ns.DynamicCast[ns.PacketSink](apps.Get(0)))
    onoff = ns.OnOffHelper("ns3::UdpSocketFactory",
                           ns.InetSocketAddress(receiver, port).ConvertTo())
    onoff.SetConstantRate(ns.DataRate(rate), 1400)
    if bursty:
        onoff.SetAttribute("OnTime", ns.StringValue("ns3::ExponentialRandomVariable[Mean=0.002]"))
        onoff.SetAttribute("OffTime", ns.StringValue("ns3::ExponentialRandomVariable[Mean=0.002]"))
    onoff.SetAttribute("MaxBytes", ns.UintegerValue(50_000_000 if not bursty else 2_000_000))
    sender_apps = onoff.Install(nodes.Get(sender))
    sender_apps.Start(ns.Seconds(0.01))
ns.Simulator.Stop(ns.Seconds(0.5))
ns.Simulator.Run()
for i, sink in enumerate(sinks):
    print(f"flow {i} bytes {sink.GetTotalRx()}")
ns.Simulator.Destroy()
