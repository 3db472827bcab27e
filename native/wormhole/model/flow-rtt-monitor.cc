/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-rtt-monitor.h"

#include "wormhole-simulator-impl.h"

#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FlowRttMonitor);

TypeId
FlowRttMonitor::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowRttMonitor")
                            .SetParent<Object>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<FlowRttMonitor>()
                            .AddAttribute("Bins",
                                          "Into how many equal parts of its bytes a flow's RTTs are split.",
                                          UintegerValue(20),
                                          MakeUintegerAccessor(&FlowRttMonitor::m_nBins),
                                          MakeUintegerChecker<uint32_t>(1));
    return tid;
}

void
FlowRttMonitor::Follow(Ptr<FlowTracker> tracker)
{
    m_tracker = tracker;
    tracker->TraceConnectWithoutContext("FlowStart",
                                        MakeCallback(&FlowRttMonitor::OnFlowStart, this));
}

void
FlowRttMonitor::OnFlowStart(uint32_t flow)
{
    Ptr<TrackedFlow> tracked = m_tracker->GetFlow(flow);
    if (tracked->GetSize() == 0 || m_flows.count(flow))
    {
        return;
    }
    if (tracked->TraceRtt(Callback<void, Time>([this, flow](Time rtt) { OnRtt(flow, rtt); })))
    {
        m_flows[flow] = Followed{tracked, std::vector<double>(m_nBins, 0.0), std::vector<uint32_t>(m_nBins, 0)};
    }
}

void
FlowRttMonitor::OnRtt(uint32_t flow, Time rtt)
{
    if (auto impl = DynamicCast<WormholeSimulatorImpl>(Simulator::GetImplementation()))
    {
        Time now = Simulator::Now();
        rtt -= impl->PausedWithin(now - rtt, now); // the ACK runs in the flow's own event, with its tag
    }
    Followed& f = m_flows[flow];
    uint64_t size = f.flow->GetSize();
    uint64_t delivered = std::min(f.flow->GetDelivered(), size);
    auto bin = static_cast<uint32_t>(std::min<uint64_t>(m_nBins - 1, delivered * m_nBins / size));
    f.sum[bin] += rtt.GetSeconds();
    ++f.count[bin];
}

std::vector<double>
FlowRttMonitor::GetBins(uint32_t flow) const
{
    auto it = m_flows.find(flow);
    if (it == m_flows.end())
    {
        return {};
    }
    std::vector<double> bins(m_nBins, -1.0);
    for (uint32_t i = 0; i < m_nBins; ++i)
    {
        if (it->second.count[i])
        {
            bins[i] = it->second.sum[i] / it->second.count[i];
        }
    }
    return bins;
}

} // namespace ns3
