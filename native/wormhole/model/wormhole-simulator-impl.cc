/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "wormhole-simulator-impl.h"

#include "run-observer.h"

#include "ns3/assert.h"
#include "ns3/make-event.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/scheduler.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WormholeSimulatorImpl");

NS_OBJECT_ENSURE_REGISTERED(WormholeSimulatorImpl);

TypeId
WormholeSimulatorImpl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::WormholeSimulatorImpl")
                            .SetParent<SimulatorImpl>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<WormholeSimulatorImpl>();
    return tid;
}

WormholeSimulatorImpl::WormholeSimulatorImpl()
    : m_tagClass{UNATTRIBUTED},
      m_tagEventCount{0},
      m_tagPauses(1),
      m_stop(false),
      // uids 0-3 are reserved by EventId (INVALID, NOW, DESTROY, RESERVED)
      m_uid(EventId::UID::VALID),
      m_currentUid(EventId::UID::INVALID),
      m_currentTs(0),
      m_currentContext(Simulator::NO_CONTEXT),
      m_currentTag(UNATTRIBUTED),
      m_eventCount(0),
      m_systemEventCount(0)
{
    NS_LOG_FUNCTION(this);
}

WormholeSimulatorImpl::~WormholeSimulatorImpl()
{
}

void
WormholeSimulatorImpl::DoDispose()
{
    NS_LOG_FUNCTION(this);
    while (!m_events->IsEmpty())
    {
        Scheduler::Event next = m_events->RemoveNext();
        next.impl->Unref();
    }
    m_pending.clear();
    m_unattributed.clear();
    m_events = nullptr;
    SimulatorImpl::DoDispose();
}

void
WormholeSimulatorImpl::Destroy()
{
    NS_LOG_FUNCTION(this);
    while (!m_destroyEvents.empty())
    {
        Ptr<EventImpl> ev = m_destroyEvents.front().PeekEventImpl();
        m_destroyEvents.pop_front();
        if (!ev->IsCancelled())
        {
            ev->Invoke();
        }
    }
}

void
WormholeSimulatorImpl::SetScheduler(ObjectFactory schedulerFactory)
{
    NS_LOG_FUNCTION(this << schedulerFactory);
    Ptr<Scheduler> scheduler = schedulerFactory.Create<Scheduler>();
    if (m_events)
    {
        while (!m_events->IsEmpty())
        {
            scheduler->Insert(m_events->RemoveNext());
        }
    }
    m_events = scheduler;
}

uint32_t
WormholeSimulatorImpl::GetSystemId() const
{
    return 0;
}

void
WormholeSimulatorImpl::ProcessOneEvent()
{
    Scheduler::Event next = m_events->RemoveNext();
    NS_ASSERT(next.key.m_ts >= m_currentTs);

    auto it = m_pending.find(next.key.m_uid);
    NS_ASSERT(it != m_pending.end());
    uint32_t tag = it->second.tag;
    if (tag == UNATTRIBUTED)
    {
        m_unattributed.erase({next.key.m_ts, next.key.m_uid});
    }
    m_pending.erase(it);

    m_currentTs = next.key.m_ts;
    m_currentContext = next.key.m_context;
    m_currentUid = next.key.m_uid;
    m_currentTag = tag;
    if (tag == SYSTEM)
    {
        ++m_systemEventCount;
    }
    else
    {
        ++m_eventCount;
        if (IsFlowTag(tag))
        {
            ++m_tagEventCount[tag];
        }
    }
    next.impl->Invoke();
    next.impl->Unref();
    if ((tag == UNATTRIBUTED || tag == WORKLOAD) && !m_afterUnattributed.IsNull())
    {
        m_currentTag = tag;
        m_afterUnattributed();
    }
}

bool
WormholeSimulatorImpl::IsFlowTag(uint32_t tag)
{
    return tag != UNATTRIBUTED && tag != SYSTEM && tag != WORKLOAD;
}

bool
WormholeSimulatorImpl::IsFinished() const
{
    return m_events->IsEmpty() || m_stop;
}

void
WormholeSimulatorImpl::Run()
{
    NS_LOG_FUNCTION(this);
    m_stop = false;
    RunObserver::NotifyRunStart();
    while (!m_events->IsEmpty() && !m_stop)
    {
        ProcessOneEvent();
    }
    RunObserver::NotifyRunEnd();
}

void
WormholeSimulatorImpl::Stop()
{
    m_stop = true;
}

EventId
WormholeSimulatorImpl::Stop(const Time& delay)
{
    return Simulator::Schedule(delay, &Simulator::Stop);
}

EventId
WormholeSimulatorImpl::Insert(uint64_t ts, uint32_t context, uint32_t tag, EventImpl* event)
{
    Scheduler::Event ev;
    ev.impl = event;
    ev.key.m_ts = ts;
    ev.key.m_context = context;
    ev.key.m_uid = m_uid;
    m_uid++;
    m_events->Insert(ev);
    m_pending.emplace(ev.key.m_uid, PendingEvent{ts, context, tag, event});
    if (tag == UNATTRIBUTED)
    {
        m_unattributed.emplace(ts, ev.key.m_uid);
    }
    return EventId(event, ts, context, ev.key.m_uid);
}

EventId
WormholeSimulatorImpl::Schedule(const Time& delay, EventImpl* event)
{
    NS_ASSERT_MSG(delay.IsPositive(), "WormholeSimulatorImpl::Schedule(): negative delay");
    uint64_t ts = m_currentTs + delay.GetTimeStep();
    NS_ASSERT_MSG(ts >= m_currentTs, "WormholeSimulatorImpl::Schedule(): overflow");
    return Insert(ts, m_currentContext, m_currentTag, event);
}

void
WormholeSimulatorImpl::ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event)
{
    NS_ASSERT_MSG(delay.IsPositive(), "WormholeSimulatorImpl::ScheduleWithContext(): negative");
    Insert(m_currentTs + delay.GetTimeStep(), context, m_currentTag, event);
}

EventId
WormholeSimulatorImpl::ScheduleNow(EventImpl* event)
{
    return Insert(m_currentTs, m_currentContext, m_currentTag, event);
}

EventId
WormholeSimulatorImpl::ScheduleDestroy(EventImpl* event)
{
    EventId id(Ptr<EventImpl>(event, false), m_currentTs, 0xffffffff, EventId::UID::DESTROY);
    m_destroyEvents.push_back(id);
    m_uid++;
    return id;
}

EventId
WormholeSimulatorImpl::ScheduleSystem(const Time& delay, EventImpl* event)
{
    NS_ASSERT(delay.IsPositive());
    return Insert(m_currentTs + delay.GetTimeStep(), Simulator::NO_CONTEXT, SYSTEM, event);
}

EventId
WormholeSimulatorImpl::ScheduleWithTag(const Time& delay,
                                       uint32_t context,
                                       uint32_t tag,
                                       EventImpl* event)
{
    NS_ASSERT(delay.IsPositive());
    NS_ASSERT_MSG(tag != SYSTEM, "system events are scheduled with ScheduleSystem");
    return Insert(m_currentTs + delay.GetTimeStep(), context, tag, event);
}

EventId
WormholeSimulatorImpl::ScheduleCallbackWithTag(const Time& delay,
                                               uint32_t context,
                                               uint32_t tag,
                                               Callback<void> callback)
{
    return ScheduleWithTag(delay, context, tag, MakeEvent([callback]() { callback(); }));
}

EventId
WormholeSimulatorImpl::ScheduleSystemCallback(const Time& delay, Callback<void> callback)
{
    return ScheduleSystem(delay, MakeEvent([callback]() { callback(); }));
}

Time
WormholeSimulatorImpl::Now() const
{
    return TimeStep(m_currentTs);
}

Time
WormholeSimulatorImpl::GetDelayLeft(const EventId& id) const
{
    if (IsExpired(id))
    {
        return TimeStep(0);
    }
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        return TimeStep(0);
    }
    return TimeStep(m_pending.at(id.GetUid()).ts - m_currentTs);
}

void
WormholeSimulatorImpl::Remove(const EventId& id)
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        for (auto i = m_destroyEvents.begin(); i != m_destroyEvents.end(); i++)
        {
            if (*i == id)
            {
                m_destroyEvents.erase(i);
                break;
            }
        }
        return;
    }
    auto it = m_pending.find(id.GetUid());
    if (it == m_pending.end())
    {
        return; // already executed or removed
    }
    Scheduler::Event event;
    event.impl = id.PeekEventImpl();
    event.key.m_ts = it->second.ts; // the current time, which a move may have changed
    event.key.m_context = it->second.context;
    event.key.m_uid = id.GetUid();
    m_events->Remove(event);
    if (it->second.tag == UNATTRIBUTED)
    {
        m_unattributed.erase({it->second.ts, id.GetUid()});
    }
    m_pending.erase(it);
    event.impl->Cancel();
    // whereas the event was ref'ed in Insert, it is unref'ed now
    event.impl->Unref();
}

void
WormholeSimulatorImpl::Cancel(const EventId& id)
{
    if (!IsExpired(id))
    {
        id.PeekEventImpl()->Cancel();
    }
}

bool
WormholeSimulatorImpl::IsExpired(const EventId& id) const
{
    if (id.GetUid() == EventId::UID::DESTROY)
    {
        if (id.PeekEventImpl() == nullptr || id.PeekEventImpl()->IsCancelled())
        {
            return true;
        }
        for (const auto& ev : m_destroyEvents)
        {
            if (ev == id)
            {
                return false;
            }
        }
        return true;
    }
    // Decided by uid, not by the (possibly stale) timestamp the EventId carries.
    if (id.PeekEventImpl() == nullptr || id.PeekEventImpl()->IsCancelled())
    {
        return true;
    }
    return m_pending.find(id.GetUid()) == m_pending.end();
}

Time
WormholeSimulatorImpl::GetMaximumSimulationTime() const
{
    return TimeStep(0x7fffffffffffffffLL);
}

uint32_t
WormholeSimulatorImpl::GetContext() const
{
    return m_currentContext;
}

uint64_t
WormholeSimulatorImpl::GetEventCount() const
{
    return m_eventCount;
}

uint64_t
WormholeSimulatorImpl::GetSystemEventCount() const
{
    return m_systemEventCount;
}

uint32_t
WormholeSimulatorImpl::NewTag()
{
    auto tag = static_cast<uint32_t>(m_tagClass.size());
    NS_ASSERT(IsFlowTag(tag));
    m_tagClass.push_back(tag);
    m_tagEventCount.push_back(0);
    m_tagPauses.emplace_back();
    return tag;
}

void
WormholeSimulatorImpl::SetTagClass(uint32_t tag, uint32_t tagClass)
{
    NS_ASSERT_MSG(IsFlowTag(tag) && tag < m_tagClass.size(), "not a flow tag: " << tag);
    NS_ASSERT_MSG(IsFlowTag(tagClass), "not a flow class: " << tagClass);
    m_tagClass[tag] = tagClass;
}

uint32_t
WormholeSimulatorImpl::GetTagClass(uint32_t tag) const
{
    if (!IsFlowTag(tag))
    {
        return tag;
    }
    NS_ASSERT(tag < m_tagClass.size());
    return m_tagClass[tag];
}

uint32_t
WormholeSimulatorImpl::GetCurrentTag() const
{
    return m_currentTag;
}

void
WormholeSimulatorImpl::AdoptTag(uint32_t tag)
{
    if (m_currentTag == UNATTRIBUTED)
    {
        m_currentTag = tag;
    }
}

void
WormholeSimulatorImpl::SetCurrentTag(uint32_t tag)
{
    if (IsFlowTag(m_currentTag) && IsFlowTag(tag))
    {
        m_currentTag = tag;
    }
}

void
WormholeSimulatorImpl::SetAfterUnattributedHook(Callback<void> hook)
{
    m_afterUnattributed = hook;
}

bool
WormholeSimulatorImpl::Retag(const EventId& id, uint32_t tag)
{
    auto it = m_pending.find(id.GetUid());
    if (it == m_pending.end() || tag == SYSTEM || it->second.tag == SYSTEM)
    {
        return false;
    }
    if (it->second.tag == UNATTRIBUTED)
    {
        m_unattributed.erase({it->second.ts, id.GetUid()});
    }
    it->second.tag = tag;
    if (tag == UNATTRIBUTED)
    {
        m_unattributed.emplace(it->second.ts, id.GetUid());
    }
    return true;
}

uint64_t
WormholeSimulatorImpl::MoveClass(uint32_t tagClass, const Time& delta)
{
    return MoveClassExcept(tagClass, delta, {});
}

Time
WormholeSimulatorImpl::NextEventTimeOn(const std::vector<uint32_t>& contexts) const
{
    uint64_t next = GetMaximumSimulationTime().GetTimeStep();
    if (contexts.empty())
    {
        return TimeStep(next);
    }
    for (const auto& [uid, pending] : m_pending)
    {
        if (pending.tag != SYSTEM && pending.ts < next && !pending.impl->IsCancelled() &&
            std::find(contexts.begin(), contexts.end(), pending.context) != contexts.end())
        {
            next = pending.ts;
        }
    }
    return TimeStep(next);
}

uint64_t
WormholeSimulatorImpl::MoveClassExcept(uint32_t tagClass,
                                       const Time& delta,
                                       const std::vector<uint32_t>& exemptContexts)
{
    NS_ASSERT_MSG(IsFlowTag(tagClass), "only flow classes can be moved");
    int64_t step = delta.GetTimeStep();
    uint64_t moved = 0;
    for (auto& [uid, pending] : m_pending)
    {
        if (!IsFlowTag(pending.tag) || pending.impl->IsCancelled() ||
            m_tagClass[pending.tag] != tagClass ||
            std::find(exemptContexts.begin(), exemptContexts.end(), pending.context) !=
                exemptContexts.end())
        {
            // a cancelled event does nothing whenever it is popped: leaving it where it is
            // keeps moves cheap (TCP leaves one cancelled retransmission timer per ACK)
            continue;
        }
        Scheduler::Event event;
        event.impl = pending.impl;
        event.key.m_ts = pending.ts;
        event.key.m_context = pending.context;
        event.key.m_uid = uid;
        m_events->Remove(event);
        NS_ASSERT_MSG(step >= 0 || pending.ts >= m_currentTs + static_cast<uint64_t>(-step),
                      "a move back would put an event in the past");
        pending.ts += step;
        event.key.m_ts = pending.ts;
        m_events->Insert(event);
        ++moved;
    }
    for (uint32_t tag = 1; tag < m_tagClass.size(); ++tag)
    {
        if (m_tagClass[tag] != tagClass)
        {
            continue;
        }
        auto& pauses = m_tagPauses[tag];
        if (step > 0)
        {
            pauses.push_back(Pause{m_currentTs, m_currentTs + step});
        }
        else if (step < 0 && !pauses.empty())
        {
            // a move back shortens the latest pause
            pauses.back().to = std::max(pauses.back().from, pauses.back().to + step);
        }
    }
    return moved;
}

Time
WormholeSimulatorImpl::NextUnattributedEventTime() const
{
    for (const auto& [ts, uid] : m_unattributed)
    {
        if (!m_pending.at(uid).impl->IsCancelled())
        {
            return TimeStep(ts);
        }
    }
    return GetMaximumSimulationTime();
}

uint64_t
WormholeSimulatorImpl::GetTagEventCount(uint32_t tag) const
{
    return IsFlowTag(tag) && tag < m_tagEventCount.size() ? m_tagEventCount[tag] : 0;
}

Time
WormholeSimulatorImpl::PausedWithin(const Time& from, const Time& to) const
{
    if (!IsFlowTag(m_currentTag))
    {
        return TimeStep(0);
    }
    int64_t lo = from.GetTimeStep();
    int64_t hi = to.GetTimeStep();
    int64_t paused = 0;
    for (const auto& p : m_tagPauses[m_currentTag])
    {
        int64_t a = std::max<int64_t>(lo, p.from);
        int64_t b = std::min<int64_t>(hi, p.to);
        if (b > a)
        {
            paused += b - a;
        }
    }
    return TimeStep(paused);
}

} // namespace ns3
