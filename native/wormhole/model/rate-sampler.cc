/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rate-sampler.h"

#include "bulk-send-flow.h"
#include "wormhole-simulator-impl.h"

#include "ns3/log.h"
#include "ns3/make-event.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RateSampler");

NS_OBJECT_ENSURE_REGISTERED(RateSampler);

namespace
{
/** @return the samples, oldest first, as Python reads them. */
template <typename T>
std::vector<T>
AsVector(const std::deque<T>& samples)
{
    return std::vector<T>(samples.begin(), samples.end());
}
} // namespace

TypeId
RateSampler::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RateSampler")
                            .SetParent<Object>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<RateSampler>();
    return tid;
}

void
RateSampler::FlowSamples::Clear()
{
    delivered.clear();
    sent.clear();
    rate.clear();
    notifications.clear();
    window.clear();
}

void
RateSampler::SetRegistry(Ptr<FlowRegistry> registry)
{
    m_registry = registry;
}

void
RateSampler::SetSampleDepth(uint32_t depth)
{
    m_depth = depth;
}

uint32_t
RateSampler::GetSampleDepth() const
{
    return m_depth;
}

void
RateSampler::SetWindowBeginsCallback(Callback<void, uint32_t> onWindowBegins)
{
    m_onWindowBegins = onWindowBegins;
}

RateSampler::FlowSamples&
RateSampler::Of(uint32_t flow)
{
    m_registry->Get(flow); // a flow the registry does not have is an error
    if (flow >= m_flows.size())
    {
        m_flows.resize(m_registry->GetN());
    }
    if (!m_flows[flow])
    {
        m_flows[flow] = std::make_unique<FlowSamples>();
    }
    return *m_flows[flow];
}

const RateSampler::FlowSamples&
RateSampler::Of(uint32_t flow) const
{
    static const FlowSamples none;
    m_registry->Get(flow);
    return flow < m_flows.size() && m_flows[flow] ? *m_flows[flow] : none;
}

void
RateSampler::Configure(Time period, uint32_t samplesPerWindow, Callback<void> onWindow)
{
    NS_LOG_FUNCTION(this << period << samplesPerWindow);
    m_period = period;
    m_samplesPerWindow = samplesPerWindow;
    m_onWindow = onWindow;
}

void
RateSampler::SetWindowsReported(bool reported)
{
    NS_LOG_FUNCTION(this << reported);
    m_windowsReported = reported;
}

uint64_t
RateSampler::GetSampleCount() const
{
    return m_count;
}

void
RateSampler::SetSampled(uint32_t flow, bool sampled)
{
    NS_LOG_FUNCTION(this << flow << sampled);
    FlowSamples& f = Of(flow);
    if (sampled && !f.sampled)
    {
        m_onWindowBegins(flow); // a new window begins
        m_sampledFlows.push_back(flow);
    }
    if (!sampled && f.sampled)
    {
        std::erase(m_sampledFlows, flow);
    }
    f.sampled = sampled;
    if (!sampled)
    {
        f.Clear();
    }
    ScheduleSample();
}

void
RateSampler::ClearSamples(const std::vector<uint32_t>& flows)
{
    for (uint32_t flow : flows)
    {
        Of(flow).Clear();
        m_onWindowBegins(flow);
    }
}

std::vector<uint64_t>
RateSampler::GetSamples(uint32_t flow) const
{
    return AsVector(Of(flow).delivered);
}

std::vector<uint64_t>
RateSampler::GetSentSamples(uint32_t flow) const
{
    return AsVector(Of(flow).sent);
}

std::vector<double>
RateSampler::GetSendingRateSamples(uint32_t flow) const
{
    return AsVector(Of(flow).rate);
}

std::vector<uint64_t>
RateSampler::GetNotificationSamples(uint32_t flow) const
{
    return AsVector(Of(flow).notifications);
}

std::vector<uint64_t>
RateSampler::GetWindowSamples(uint32_t flow) const
{
    return AsVector(Of(flow).window);
}

std::vector<uint32_t>
RateSampler::TakeProgressedFlows()
{
    for (uint32_t flow : m_progressed)
    {
        m_flows[flow]->progressed = false; // listed by Sample, after SetSampled made it
    }
    std::vector<uint32_t> progressed;
    progressed.swap(m_progressed);
    return progressed;
}

void
RateSampler::SetSnapshotting(uint32_t flow, bool on)
{
    FlowSamples& f = Of(flow);
    f.snapshotting = on;
    if (!on)
    {
        f.snapshots.clear();
    }
}

std::vector<FlowSnapshot>
RateSampler::GetSnapshots(uint32_t flow) const
{
    return AsVector(Of(flow).snapshots);
}

void
RateSampler::ScheduleSample()
{
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    if (!impl || m_sampleEvent.IsPending() || !m_period.IsStrictlyPositive())
    {
        return;
    }
    // a stopped sender's flow is still sampled (its last packets arrive), but it alone
    // keeps no sampler going: else an OnOff flow past its stop ticks to the run's end
    bool any = std::any_of(m_sampledFlows.begin(), m_sampledFlows.end(), [this](uint32_t flow) {
        const FlowRegistry::RegisteredFlow& f = m_registry->Get(flow);
        return f.state == FlowRegistry::ACTIVE && !f.flow->HasStopped();
    });
    if (any)
    {
        m_sampleEvent =
            impl->ScheduleHousekeeping(m_period, MakeEvent(&RateSampler::Sample, this));
    }
}

void
RateSampler::Sample()
{
    for (uint32_t flow : m_sampledFlows)
    {
        const FlowRegistry::RegisteredFlow& r = m_registry->Get(flow);
        if (r.state != FlowRegistry::ACTIVE)
        {
            continue;
        }
        FlowSamples& f = Of(flow);
        uint64_t delivered = r.flow->GetDelivered();
        if (!f.progressed && delivered != (f.delivered.empty() ? 0 : f.delivered.back()))
        {
            f.progressed = true;
            m_progressed.push_back(flow);
        }
        f.delivered.push_back(delivered);
        f.sent.push_back(r.flow->GetSent());
        f.rate.push_back(r.flow->GetSendingRate());
        f.notifications.push_back(r.flow->GetCongestionNotifications());
        f.window.push_back(r.flow->GetCongestionWindow());
        while (f.delivered.size() > m_depth)
        {
            f.delivered.pop_front();
            f.sent.pop_front();
            f.rate.pop_front();
            f.notifications.pop_front();
            f.window.pop_front();
        }
        if (f.snapshotting)
        {
            auto bulk = DynamicCast<BulkSendFlow>(r.flow);
            f.snapshots.push_back(FlowSnapshot{Simulator::Now().GetNanoSeconds(),
                                               delivered,
                                               bulk ? bulk->GetTcpState() : TcpFlowState{},
                                               r.flow->GetCongestionState()});
            while (f.snapshots.size() > m_depth)
            {
                f.snapshots.pop_front();
            }
        }
    }
    ++m_count;
    if (m_windowsReported && m_samplesPerWindow > 0 && m_count % m_samplesPerWindow == 0 &&
        !m_onWindow.IsNull())
    {
        m_onWindow();
    }
    ScheduleSample();
}

} // namespace ns3
