/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-dag-workload-oracle.h"

#include "ns3/event-id.h"
#include "ns3/flow-dag.h"
#include "ns3/simulator.h"
#include "ns3/wormhole-simulator-impl.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FlowDagWorkloadOracle);

namespace
{
/** Once this module is loaded, trackers follow FlowDags and their events are workload events. */
struct RegisterFlowDagWorkloadOracle
{
    RegisterFlowDagWorkloadOracle()
    {
        WorkloadOracle::Register(FlowDagWorkloadOracle::GetTypeId());
        FlowDag::AddWorkloadEventHook(MakeCallback(&FlowDagWorkloadOracle::RetagWorkloadEvent));
    }
} g_registerFlowDagWorkloadOracle;
} // namespace

TypeId
FlowDagWorkloadOracle::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowDagWorkloadOracle")
                            .SetParent<WorkloadOracle>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<FlowDagWorkloadOracle>();
    return tid;
}

FlowDagWorkloadOracle::FlowDagWorkloadOracle() = default;

FlowDagWorkloadOracle::~FlowDagWorkloadOracle() = default;

void
FlowDagWorkloadOracle::FollowNewWorkloads(Callback<void> onRelease)
{
    m_onRelease = onRelease;
    for (FlowDag* dag : FlowDag::GetInstances())
    {
        if (std::find(m_followed.begin(), m_followed.end(), dag) == m_followed.end())
        {
            m_followed.push_back(dag);
            dag->TraceConnectWithoutContext("Release",
                                            MakeCallback(&FlowDagWorkloadOracle::OnRelease, this));
        }
    }
}

void
FlowDagWorkloadOracle::OnRelease(uint32_t task)
{
    m_onRelease();
}

std::vector<UpcomingFlow>
FlowDagWorkloadOracle::GetUpcomingFlows(Time horizon, const std::vector<KnownFlowEnd>& ends, bool earliest) const
{
    std::vector<FlowDag::KnownEnd> known;
    known.reserve(ends.size());
    for (const KnownFlowEnd& e : ends)
    {
        known.push_back(FlowDag::KnownEnd{e.src, e.dst, e.srcPort, e.end});
    }
    std::vector<UpcomingFlow> all;
    for (FlowDag* dag : FlowDag::GetInstances())
    {
        for (const FlowDag::UpcomingFlow& f : dag->GetUpcomingFlows(horizon, known, earliest))
        {
            all.push_back(UpcomingFlow{f.start, f.task, f.src, f.dst, f.srcPort, f.dstPort, f.bytes});
        }
    }
    return all;
}

void
FlowDagWorkloadOracle::RetagWorkloadEvent(const EventId& event)
{
    if (auto impl = DynamicCast<WormholeSimulatorImpl>(Simulator::GetImplementation()))
    {
        impl->Retag(event, WormholeSimulatorImpl::WORKLOAD);
    }
}

} // namespace ns3
