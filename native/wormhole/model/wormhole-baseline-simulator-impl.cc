/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "wormhole-baseline-simulator-impl.h"

#include "run-observer.h"

#include "ns3/event-impl.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(WormholeBaselineSimulatorImpl);

TypeId
WormholeBaselineSimulatorImpl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::WormholeBaselineSimulatorImpl")
                            .SetParent<DefaultSimulatorImpl>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<WormholeBaselineSimulatorImpl>();
    return tid;
}

namespace
{

/** An event that entered a node: the event itself, then the observer told which node. */
class NodeEnteringEvent : public EventImpl
{
  public:
    NodeEnteringEvent(EventImpl* event, uint32_t node, Callback<void, uint32_t> entered)
        : m_event(event),
          m_node(node),
          m_entered(entered)
    {
    }

  protected:
    void Notify() override
    {
        m_event->Invoke();
        m_entered(m_node);
    }

  private:
    Ptr<EventImpl> m_event;
    uint32_t m_node;
    Callback<void, uint32_t> m_entered;
};

} // namespace

void
WormholeBaselineSimulatorImpl::ScheduleWithContext(uint32_t context,
                                                   const Time& delay,
                                                   EventImpl* event)
{
    if (delay.IsZero() && context != Simulator::NO_CONTEXT && !m_nodeEntered.IsNull())
    {
        // the wrapper holds its own reference to the event, in place of the caller's,
        // which the queue would have taken over; the queue takes over the wrapper's
        EventImpl* wrapped = new NodeEnteringEvent(event, context, m_nodeEntered);
        event->Unref();
        DefaultSimulatorImpl::ScheduleWithContext(context, delay, wrapped);
        return;
    }
    DefaultSimulatorImpl::ScheduleWithContext(context, delay, event);
}

void
WormholeBaselineSimulatorImpl::SetNodeEnteredHook(Callback<void, uint32_t> hook)
{
    m_nodeEntered = hook;
}

void
WormholeBaselineSimulatorImpl::Run()
{
    RunObserver::NotifyRunStart();
    DefaultSimulatorImpl::Run();
    RunObserver::NotifyRunEnd();
}

} // namespace ns3
