"""A script that builds a whole simulation, with traces, and never calls Simulator::Run().

Plain ns-3 creates the trace files (pcap headers only) and schedules the
applications' starts, which never run. ``--destroy`` ends with
Simulator::Destroy, as a tidy script does; without it the process just exits.
"""

import sys

from ns import ns


def main(argv):
    destroy = "--destroy" in argv
    ns.CommandLine().Parse([a for a in argv if a != "--destroy"])
    nodes = ns.NodeContainer()
    nodes.Create(2)
    p2p = ns.PointToPointHelper()
    devices = p2p.Install(nodes)
    ns.InternetStackHelper().Install(nodes)
    ipv4 = ns.Ipv4AddressHelper()
    ipv4.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    interfaces = ipv4.Assign(devices)
    remote = ns.InetSocketAddress(interfaces.GetAddress(1), 9)
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", remote.ConvertTo())
    bulk.Install(nodes.Get(0)).Start(ns.Seconds(1.0))
    local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 9)
    sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", local.ConvertTo()).Install(nodes.Get(1))
    p2p.EnablePcapAll("never", False)
    p2p.EnableAsciiAll(ns.AsciiTraceHelper().CreateFileStream("never.tr"))
    print("built; now", ns.Simulator.Now().GetSeconds(), "s; sink received",
          ns.DynamicCast[ns.PacketSink](sink.Get(0)).GetTotalRx())
    if destroy:
        ns.Simulator.Destroy()
    print("done")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
