/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Flow-hash ECMP routing on a diamond (h0 - s1 = {a, b} = s2 - h3): one path
 * per flow, both paths used; and a FlowDag releasing tasks in dependency order,
 * and foreseeing what flows whose ends are known release.
 */
#include "ns3/flow-dag.h"
#include "ns3/flow-hash-ecmp-routing-helper.h"
#include "ns3/flow-hash-ecmp-routing.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4.h"
#include "ns3/node-container.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/simulator.h"
#include "ns3/test.h"

#include <set>

using namespace ns3;

namespace
{

/** A flow's route on a transit node depends on its 5-tuple only, and flows spread over the paths. */
class FlowHashEcmpTestCase : public TestCase
{
  public:
    FlowHashEcmpTestCase()
        : TestCase("FlowHashEcmpRouting picks one consistent path per flow")
    {
    }

  private:
    void DoRun() override
    {
        NodeContainer nodes;
        nodes.Create(6); // 0 h0, 1 s1, 2 a, 3 b, 4 s2, 5 h3
        InternetStackHelper stack;
        FlowHashEcmpRoutingHelper routing;
        stack.SetRoutingHelper(routing);
        stack.Install(nodes);
        PointToPointHelper link;
        Ipv4AddressHelper addresses("10.0.0.0", "255.255.255.0");
        Ipv4Address h3;
        for (auto [x, y] : std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 4}, {4, 5}})
        {
            Ipv4InterfaceContainer ifaces =
                addresses.Assign(link.Install(NodeContainer(nodes.Get(x), nodes.Get(y))));
            addresses.NewNetwork();
            if (y == 5)
            {
                h3 = ifaces.GetAddress(1);
            }
        }
        Ipv4GlobalRoutingHelper::PopulateRoutingTables();
        Ptr<FlowHashEcmpRouting> s1 =
            DynamicCast<FlowHashEcmpRouting>(nodes.Get(1)->GetObject<Ipv4>()->GetRoutingProtocol());
        NS_TEST_EXPECT_MSG_NE(s1, nullptr, "the helper installed flow-hash ECMP routing");
        if (!s1)
        {
            Simulator::Destroy();
            return;
        }
        NS_TEST_EXPECT_MSG_EQ(s1->GetNEqualCostRoutes(h3), 2, "two equal-cost ways to h3");
        Ipv4Address h0 = nodes.Get(0)->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
        std::set<uint32_t> used;
        for (uint16_t port = 10000; port < 10064; ++port)
        {
            Ptr<Ipv4Route> first = s1->LookupFlow(h0, h3, 6, port, 80);
            Ptr<Ipv4Route> again = s1->LookupFlow(h0, h3, 6, port, 80);
            NS_TEST_EXPECT_MSG_NE(first, nullptr, "h3 is reachable");
            if (!first || !again)
            {
                break;
            }
            NS_TEST_EXPECT_MSG_EQ(first->GetOutputDevice(),
                                  again->GetOutputDevice(),
                                  "the same flow always takes the same way");
            used.insert(first->GetOutputDevice()->GetIfIndex());
        }
        NS_TEST_EXPECT_MSG_EQ(used.size(), 2, "64 flows use both ways");
        Simulator::Destroy();
    }
};

/** A FlowDag releases a task only once its last prerequisite completed. */
class FlowDagTestCase : public TestCase
{
  public:
    FlowDagTestCase()
        : TestCase("FlowDag releases a task when its prerequisites complete")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<Node> node = CreateObject<Node>();
        Ptr<FlowDag> dag = CreateObject<FlowDag>();
        uint32_t a = dag->AddCompute(node, MilliSeconds(2));
        uint32_t b = dag->AddCompute(node, MilliSeconds(5));
        uint32_t c = dag->AddCompute(node, MilliSeconds(1));
        dag->AddDependency(c, a);
        dag->AddDependency(c, b);
        dag->Start();
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(dag->GetNFinished(), 3, "every task completed");
        NS_TEST_EXPECT_MSG_EQ(dag->GetReleaseTime(c), MilliSeconds(5), "c waits for b, the later");
        NS_TEST_EXPECT_MSG_EQ(dag->GetFinishTime(c), MilliSeconds(6), "c takes 1 ms");
        NS_TEST_EXPECT_MSG_EQ(dag->GetFinishTime(a), MilliSeconds(2), "a takes 2 ms");
        Simulator::Destroy();
    }
};

/**
 * GetUpcomingFlows follows what flows whose ends the caller knows release: a
 * running flow, and through it a flow still to come, as it follows compute;
 * at the earliest, it takes every other end to come as soon as it can.
 */
class FlowDagKnownEndsTestCase : public TestCase
{
  public:
    FlowDagKnownEndsTestCase()
        : TestCase("FlowDag foresees the flows released by flows whose ends are known")
    {
    }

  private:
    void DoRun() override
    {
        NodeContainer hosts(2);
        InternetStackHelper().Install(hosts);
        PointToPointHelper link;
        Ipv4AddressHelper addresses("10.1.0.0", "255.255.255.0");
        addresses.Assign(link.Install(hosts));
        Ptr<Node> h0 = hosts.Get(0);
        Ptr<Node> h1 = hosts.Get(1);

        Ptr<FlowDag> dag = CreateObject<FlowDag>();
        uint32_t first = dag->AddFlow(h0, h1, 1000000, Seconds(0));
        uint32_t compute = dag->AddCompute(h1, MicroSeconds(5));
        uint32_t second = dag->AddFlow(h1, h0, 1000000, MicroSeconds(2));
        uint32_t third = dag->AddFlow(h0, h1, 1000000, Seconds(0));
        dag->AddDependency(compute, first);
        dag->AddDependency(second, compute);
        dag->AddDependency(third, second);
        dag->Start();
        Simulator::Stop(MicroSeconds(1)); // the first flow is running
        Simulator::Run();

        const Time horizon = MilliSeconds(1);
        NS_TEST_EXPECT_MSG_EQ(dag->GetUpcomingFlows(horizon).size(), 0, "no end known: nothing foreseen");
        const int64_t firstEnd = MicroSeconds(100).GetNanoSeconds();
        std::vector<FlowDag::KnownEnd> ends{{h0, h1, dag->GetSourcePort(first), firstEnd}};
        std::vector<FlowDag::UpcomingFlow> upcoming = dag->GetUpcomingFlows(horizon, ends);
        NS_TEST_ASSERT_MSG_EQ(upcoming.size(), 1, "the running flow's end releases the second flow");
        NS_TEST_EXPECT_MSG_EQ(upcoming[0].task, second, "the second flow");
        NS_TEST_EXPECT_MSG_EQ(upcoming[0].start,
                              firstEnd + MicroSeconds(7).GetNanoSeconds(),
                              "after the compute (5 us) and its own delay (2 us)");

        const int64_t secondEnd = MicroSeconds(300).GetNanoSeconds();
        ends.push_back({h1, h0, dag->GetSourcePort(second), secondEnd});
        upcoming = dag->GetUpcomingFlows(horizon, ends);
        NS_TEST_ASSERT_MSG_EQ(upcoming.size(), 2, "the second flow's end, known too, releases the third");
        NS_TEST_EXPECT_MSG_EQ(upcoming[1].task, third, "the third flow");
        NS_TEST_EXPECT_MSG_EQ(upcoming[1].start, secondEnd, "as the second flow ends");

        // at the earliest, with no end known: the first flow ends now, the second as it starts
        upcoming = dag->GetUpcomingFlows(horizon, {}, true);
        NS_TEST_ASSERT_MSG_EQ(upcoming.size(), 2, "at the earliest, every flow within the horizon");
        const int64_t now = Simulator::Now().GetNanoSeconds();
        NS_TEST_EXPECT_MSG_EQ(upcoming[0].start,
                              now + MicroSeconds(7).GetNanoSeconds(),
                              "the second flow, were the first to end now");
        NS_TEST_EXPECT_MSG_EQ(upcoming[1].start, upcoming[0].start, "the third, were the second to end at its start");
        upcoming = dag->GetUpcomingFlows(horizon, {ends[0]}, true);
        NS_TEST_EXPECT_MSG_EQ(upcoming[0].start,
                              firstEnd + MicroSeconds(7).GetNanoSeconds(),
                              "a known end is taken as it is");

        ends[0].dst = h0; // an end that names another flow is not the first flow's
        NS_TEST_EXPECT_MSG_EQ(dag->GetUpcomingFlows(horizon, ends).size(),
                              0,
                              "the first flow's end is unknown again");
        Simulator::Destroy();
    }
};

/** @brief The datacenter module's routing and workloads. */
class DatacenterTestSuite : public TestSuite
{
  public:
    DatacenterTestSuite()
        : TestSuite("datacenter", Type::UNIT)
    {
        AddTestCase(new FlowHashEcmpTestCase, TestCase::Duration::QUICK);
        AddTestCase(new FlowDagTestCase, TestCase::Duration::QUICK);
        AddTestCase(new FlowDagKnownEndsTestCase, TestCase::Duration::QUICK);
    }
};

DatacenterTestSuite g_datacenterTestSuite;

} // namespace
