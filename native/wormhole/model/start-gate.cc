/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "start-gate.h"

#include "wormhole-simulator-impl.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/make-event.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("StartGate");

NS_OBJECT_ENSURE_REGISTERED(StartGate);

TypeId
StartGate::GetTypeId()
{
    static TypeId tid = TypeId("ns3::StartGate")
                            .SetParent<Object>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<StartGate>();
    return tid;
}

void
StartGate::SetRegistry(Ptr<FlowRegistry> registry)
{
    m_registry = registry;
}

Time
StartGate::GateStart(uint32_t flow)
{
    NS_LOG_FUNCTION(this << flow);
    const FlowRegistry::RegisteredFlow& f = m_registry->Get(flow);
    EventId start = f.flow->GetStartEvent();
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    if (!impl || f.state != FlowRegistry::PENDING || !start.IsPending() || !impl->Gate(start))
    {
        return Seconds(-1);
    }
    if (m_gatingImpl != impl)
    {
        impl->SetStartGate(MakeCallback(&StartGate::OnGatedStart, this));
        m_gatingImpl = impl;
    }
    m_gatedStarts[start.GetUid()] = flow;
    return Simulator::Now() + Simulator::GetDelayLeft(start);
}

void
StartGate::SetDecideCallback(Callback<void, uint32_t> decide)
{
    m_decide = decide;
}

void
StartGate::DecideStart(uint32_t flow, bool held)
{
    NS_LOG_FUNCTION(this << flow << held);
    const TrackedFlow& f = *m_registry->Get(flow).flow;
    NS_ABORT_MSG_IF(held && !f.CanBeHeld(),
                    "FlowTracker: " << f.GetKind() << " flows cannot be held");
    m_decided[flow] = held;
}

bool
StartGate::OnGatedStart(uint32_t uid)
{
    auto gated = m_gatedStarts.find(uid);
    if (gated == m_gatedStarts.end())
    {
        return true;
    }
    uint32_t flow = gated->second;
    m_gatedStarts.erase(gated);
    if (!m_decided.contains(flow) && !m_decide.IsNull())
    {
        m_decide(flow);
    }
    auto decided = m_decided.find(flow);
    bool held = decided != m_decided.end() && decided->second;
    if (decided != m_decided.end())
    {
        m_decided.erase(decided);
    }
    if (held)
    {
        // in place of the application's start, at its place in the queue
        m_registry->Get(flow).flow->StartHeld();
        return false;
    }
    return true;
}

uint32_t
StartGate::GetStartEventUid(uint32_t flow) const
{
    EventId start = m_registry->Get(flow).flow->GetStartEvent();
    return start.IsPending() ? start.GetUid() : 0;
}

void
StartGate::ScheduleForFlow(uint32_t flow, std::function<void()> action)
{
    const FlowRegistry::RegisteredFlow& f = m_registry->Get(flow);
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    NS_ABORT_MSG_IF(!impl, "FlowTracker: starting flows needs the WormholeSimulatorImpl");
    impl->ScheduleWithTag(TimeStep(0), f.flow->GetSrcNode()->GetId(), f.tag, MakeEvent(action));
}

void
StartGate::ResumeHeld(uint32_t flow, const std::vector<double>& state)
{
    NS_LOG_FUNCTION(this << flow);
    Ptr<TrackedFlow> held = m_registry->Get(flow).flow;
    // checked when the resume runs: a hold asked for at this instant is still scheduled now
    ScheduleForFlow(flow, [held, state, flow]() {
        NS_ABORT_MSG_IF(!held->IsHeld(), "FlowTracker: flow " << flow << " is not held");
        held->ResumeHeld(state);
    });
}

void
StartGate::CompleteVirtually(uint32_t flow)
{
    NS_LOG_FUNCTION(this << flow);
    const FlowRegistry::RegisteredFlow& f = m_registry->Get(flow);
    NS_ABORT_MSG_IF(f.state != FlowRegistry::PENDING || f.flow->GetSize() == 0,
                    "FlowTracker: only a sized flow that never started can complete virtually");
    m_registry->Finish(flow);
    RunAsFlow(flow, [&f]() { f.flow->CompleteVirtually(); });
}

bool
StartGate::OweEndOfTransfer(uint32_t flow)
{
    return m_registry->Get(flow).flow->OweEndOfTransfer();
}

void
StartGate::SendOwedEndOfTransfer(uint32_t flow)
{
    NS_LOG_FUNCTION(this << flow);
    const FlowRegistry::RegisteredFlow& f = m_registry->Get(flow);
    // from the receiver, in whose event the completion ran
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    uint32_t context = impl ? impl->SwapCurrentContext(f.flow->GetDstNode()->GetId()) : 0;
    RunAsFlow(flow, [&f]() { f.flow->SendOwedEndOfTransfer(); });
    if (impl)
    {
        impl->SwapCurrentContext(context);
    }
}

void
StartGate::RunAsFlow(uint32_t flow, const std::function<void()>& action)
{
    // as its last packet would, in its own flow's event: the end of the transfer it puts
    // on the wire carries the flow's tag, not the workload's, into the queues it shares
    // (a workload-tagged packet chain passes its tag to every packet queued behind it,
    // and a flow's packets never take theirs back)
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    uint32_t current = impl ? impl->SwapCurrentTag(m_registry->Get(flow).tag) : 0;
    action();
    if (impl)
    {
        impl->SwapCurrentTag(current);
    }
}

} // namespace ns3
