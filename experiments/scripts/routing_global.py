"""Global routing in a small router mesh, with a link failure half way through.

Routers r0..r4 form a mesh; three hosts hang off it::

    h0 -- r0 ------ r1 ------ r3 -- h1
           |       /    fails  |
           |      /            |
           r2 ---------------- r4 -- h2

    router links: r0-r1, r1-r3, r0-r2, r1-r2, r2-r4, r4-r3   (10 Mbps, 2 ms)
    host links:   h0-r0, h1-r3, h2-r4                          (100 Mbps, 1 ms)

Two constant-rate OnOff UDP flows run from 1 s to --stop - 1 s:
  flow h0 -> h1 takes r0-r1-r3 until the r1-r3 link fails at --fail-at seconds, then
  r0-r2-r4-r3;  flow h2 -> h0 takes r4-r2-r0 throughout.

The failure needs no Python callback: the script runs the simulator up to --fail-at
(Simulator.Stop + Run), sets both ends of r1-r3 down with Ipv4.SetDown, recomputes the
global routes and resumes.  Packets caught on the failed link are lost.

Output: one line per FlowMonitor flow with tx/rx packets, rx bytes, lost packets, mean
one-way delay and mean number of router hops (timesForwarded / rxPackets).
"""

import argparse

from ns import ns

ROUTER_LINKS = [(0, 1), (1, 3), (0, 2), (1, 2), (2, 4), (4, 3)]
FAILING_LINK = (1, 3)
HOST_ROUTER = [0, 3, 4]  # host h -> router it is attached to
FLOWS = [(0, 1), (2, 0)]  # (source host, destination host)
BASE_PORT = 9000


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stop", type=float, default=10.0, help="simulation end (s)")
    parser.add_argument("--fail-at", type=float, default=5.0,
                        help="time the r1-r3 link fails (s); 0 disables the failure")
    parser.add_argument("--rate", default="1Mbps", help="OnOff sending rate of each flow")
    args = parser.parse_args()
    if args.stop <= 2:
        parser.error("--stop must be greater than 2 s")
    if not 0 <= args.fail_at < args.stop:
        parser.error("--fail-at must lie in [0, --stop)")
    return args


class Mesh:
    def __init__(self):
        self.routers = ns.NodeContainer()
        self.routers.Create(5)
        self.hosts = ns.NodeContainer()
        self.hosts.Create(len(HOST_ROUTER))
        stack = ns.InternetStackHelper()
        stack.Install(self.routers)
        stack.Install(self.hosts)
        stream = stack.AssignStreams(self.routers, 0)
        stack.AssignStreams(self.hosts, stream)

        self.addresses = ns.Ipv4AddressHelper()
        self.subnet = 0
        self.router_devices = {}
        self.host_addrs = []

        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.StringValue("10Mbps"))
        p2p.SetChannelAttribute("Delay", ns.StringValue("2ms"))
        for a, b in ROUTER_LINKS:
            devices = p2p.Install(self.routers.Get(a), self.routers.Get(b))
            self.router_devices[(a, b)] = devices
            self._assign(devices)

        p2p.SetDeviceAttribute("DataRate", ns.StringValue("100Mbps"))
        p2p.SetChannelAttribute("Delay", ns.StringValue("1ms"))
        for h, r in enumerate(HOST_ROUTER):
            devices = p2p.Install(self.hosts.Get(h), self.routers.Get(r))
            self.host_addrs.append(self._assign(devices).GetAddress(0))

        ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    def _assign(self, devices):
        self.subnet += 1
        self.addresses.SetBase(ns.Ipv4Address(f"10.0.{self.subnet}.0"),
                               ns.Ipv4Mask("255.255.255.0"))
        return self.addresses.Assign(devices)

    def fail_link(self, a, b):
        """Take both interfaces of router link a-b down and recompute the routes."""
        devices = self.router_devices[(a, b)]
        for k in range(2):
            device = devices.Get(k)
            ipv4 = device.GetNode().GetObject[ns.Ipv4]()
            ipv4.SetDown(ipv4.GetInterfaceForDevice(device))
        ns.Ipv4GlobalRoutingHelper.RecomputeRoutingTables()


def install_flows(mesh, rate, stop):
    for k, (src, dst) in enumerate(FLOWS):
        port = BASE_PORT + k
        sink = ns.PacketSinkHelper(
            "ns3::UdpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sink.Install(mesh.hosts.Get(dst)).Start(ns.Seconds(0))

        onoff = ns.OnOffHelper(
            "ns3::UdpSocketFactory", ns.InetSocketAddress(mesh.host_addrs[dst], port).ConvertTo())
        onoff.SetConstantRate(ns.DataRate(rate), 512)
        apps = onoff.Install(mesh.hosts.Get(src))
        apps.Start(ns.Seconds(1))
        apps.Stop(ns.Seconds(stop - 1))


def run(mesh, args):
    """Run to --stop, failing the link on the way (no callbacks: stop, change, resume)."""
    if args.fail_at > 0:
        ns.Simulator.Stop(ns.Seconds(args.fail_at))
        ns.Simulator.Run()
        mesh.fail_link(*FAILING_LINK)
    ns.Simulator.Stop(ns.Seconds(args.stop) - ns.Simulator.Now())
    ns.Simulator.Run()


def print_flow_stats(monitor, flow_helper):
    monitor.CheckForLostPackets()
    classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](flow_helper.GetClassifier())
    for flow_id, s in monitor.GetFlowStats():
        t = classifier.FindFlow(flow_id)
        rx = s.rxPackets
        mean_delay_ms = s.delaySum.GetSeconds() * 1000 / rx if rx else 0.0
        mean_hops = s.timesForwarded / rx if rx else 0.0
        print(f"flow {flow_id} {t.sourceAddress} -> {t.destinationAddress} "
              f"tx_packets {s.txPackets} rx_packets {rx} rx_bytes {s.rxBytes} "
              f"lost_packets {s.lostPackets} mean_delay_ms {mean_delay_ms:.4f} "
              f"mean_hops {mean_hops:.4f}")


def main():
    args = parse_args()
    ns.RngSeedManager.SetSeed(1)
    mesh = Mesh()
    install_flows(mesh, args.rate, args.stop)
    flow_helper = ns.FlowMonitorHelper()
    monitor = flow_helper.InstallAll()
    run(mesh, args)
    print_flow_stats(monitor, flow_helper)
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
