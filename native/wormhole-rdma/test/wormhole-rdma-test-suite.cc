/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The RDMA adapter registers its flow source, and a FlowTracker then finds a
 * queue pair as a flow and follows it to completion.
 */
#include "ns3/flow-tracker.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/node-container.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/rdma-flow-helper.h"
#include "ns3/rdma-flow-source.h"
#include "ns3/rdma-helper.h"
#include "ns3/rdma-nic.h"
#include "ns3/rdma-queue-pair.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"

#include <algorithm>

using namespace ns3;

namespace
{

/** Loading the module registered RdmaFlowSource with every future tracker. */
class RegistrationTestCase : public TestCase
{
  public:
    RegistrationTestCase()
        : TestCase("RdmaFlowSource is registered once")
    {
    }

  private:
    void DoRun() override
    {
        auto sources = FlowSource::GetRegistered();
        NS_TEST_EXPECT_MSG_EQ(
            std::count(sources.begin(), sources.end(), RdmaFlowSource::GetTypeId()),
            1,
            "RdmaFlowSource registered once");
    }
};

/** A queue pair between two hosts is discovered, starts and finishes as a tracked flow. */
class QueuePairFlowTestCase : public TestCase
{
  public:
    QueuePairFlowTestCase()
        : TestCase("a FlowTracker tracks an RDMA queue pair")
    {
    }

  private:
    void DoRun() override
    {
        NodeContainer hosts;
        hosts.Create(2);
        PointToPointHelper link;
        link.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
        link.SetChannelAttribute("Delay", StringValue("1us"));
        NetDeviceContainer devices = link.Install(hosts);
        InternetStackHelper stack;
        stack.Install(hosts);
        Ipv4AddressHelper addresses("10.1.0.0", "255.255.255.0");
        addresses.Assign(devices);
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
        RdmaHelper nics;
        nics.Install(hosts);
        RdmaFlowHelper flows;
        flows.AddFlow(hosts.Get(0), hosts.Get(1), 100000, MicroSeconds(10));

        Ptr<FlowTracker> tracker = CreateObject<FlowTracker>();
        NS_TEST_EXPECT_MSG_EQ(tracker->Discover(), 0, "no start event before the NIC is initialized");
        Simulator::Stop(MicroSeconds(1));
        Simulator::Run(); // the NICs are initialized: the queue pair's start event is pending
        NS_TEST_EXPECT_MSG_EQ(tracker->Discover(), 1, "one queue pair, one flow");
        if (tracker->GetNFlows() != 1)
        {
            Simulator::Destroy();
            return;
        }
        FlowRecord record = tracker->GetFlowRecord(0);
        NS_TEST_EXPECT_MSG_EQ(record.kind.rfind("rdma-", 0), 0, "an RDMA flow: " << record.kind);
        NS_TEST_EXPECT_MSG_EQ(record.dport, RdmaNic::ROCE_PORT, "to RoCEv2's UDP port");
        NS_TEST_EXPECT_MSG_EQ(record.size, 100000, "its size");
        NS_TEST_EXPECT_MSG_EQ(record.dstNode, hosts.Get(1)->GetId(), "its destination node");
        NS_TEST_EXPECT_MSG_EQ(tracker->GetState(0), FlowTracker::PENDING, "not started yet");
        Simulator::Stop(MilliSeconds(10));
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(tracker->GetState(0), FlowTracker::FINISHED, "started and finished");
        FlowOutcome outcome = tracker->GetFlowOutcome(0);
        NS_TEST_EXPECT_MSG_EQ(outcome.rxBytes, 100000, "every byte delivered");
        NS_TEST_EXPECT_MSG_GT(outcome.finish, outcome.start, "finished after it started");
        NS_TEST_EXPECT_MSG_EQ(outcome.finish, tracker->GetFinishTime(0).GetSeconds(), "same value");
        Simulator::Destroy();
    }
};

/** @brief The accelerator's adapter for the rdma module. */
class WormholeRdmaTestSuite : public TestSuite
{
  public:
    WormholeRdmaTestSuite()
        : TestSuite("wormhole-rdma", Type::UNIT)
    {
        AddTestCase(new RegistrationTestCase, TestCase::Duration::QUICK);
        AddTestCase(new QueuePairFlowTestCase, TestCase::Duration::QUICK);
    }
};

WormholeRdmaTestSuite g_wormholeRdmaTestSuite;

} // namespace
