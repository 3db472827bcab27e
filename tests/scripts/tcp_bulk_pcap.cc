// A TCP bulk transfer over one point-to-point link, traced to pcap and ASCII,
// stopped mid-transfer: Simulator::Destroy must free the devices (events still
// pending hold them), which closes their pcap files before the process ends.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <iostream>

using namespace ns3;

int
main(int argc, char* argv[])
{
    CommandLine cmd(__FILE__);
    cmd.Parse(argc, argv);
    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue("5Mbps"));
    p2p.SetChannelAttribute("Delay", StringValue("5ms"));
    NetDeviceContainer devices = p2p.Install(nodes);
    InternetStackHelper().Install(nodes);
    Ipv4AddressHelper ipv4;
    ipv4.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer interfaces = ipv4.Assign(devices);

    BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(interfaces.GetAddress(1), 9));
    bulk.SetAttribute("MaxBytes", UintegerValue(0));
    bulk.Install(nodes.Get(0)).Start(Seconds(0));
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
    ApplicationContainer sink = sinkHelper.Install(nodes.Get(1));
    sink.Start(Seconds(0));
    sink.Stop(Seconds(0.5));

    AsciiTraceHelper ascii;
    p2p.EnableAsciiAll(ascii.CreateFileStream("tcp-bulk.tr"));
    p2p.EnablePcapAll("tcp-bulk", false);
    Simulator::Stop(Seconds(0.5));
    Simulator::Run();
    Simulator::Destroy();
    std::cout << "received " << DynamicCast<PacketSink>(sink.Get(0))->GetTotalRx() << std::endl;
    return 0;
}
