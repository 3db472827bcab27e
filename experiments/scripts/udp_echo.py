"""UDP echo between two nodes over one point-to-point link.

    n0 (client, 10.1.1.1) ---- 5Mbps / 2ms ---- n1 (server, 10.1.1.2, port 9)

The client sends --packets echo requests of --size bytes, one per --interval seconds;
the server echoes each one back.  The UdpEcho client and server log components are
enabled at INFO level, so ns-3 logs every send and receive (on stderr).  At the end the
script prints a summary line to stdout.
"""

import argparse

from ns import ns

ECHO_PORT = 9


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packets", type=int, default=3, help="number of echo requests")
    parser.add_argument("--size", type=int, default=1024, help="request size in bytes")
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between requests")
    parser.add_argument("--rate", default="5Mbps", help="link data rate")
    parser.add_argument("--delay", default="2ms", help="link delay")
    return parser.parse_args()


def build_link(rate, delay):
    nodes = ns.NodeContainer()
    nodes.Create(2)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
    p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
    devices = p2p.Install(nodes)

    stack = ns.InternetStackHelper()
    stack.Install(nodes)
    stack.AssignStreams(nodes, 0)
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    interfaces = addresses.Assign(devices)
    return nodes, interfaces


def install_echo(nodes, interfaces, args):
    server_apps = ns.UdpEchoServerHelper(ECHO_PORT).Install(nodes.Get(1))
    server_apps.Start(ns.Seconds(1))
    server_apps.Stop(ns.Seconds(10 + args.packets * args.interval))

    client = ns.UdpEchoClientHelper(interfaces.GetAddress(1).ConvertTo(), ECHO_PORT)
    client.SetAttribute("MaxPackets", ns.UintegerValue(args.packets))
    client.SetAttribute("Interval", ns.TimeValue(ns.Seconds(args.interval)))
    client.SetAttribute("PacketSize", ns.UintegerValue(args.size))
    client_apps = client.Install(nodes.Get(0))
    client_apps.Start(ns.Seconds(2))
    client_apps.Stop(ns.Seconds(10 + args.packets * args.interval))
    return server_apps, client_apps


def main():
    args = parse_args()
    ns.RngSeedManager.SetSeed(1)
    ns.LogComponentEnable("UdpEchoClientApplication", ns.LOG_LEVEL_INFO)
    ns.LogComponentEnable("UdpEchoServerApplication", ns.LOG_LEVEL_INFO)

    nodes, interfaces = build_link(args.rate, args.delay)
    install_echo(nodes, interfaces, args)

    ns.Simulator.Run()
    print(f"udp echo done: {args.packets} requests of {args.size} bytes, "
          f"server {interfaces.GetAddress(1)}, finished at {ns.Simulator.Now().GetSeconds():.6f} s")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
