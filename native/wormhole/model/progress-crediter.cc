/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "progress-crediter.h"

#include "private-access.h"

#include "ns3/flow-monitor.h"
#include "ns3/ipv4-flow-classifier.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("ProgressCrediter");

NS_OBJECT_ENSURE_REGISTERED(ProgressCrediter);

TypeId
ProgressCrediter::GetTypeId()
{
    static TypeId tid = TypeId("ns3::ProgressCrediter")
                            .SetParent<Object>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<ProgressCrediter>();
    return tid;
}

void
ProgressCrediter::SetRegistry(Ptr<FlowRegistry> registry)
{
    m_registry = registry;
}

uint64_t
ProgressCrediter::Credit(uint32_t flow, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << flow << bytes);
    Ptr<TrackedFlow> f = m_registry->Get(flow).flow;
    uint64_t delivered = f->GetDelivered();
    uint64_t credited = f->Credit(bytes);
    CreditMonitors(flow, credited, delivered);
    return credited;
}

uint64_t
ProgressCrediter::Uncredit(uint32_t flow, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << flow << bytes);
    return m_registry->Get(flow).flow->Uncredit(bytes);
}

void
ProgressCrediter::ShiftTimes(uint32_t flow, Time delta)
{
    NS_LOG_FUNCTION(this << flow << delta);
    m_registry->Get(flow).flow->ShiftTimes(delta);
    ShiftMonitoredPackets(flow, delta);
}

void
ProgressCrediter::AddFlowMonitor(Ptr<FlowMonitor> monitor, Ptr<Ipv4FlowClassifier> classifier)
{
    if (monitor && classifier)
    {
        m_monitors.emplace_back(monitor, classifier);
    }
}

std::pair<int64_t, int64_t>
ProgressCrediter::MonitorFlowIds(std::size_t monitor, const TrackedFlow& flow) const
{
    auto [mon, classifier] = m_monitors[monitor];
    uint16_t reverseSource = flow.GetDstPort();
    uint16_t reverseDestination = flow.GetSrcPort();
    flow.GetReversePorts(reverseSource, reverseDestination);
    int64_t data = -1;
    int64_t ack = -1;
    for (const auto& [id, stats] : mon->GetFlowStats())
    {
        Ipv4FlowClassifier::FiveTuple t = classifier->FindFlow(id);
        if (t.protocol != flow.GetProtocol())
        {
            continue;
        }
        if (t.sourceAddress == flow.GetSrcAddress() &&
            t.destinationAddress == flow.GetDstAddress() && t.sourcePort == flow.GetSrcPort() &&
            t.destinationPort == flow.GetDstPort())
        {
            data = id;
        }
        else if (t.sourceAddress == flow.GetDstAddress() &&
                 t.destinationAddress == flow.GetSrcAddress() && t.sourcePort == reverseSource &&
                 t.destinationPort == reverseDestination)
        {
            ack = id;
        }
    }
    return {data, ack};
}

void
ProgressCrediter::CreditMonitors(uint32_t flow, uint64_t bytes, uint64_t delivered)
{
    const TrackedFlow& tracked = *m_registry->Get(flow).flow;
    static const MonitorMarks unmarked;
    const MonitorMarks& marks = flow < m_marks.size() ? m_marks[flow] : unmarked;
    for (std::size_t m = 0; m < m_monitors.size(); ++m)
    {
        auto [data, ack] = MonitorFlowIds(m, tracked);
        Ptr<FlowMonitor> mon = m_monitors[m].first;
        uint64_t dataPackets = data >= 0 ? wormhole::FlowMonitorPackets(mon, data).second : 0;
        if (dataPackets == 0 || delivered == 0)
        {
            continue;
        }
        // as many packets as the flow's history needs for that many bytes
        double packets = static_cast<double>(bytes) * dataPackets / delivered;
        auto [delaySum, rx] = wormhole::FlowMonitorDelaySum(mon, data);
        Time delay = delaySum / static_cast<int64_t>(rx); // whole history, if no window mark
        if (m < marks.size() && rx > marks[m].second)
        {
            delay = (delaySum - marks[m].first) /
                    static_cast<int64_t>(rx - marks[m].second);
        }
        wormhole::FlowMonitorCredit(mon, data, packets, delay);
        if (ack >= 0)
        {
            // ACKs the receiver sent per data packet it received: the ACKs received so far
            // would leave out those in flight, a share of a young flow's history (4% of a
            // DCTCP flow's 20 RTTs after its start, skipped from then on)
            double ackRatio =
                static_cast<double>(wormhole::FlowMonitorPackets(mon, ack).first) / dataPackets;
            auto [ackDelaySum, ackRx] = wormhole::FlowMonitorDelaySum(mon, ack);
            wormhole::FlowMonitorCredit(mon,
                                        ack,
                                        packets * ackRatio,
                                        ackRx ? ackDelaySum / static_cast<int64_t>(ackRx) : Time());
        }
    }
}

void
ProgressCrediter::MarkMonitors(uint32_t flow)
{
    const TrackedFlow& tracked = *m_registry->Get(flow).flow;
    if (flow >= m_marks.size())
    {
        m_marks.resize(m_registry->GetN());
    }
    MonitorMarks& marks = m_marks[flow];
    marks.clear();
    for (std::size_t m = 0; m < m_monitors.size(); ++m)
    {
        int64_t data = MonitorFlowIds(m, tracked).first;
        marks.push_back(data >= 0 ? wormhole::FlowMonitorDelaySum(m_monitors[m].first, data)
                                  : std::make_pair(Time(), uint64_t{0}));
    }
}

void
ProgressCrediter::ShiftMonitoredPackets(uint32_t flow, Time delta)
{
    const TrackedFlow& tracked = *m_registry->Get(flow).flow;
    for (std::size_t m = 0; m < m_monitors.size(); ++m)
    {
        auto [data, ack] = MonitorFlowIds(m, tracked);
        for (int64_t id : {data, ack})
        {
            if (id >= 0)
            {
                wormhole::FlowMonitorShiftInFlight(m_monitors[m].first, id, delta.GetTimeStep());
            }
        }
    }
}

} // namespace ns3
