/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-rtt-monitor.h"

#include "wormhole-simulator-impl.h"

#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-base.h"
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
    Ptr<TcpSocketBase> sender = tracked->GetTcpSender();
    if (!sender || tracked->GetSize() == 0 || m_flows.count(flow))
    {
        return;
    }
    m_flows[flow] = Followed{tracked, {}, SequenceNumber32(0), std::vector<double>(m_nBins, 0.0),
                             std::vector<uint32_t>(m_nBins, 0)};
    using Trace = Callback<void, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>>;
    sender->TraceConnectWithoutContext(
        "Tx",
        Trace([this, flow](Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>) {
            OnSend(flow, p, h);
        }));
    sender->TraceConnectWithoutContext(
        "Rx",
        Trace([this, flow](Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>) {
            OnAck(flow, h);
        }));
}

void
FlowRttMonitor::OnSend(uint32_t flow, Ptr<const Packet> packet, const TcpHeader& header)
{
    Followed& f = m_flows[flow];
    SequenceNumber32 end = header.GetSequenceNumber() + packet->GetSize();
    if (packet->GetSize() == 0)
    {
        return;
    }
    if (end <= f.highest)
    {
        // a retransmission: which transmission an ACK answers is unknown (Karn)
        while (!f.sent.empty() && f.sent.front().first <= end)
        {
            f.sent.pop_front();
        }
        return;
    }
    f.highest = end;
    f.sent.emplace_back(end, Simulator::Now());
}

void
FlowRttMonitor::OnAck(uint32_t flow, const TcpHeader& header)
{
    if (!(header.GetFlags() & TcpHeader::ACK))
    {
        return;
    }
    Followed& f = m_flows[flow];
    Time sent = Time::Max();
    while (!f.sent.empty() && f.sent.front().first <= header.GetAckNumber())
    {
        sent = f.sent.front().second; // the latest segment this ACK covers
        f.sent.pop_front();
    }
    if (sent == Time::Max())
    {
        return;
    }
    Time now = Simulator::Now();
    Time rtt = now - sent;
    if (auto impl = DynamicCast<WormholeSimulatorImpl>(Simulator::GetImplementation()))
    {
        rtt -= impl->PausedWithin(sent, now); // the ACK runs in the flow's own event, with its tag
    }
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
