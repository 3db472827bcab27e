/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "created-flows.h"

#include "flow-tracker.h"
#include "wormhole-simulator-impl.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <bit>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("CreatedFlows");

NS_OBJECT_ENSURE_REGISTERED(CreatedFlows);

TypeId
CreatedFlows::GetTypeId()
{
    static TypeId tid = TypeId("ns3::CreatedFlows")
                            .SetParent<Object>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<CreatedFlows>();
    return tid;
}

CreatedFlows::CreatedFlows() = default;

CreatedFlows::~CreatedFlows() = default;

void
CreatedFlows::SetTracker(FlowTracker* tracker)
{
    m_tracker = tracker;
}

std::vector<int64_t>
CreatedFlows::Take(uint32_t from, bool gate)
{
    NS_LOG_FUNCTION(this << from << gate);
    NS_ABORT_MSG_IF(!m_tracker, "CreatedFlows::Take: no tracker set");
    const uint32_t flows = m_tracker->GetNFlows();
    std::vector<int64_t> taken;
    taken.reserve(HEADER + FIELDS * (flows > from ? flows - from : 0));
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    taken.push_back(impl ? Simulator::Now().GetTimeStep() : -1);
    taken.push_back(impl ? static_cast<int64_t>(impl->GetCurrentTag()) : -1);
    taken.push_back(impl ? static_cast<int64_t>(impl->GetEventCount()) : -1);
    for (uint32_t flow = from; flow < flows; ++flow)
    {
        const int state = m_tracker->GetState(flow);
        taken.push_back(flow);
        taken.push_back(state);
        taken.push_back(std::bit_cast<int64_t>(m_tracker->GetStartTime(flow).GetSeconds()));
        taken.push_back(m_tracker->GetSrcNode(flow));
        taken.push_back(m_tracker->GetDstNode(flow));
        taken.push_back(static_cast<int64_t>(m_tracker->GetSize(flow)));
        if (gate && state == FlowTracker::PENDING)
        {
            taken.push_back(m_tracker->GetStartEventUid(flow));
            Time start = m_tracker->GateStart(flow);
            taken.push_back(start.IsNegative() ? -1 : start.GetTimeStep());
        }
        else
        {
            taken.push_back(0);
            taken.push_back(-1);
        }
    }
    return taken;
}

} // namespace ns3
