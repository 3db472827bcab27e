"""A point-to-point link feeding a CSMA bus, with UDP echo across both.

    n0 ---- p2p 5Mbps/2ms ---- n1 ==== CSMA 100Mbps/6.56us ==== n2 ... n(1+--csma)
    10.1.1.0/24                    10.1.2.0/24

The UDP echo server runs on the last CSMA node, the client on n0; global routing lets
n0 reach the LAN through n1.  FlowMonitor watches every node; because it keeps a periodic
event pending, the run ends with Simulator.Stop one second after the apps stop.

Output (stdout): one line per node with its IPv4 addresses, then one line per flow with
FlowMonitor's tx/rx packet counts and rx bytes.
"""

import argparse

from ns import ns

ECHO_PORT = 9


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csma", type=int, default=3, help="extra nodes on the CSMA bus")
    parser.add_argument("--packets", type=int, default=4, help="echo requests to send")
    parser.add_argument("--verbose", action="store_true", help="enable UdpEcho logging")
    args = parser.parse_args()
    if args.csma < 1:
        parser.error("--csma must be at least 1")
    return args


def build_network(n_csma):
    """Return (all nodes in order n0..n(1+n_csma), address of the echo server)."""
    p2p_nodes = ns.NodeContainer()
    p2p_nodes.Create(2)
    csma_nodes = ns.NodeContainer()
    csma_nodes.Add(p2p_nodes.Get(1))
    csma_nodes.Create(n_csma)

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue("5Mbps"))
    p2p.SetChannelAttribute("Delay", ns.StringValue("2ms"))
    p2p_devices = p2p.Install(p2p_nodes)

    csma = ns.CsmaHelper()
    csma.SetChannelAttribute("DataRate", ns.StringValue("100Mbps"))
    csma.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(6560)))
    csma_devices = csma.Install(csma_nodes)

    all_nodes = ns.NodeContainer()
    all_nodes.Add(p2p_nodes.Get(0))
    all_nodes.Add(csma_nodes)
    stack = ns.InternetStackHelper()
    stack.Install(all_nodes)
    stack.AssignStreams(all_nodes, 0)
    csma.AssignStreams(csma_devices, 100)

    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    addresses.Assign(p2p_devices)
    addresses.SetBase(ns.Ipv4Address("10.1.2.0"), ns.Ipv4Mask("255.255.255.0"))
    csma_ifaces = addresses.Assign(csma_devices)

    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return all_nodes, csma_ifaces.GetAddress(n_csma)


def install_echo(client_node, server_node, server_addr, packets):
    server_apps = ns.UdpEchoServerHelper(ECHO_PORT).Install(server_node)
    server_apps.Start(ns.Seconds(1))
    server_apps.Stop(ns.Seconds(5 + packets))

    client = ns.UdpEchoClientHelper(server_addr.ConvertTo(), ECHO_PORT)
    client.SetAttribute("MaxPackets", ns.UintegerValue(packets))
    client.SetAttribute("Interval", ns.TimeValue(ns.Seconds(1)))
    client.SetAttribute("PacketSize", ns.UintegerValue(1024))
    client_apps = client.Install(client_node)
    client_apps.Start(ns.Seconds(2))
    client_apps.Stop(ns.Seconds(5 + packets))


def node_addresses(node):
    """All non-loopback IPv4 addresses of a node, as strings."""
    ipv4 = node.GetObject[ns.Ipv4]()
    found = []
    for iface in range(1, ipv4.GetNInterfaces()):
        for k in range(ipv4.GetNAddresses(iface)):
            found.append(str(ipv4.GetAddress(iface, k).GetLocal()))
    return found


def print_results(nodes, monitor, flow_helper):
    for i in range(nodes.GetN()):
        print(f"node {i} addresses {' '.join(node_addresses(nodes.Get(i)))}")
    monitor.CheckForLostPackets()
    classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](flow_helper.GetClassifier())
    for flow_id, stats in monitor.GetFlowStats():
        t = classifier.FindFlow(flow_id)
        print(f"flow {flow_id} {t.sourceAddress}:{t.sourcePort} -> "
              f"{t.destinationAddress}:{t.destinationPort} "
              f"tx_packets {stats.txPackets} rx_packets {stats.rxPackets} "
              f"rx_bytes {stats.rxBytes}")


def main():
    args = parse_args()
    ns.RngSeedManager.SetSeed(1)
    if args.verbose:
        ns.LogComponentEnable("UdpEchoClientApplication", ns.LOG_LEVEL_INFO)
        ns.LogComponentEnable("UdpEchoServerApplication", ns.LOG_LEVEL_INFO)

    nodes, server_addr = build_network(args.csma)
    install_echo(nodes.Get(0), nodes.Get(nodes.GetN() - 1), server_addr, args.packets)

    flow_helper = ns.FlowMonitorHelper()
    monitor = flow_helper.InstallAll()
    # FlowMonitor checks for lost packets periodically, so the event list never empties.
    ns.Simulator.Stop(ns.Seconds(6 + args.packets))
    ns.Simulator.Run()
    print_results(nodes, monitor, flow_helper)
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
