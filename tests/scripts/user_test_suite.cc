// A user's own ns-3 TestSuite, run by ns-3's TestRunner as ns-3's test programs are:
// TestCase::Run calls Config::Reset() around each case.
//  - reference-data reads its expected value with CreateDataDirFilename, which
//    walks up from the program's folder to ns-3's top-level folder (VERSION, LICENSE);
//  - bulk-transfer runs a TCP transfer, built after that reset;
//  - own-simulator selects ns-3's DefaultSimulatorImpl itself before running.
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <fstream>

using namespace ns3;

class ReferenceDataTestCase : public TestCase
{
  public:
    ReferenceDataTestCase()
        : TestCase("reference-data")
    {
    }

  private:
    void DoRun() override
    {
        SetDataDir("src/demo/test");
        std::ifstream file(CreateDataDirFilename("reference.txt"));
        int expected = 0;
        file >> expected;
        NS_TEST_ASSERT_MSG_EQ(expected, 42, "the reference data was not found");
    }
};

class BulkTransferTestCase : public TestCase
{
  public:
    BulkTransferTestCase()
        : TestCase("bulk-transfer")
    {
    }

  private:
    void DoRun() override
    {
        Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
        Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
        Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));
        NodeContainer nodes;
        nodes.Create(2);
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
        p2p.SetChannelAttribute("Delay", StringValue("50us"));
        NetDeviceContainer devices = p2p.Install(nodes);
        InternetStackHelper().Install(nodes);
        Ipv4AddressHelper ipv4;
        ipv4.SetBase("10.1.1.0", "255.255.255.0");
        Ipv4InterfaceContainer interfaces = ipv4.Assign(devices);
        BulkSendHelper bulk("ns3::TcpSocketFactory", InetSocketAddress(interfaces.GetAddress(1), 9));
        bulk.SetAttribute("MaxBytes", UintegerValue(50000000));
        bulk.SetAttribute("SendSize", UintegerValue(1448));
        bulk.Install(nodes.Get(0)).Start(Seconds(0));
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), 9));
        Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinkHelper.Install(nodes.Get(1)).Get(0));
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(sink->GetTotalRx(), 50000000, "the transfer did not complete");
        Simulator::Destroy();
    }
};

class OwnSimulatorTestCase : public TestCase
{
  public:
    OwnSimulatorTestCase()
        : TestCase("own-simulator")
    {
    }

  private:
    void DoRun() override
    {
        GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::DefaultSimulatorImpl"));
        bool ran = false;
        Simulator::Schedule(MilliSeconds(1), [&ran]() { ran = true; });
        Simulator::Run();
        NS_TEST_ASSERT_MSG_EQ(ran, true, "the event did not run");
        Simulator::Destroy();
    }
};

class UserTestSuite : public TestSuite
{
  public:
    UserTestSuite()
        : TestSuite("user-suite", Type::UNIT)
    {
        AddTestCase(new ReferenceDataTestCase, TestCase::Duration::QUICK);
        AddTestCase(new BulkTransferTestCase, TestCase::Duration::QUICK);
        AddTestCase(new OwnSimulatorTestCase, TestCase::Duration::QUICK);
    }
};

static UserTestSuite g_userTestSuite;

int
main(int argc, char* argv[])
{
    return TestRunner::Run(argc, argv);
}
