/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The datacenter adapters register themselves, recognise the routing they
 * know, and make a FlowDag's events workload events under the accelerator.
 */
#include "ns3/flow-dag-workload-oracle.h"
#include "ns3/flow-dag.h"
#include "ns3/flow-hash-ecmp-route-oracle.h"
#include "ns3/flow-hash-ecmp-routing.h"
#include "ns3/global-value.h"
#include "ns3/ipv4-list-routing.h"
#include "ns3/ipv4-static-routing.h"
#include "ns3/node.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/wormhole-simulator-impl.h"

#include <algorithm>
#include <vector>

using namespace ns3;

namespace
{

/** Loading the module registered both oracles with every future tracker. */
class RegistrationTestCase : public TestCase
{
  public:
    RegistrationTestCase()
        : TestCase("the oracles are registered and know their routing")
    {
    }

  private:
    void DoRun() override
    {
        auto workloads = WorkloadOracle::GetRegistered();
        NS_TEST_EXPECT_MSG_EQ(std::count(workloads.begin(),
                                         workloads.end(),
                                         FlowDagWorkloadOracle::GetTypeId()),
                              1,
                              "FlowDagWorkloadOracle registered once");
        auto routes = RouteOracle::GetRegistered();
        NS_TEST_EXPECT_MSG_EQ(
            std::count(routes.begin(), routes.end(), FlowHashEcmpRouteOracle::GetTypeId()),
            1,
            "FlowHashEcmpRouteOracle registered once");
        Ptr<FlowHashEcmpRouteOracle> oracle = CreateObject<FlowHashEcmpRouteOracle>();
        Ptr<FlowHashEcmpRouting> hashed = CreateObject<FlowHashEcmpRouting>();
        Ptr<Ipv4ListRouting> list = CreateObject<Ipv4ListRouting>();
        list->AddRoutingProtocol(CreateObject<Ipv4StaticRouting>(), 10);
        NS_TEST_EXPECT_MSG_EQ(oracle->Knows(list), false, "static routing is not per flow");
        list->AddRoutingProtocol(hashed, 0);
        NS_TEST_EXPECT_MSG_EQ(oracle->Knows(hashed), true, "flow-hash ECMP alone");
        NS_TEST_EXPECT_MSG_EQ(oracle->Knows(list), true, "flow-hash ECMP in a list");
        NS_TEST_EXPECT_MSG_EQ(FlowHashEcmpRouteOracle::Find(list), hashed, "found in the list");
    }
};

/** Under the WormholeSimulatorImpl, a FlowDag's releases and completions are workload events. */
class WorkloadEventTestCase : public TestCase
{
  public:
    WorkloadEventTestCase()
        : TestCase("a FlowDag's events are retagged WORKLOAD")
    {
    }

  private:
    void DoRun() override
    {
        Simulator::Destroy();
        GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::WormholeSimulatorImpl"));
        auto impl = DynamicCast<WormholeSimulatorImpl>(Simulator::GetImplementation());
        NS_TEST_ASSERT_MSG_NE(impl, nullptr, "the wormhole simulator is selected");
        Ptr<Node> node = CreateObject<Node>();
        Ptr<FlowDag> dag = CreateObject<FlowDag>();
        uint32_t first = dag->AddCompute(node, MilliSeconds(1));
        uint32_t second = dag->AddCompute(node, MilliSeconds(1));
        dag->AddDependency(second, first);
        // the tag of the event each release and completion runs in
        std::vector<uint32_t> tags;
        Callback<void, uint32_t> record([&tags, impl](uint32_t) {
            tags.push_back(impl->GetCurrentTag());
        });
        dag->TraceConnectWithoutContext("Release", record);
        dag->TraceConnectWithoutContext("Finish", record);
        dag->Start();
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(dag->GetNFinished(), 2, "both tasks completed");
        NS_TEST_EXPECT_MSG_EQ(tags.size(), 4, "two releases and two completions");
        NS_TEST_EXPECT_MSG_EQ(std::count(tags.begin(), tags.end(), WormholeSimulatorImpl::WORKLOAD),
                              4,
                              "every event of the graph ran as a workload event");
        Simulator::Destroy();
        GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::DefaultSimulatorImpl"));
    }
};

/** @brief The accelerator's adapters for the datacenter module. */
class WormholeDatacenterTestSuite : public TestSuite
{
  public:
    WormholeDatacenterTestSuite()
        : TestSuite("wormhole-datacenter", Type::UNIT)
    {
        AddTestCase(new RegistrationTestCase, TestCase::Duration::QUICK);
        AddTestCase(new WorkloadEventTestCase, TestCase::Duration::QUICK);
    }
};

WormholeDatacenterTestSuite g_wormholeDatacenterTestSuite;

} // namespace
