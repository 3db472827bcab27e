/*
 * DCTCP dumbbell as a plain C++ ns-3 program (the C++ twin of
 * wormhole_ns3/examples/dctcp_dumbbell.py, with equal flow sizes).
 *
 *   sender i -- left switch == bottleneck == right switch -- receiver i
 *
 * Every link is 10 Gbps / 10 us.  Flow i is a BulkSend of --bytes bytes from sender i to
 * a PacketSink on receiver i (port 5000 + i), starting at 0.1 s + i * --staggerMs (4 ms).  TCP is DCTCP
 * with ECN, receivers ACK every segment; switch egress ports run RED as a step marker at
 * 65 packets (Gentle off), hosts a FIFO queue disc.
 * The simulation runs until every flow has finished (no Simulator::Stop) and prints
 * "flow <i> bytes <received bytes>" per flow.
 *
 * Run it accelerated, or plainly, without building it yourself:
 *   wormhole-ns3 run dumbbell.cc -- --flows=2 --bytes=50000000
 *   wormhole-ns3 run --baseline dumbbell.cc -- --flows=2
 * or build it against the ns3 Python wheel:
 *   NS=$(python -c "import ns3, os; print(os.path.dirname(ns3.__file__))")
 *   g++ -std=c++20 -O2 -DNS3_LOG_ENABLE -DNS3_ASSERT_ENABLE -DNS3_BUILD_PROFILE_RELEASE \
 *       -D__LINUX__ -I$NS/include -L$NS/lib64 -Wl,-rpath,$NS/lib64 dumbbell.cc -o dumbbell \
 *       -lns3.44-core -lns3.44-network -lns3.44-internet -lns3.44-point-to-point \
 *       -lns3.44-applications -lns3.44-traffic-control
 */

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <iostream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

const std::string kRate = "10Gbps";
const std::string kDelay = "10us";
const std::string kQueueSize = "2666p";
const uint16_t kBasePort = 5000;

void
ConfigureTcp()
{
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue("ns3::TcpDctcp"));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 * 1024 * 1024));
    Config::SetDefault("ns3::TcpSocketBase::UseEcn", StringValue("On"));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
}

TrafficControlHelper
RedHelper()
{
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::RedQueueDisc",
                         "UseEcn", BooleanValue(true),
                         "UseHardDrop", BooleanValue(false),
                         "Gentle", BooleanValue(false),
                         "MeanPktSize", UintegerValue(1500),
                         "QW", DoubleValue(1.0),
                         "MinTh", DoubleValue(65),
                         "MaxTh", DoubleValue(65),
                         "LinkBandwidth", DataRateValue(DataRate(kRate)),
                         "LinkDelay", TimeValue(Time(kDelay)),
                         "MaxSize", QueueSizeValue(QueueSize(kQueueSize)));
    return tch;
}

TrafficControlHelper
FifoHelper()
{
    TrafficControlHelper tch;
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(QueueSize(kQueueSize)));
    return tch;
}

struct Dumbbell
{
    NodeContainer senders;
    NodeContainer receivers;
    std::vector<Ipv4Address> receiverAddrs;
};

Dumbbell
BuildDumbbell(uint32_t nFlows)
{
    Dumbbell d;
    d.senders.Create(nFlows);
    d.receivers.Create(nFlows);
    NodeContainer switches;
    switches.Create(2);

    InternetStackHelper stack;
    int64_t stream = 0;
    for (auto* group : {&d.senders, &d.receivers, &switches})
    {
        stack.Install(*group);
        stream += stack.AssignStreams(*group, stream);
    }

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(kRate));
    p2p.SetChannelAttribute("Delay", StringValue(kDelay));
    TrafficControlHelper red = RedHelper();
    TrafficControlHelper fifo = FifoHelper();
    Ipv4AddressHelper addresses;
    QueueDiscContainer redDiscs;

    NetDeviceContainer bottleneck = p2p.Install(switches.Get(0), switches.Get(1));
    redDiscs.Add(red.Install(bottleneck));
    addresses.SetBase("10.0.0.0", "255.255.255.0");
    addresses.Assign(bottleneck);

    // Host port gets FIFO, switch port gets RED.
    auto connect = [&](Ptr<Node> host, Ptr<Node> sw, const std::string& subnet) {
        NetDeviceContainer devices = p2p.Install(host, sw);
        fifo.Install(devices.Get(0));
        redDiscs.Add(red.Install(devices.Get(1)));
        addresses.SetBase(Ipv4Address(subnet.c_str()), "255.255.255.0");
        return addresses.Assign(devices);
    };
    for (uint32_t i = 0; i < nFlows; ++i)
    {
        connect(d.senders.Get(i), switches.Get(0), "10.1." + std::to_string(i) + ".0");
        Ipv4InterfaceContainer rx =
            connect(d.receivers.Get(i), switches.Get(1), "10.2." + std::to_string(i) + ".0");
        d.receiverAddrs.push_back(rx.GetAddress(0));
    }

    for (uint32_t k = 0; k < redDiscs.GetN(); ++k)
    {
        stream += DynamicCast<RedQueueDisc>(redDiscs.Get(k))->AssignStreams(stream);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    return d;
}

std::vector<Ptr<PacketSink>>
InstallFlows(const Dumbbell& d, uint64_t bytes, double staggerMs)
{
    std::vector<Ptr<PacketSink>> sinks;
    for (uint32_t i = 0; i < d.senders.GetN(); ++i)
    {
        uint16_t port = kBasePort + i;
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sinkApps = sinkHelper.Install(d.receivers.Get(i));
        sinkApps.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sinkApps.Get(0)));

        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(d.receiverAddrs[i], port));
        bulk.SetAttribute("MaxBytes", UintegerValue(bytes));
        bulk.SetAttribute("SendSize", UintegerValue(1448));
        ApplicationContainer bulkApps = bulk.Install(d.senders.Get(i));
        bulkApps.Start(Seconds(0.1) + MicroSeconds(static_cast<int64_t>(staggerMs * 1000)) * i);
    }
    return sinks;
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t flows = 2;
    uint64_t bytes = 10000000;
    double staggerMs = 4;

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of sender/receiver pairs", flows);
    cmd.AddValue("bytes", "bytes sent by each flow", bytes);
    cmd.AddValue("staggerMs", "start-time gap between flows, in ms", staggerMs);
    cmd.Parse(argc, argv);
    if (flows < 1)
    {
        std::cerr << "--flows must be at least 1\n";
        return 1;
    }

    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(1);
    ConfigureTcp();

    Dumbbell d = BuildDumbbell(flows);
    std::vector<Ptr<PacketSink>> sinks = InstallFlows(d, bytes, staggerMs);

    Simulator::Run();
    for (uint32_t i = 0; i < sinks.size(); ++i)
    {
        std::cout << "flow " << i << " bytes " << sinks[i]->GetTotalRx() << "\n";
    }
    Simulator::Destroy();
    return 0;
}
