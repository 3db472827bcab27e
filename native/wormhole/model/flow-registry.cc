/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-registry.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowRegistry");

NS_OBJECT_ENSURE_REGISTERED(FlowRegistry);

TypeId
FlowRegistry::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowRegistry")
                            .SetParent<Object>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<FlowRegistry>();
    return tid;
}

uint32_t
FlowRegistry::Add(Ptr<TrackedFlow> flow, uint32_t tag)
{
    NS_LOG_FUNCTION(this << flow << tag);
    RegisteredFlow f;
    f.flow = flow;
    f.tag = tag;
    m_flows.push_back(f);
    return m_flows.size() - 1;
}

uint32_t
FlowRegistry::GetN() const
{
    return m_flows.size();
}

FlowRegistry::RegisteredFlow&
FlowRegistry::Get(uint32_t flow)
{
    return m_flows.at(flow);
}

const FlowRegistry::RegisteredFlow&
FlowRegistry::Get(uint32_t flow) const
{
    return m_flows.at(flow);
}

void
FlowRegistry::Activate(uint32_t flow, std::vector<uint64_t> path, std::vector<uint64_t> reversePath)
{
    NS_LOG_FUNCTION(this << flow);
    RegisteredFlow& f = m_flows.at(flow);
    f.state = ACTIVE;
    f.path = std::move(path);
    f.reversePath = std::move(reversePath);
}

void
FlowRegistry::Finish(uint32_t flow)
{
    NS_LOG_FUNCTION(this << flow);
    RegisteredFlow& f = m_flows.at(flow);
    f.state = FINISHED;
    f.finish = Simulator::Now();
}

} // namespace ns3
