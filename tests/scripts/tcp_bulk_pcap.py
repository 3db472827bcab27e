"""A TCP bulk transfer over one point-to-point link, traced to pcap and ASCII, stopped mid-transfer.

Simulator::Stop leaves events pending; Simulator::Destroy must still free the
devices, which closes their pcap files: the script reads them back right after
Destroy, as a user's post-processing would.
"""

import sys
from pathlib import Path

from ns import ns


def main(argv):
    ns.CommandLine().Parse(argv)
    nodes = ns.NodeContainer()
    nodes.Create(2)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue("5Mbps"))
    p2p.SetChannelAttribute("Delay", ns.StringValue("5ms"))
    devices = p2p.Install(nodes)
    ns.InternetStackHelper().Install(nodes)
    ipv4 = ns.Ipv4AddressHelper()
    ipv4.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    interfaces = ipv4.Assign(devices)

    remote = ns.InetSocketAddress(interfaces.GetAddress(1), 9)
    bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", remote.ConvertTo())
    bulk.SetAttribute("MaxBytes", ns.UintegerValue(0))
    sender = bulk.Install(nodes.Get(0))
    sender.Start(ns.Seconds(0.0))
    local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 9)
    sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", local.ConvertTo()).Install(nodes.Get(1))
    sink.Start(ns.Seconds(0.0))

    ascii = ns.AsciiTraceHelper()
    p2p.EnableAsciiAll(ascii.CreateFileStream("tcp-bulk.tr"))
    p2p.EnablePcapAll("tcp-bulk", False)

    ns.Simulator.Stop(ns.Seconds(0.5))
    ns.Simulator.Run()
    received = ns.DynamicCast[ns.PacketSink](sink.Get(0)).GetTotalRx()
    ns.Simulator.Destroy()
    print("received", received)
    for trace in sorted(Path().glob("tcp-bulk*")):
        print(trace.name, trace.stat().st_size)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
