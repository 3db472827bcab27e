/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "wormhole-simulator-impl.h"

#include "random-draw-monitor.h"
#include "run-observer.h"

#include "ns3/assert.h"
#include "ns3/make-event.h"
#include "ns3/log.h"
#include "ns3/pointer.h"
#include "ns3/scheduler.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

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

WormholeSimulatorImpl*
WormholeSimulatorImpl::GetAccelerating()
{
    // looked up once per simulator: this runs for every packet a tracked application writes
    static SimulatorImpl* last = nullptr;
    static WormholeSimulatorImpl* cached = nullptr;
    SimulatorImpl* current = PeekPointer(Simulator::GetImplementation());
    if (current != last)
    {
        last = current;
        cached = dynamic_cast<WormholeSimulatorImpl*>(current);
    }
    return cached;
}

WormholeSimulatorImpl::WormholeSimulatorImpl()
    : m_tagHead{nullptr},
      m_tagClass{UNATTRIBUTED},
      m_tagEventCount{0},
      m_tagDrawCount{0},
      m_tagDrawNodes(1),
      m_tagDrawDigest{0},
      m_otherDrawCount(0),
      m_seesDraws(false),
      m_tagPauses(1),
      m_stop(false),
      // uids 0-3 are reserved by EventId (INVALID, NOW, DESTROY, RESERVED)
      m_uid(EventId::UID::VALID),
      m_currentUid(EventId::UID::INVALID),
      m_currentTs(0),
      m_lastUid(EventId::UID::INVALID),
      m_currentContext(Simulator::NO_CONTEXT),
      m_currentTag(UNATTRIBUTED),
      m_eventCount(0),
      m_systemEventCount(0),
      m_systemPending(0),
      m_housekeepingPending(0),
      m_watchdogLimit(100000),
      m_watchdogFired(false),
      m_watchdogSince(0)
{
    NS_LOG_FUNCTION(this);
    Ptr<RandomDrawMonitor> monitor = RandomDrawMonitor::Get();
    m_seesDraws = monitor->Install();
    bool connected =
        monitor->TraceConnectWithoutContext("Draw", MakeCallback(&WormholeSimulatorImpl::NoteDraw, this));
    NS_ABORT_MSG_UNLESS(connected, "RandomDrawMonitor has no Draw trace source");
}

WormholeSimulatorImpl::~WormholeSimulatorImpl()
{
}

void
WormholeSimulatorImpl::DoDispose()
{
    NS_LOG_FUNCTION(this);
    for (auto& [key, pending] : m_queue)
    {
        pending.impl->Unref();
    }
    m_queue.clear();
    m_systemPending = m_housekeepingPending = 0;
    std::fill(m_tagHead.begin(), m_tagHead.end(), nullptr);
    m_moved.clear();
    RandomDrawMonitor::Get()->TraceDisconnectWithoutContext(
        "Draw",
        MakeCallback(&WormholeSimulatorImpl::NoteDraw, this));
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
    // Every ns-3 scheduler runs events in EventKey order, the order of m_queue: which one
    // the configuration names changes nothing in a run, so the queue stays the one map.
    NS_LOG_FUNCTION(this << schedulerFactory);
}

uint32_t
WormholeSimulatorImpl::GetSystemId() const
{
    return 0;
}

inline bool
WormholeSimulatorImpl::IsListed(uint32_t tag) const
{
    return tag < m_tagHead.size();
}

inline void
WormholeSimulatorImpl::Link(Node* node)
{
    Node*& head = m_tagHead[node->second.tag];
    node->second.prev = nullptr;
    node->second.next = head;
    if (head)
    {
        head->second.prev = node;
    }
    head = node;
}

inline void
WormholeSimulatorImpl::Unlink(Node* node)
{
    Pending& p = node->second;
    if (p.prev)
    {
        p.prev->second.next = p.next;
    }
    else
    {
        m_tagHead[p.tag] = p.next;
    }
    if (p.next)
    {
        p.next->second.prev = p.prev;
    }
}

void
WormholeSimulatorImpl::ForgetMoved(const Node& node, bool removed)
{
    auto it = m_moved.find(node.first.m_uid);
    NS_ASSERT(it != m_moved.end());
    if (removed || it->second.ts >= it->second.original)
    {
        // a removed event is cancelled; one that ran later than its EventId says is, by
        // its EventId's key, already past: either way the key answers from now on
        m_moved.erase(it);
    }
    else
    {
        it->second.pending = false;
    }
}

Scheduler::EventKey
WormholeSimulatorImpl::CurrentKey(const EventId& id) const
{
    Scheduler::EventKey key;
    key.m_ts = id.GetTs();
    key.m_uid = id.GetUid();
    key.m_context = id.GetContext();
    if (!m_moved.empty())
    {
        auto it = m_moved.find(key.m_uid);
        if (it != m_moved.end())
        {
            key.m_ts = it->second.ts;
        }
    }
    return key;
}

WormholeSimulatorImpl::Queue::iterator
WormholeSimulatorImpl::FindPending(const EventId& id)
{
    uint32_t uid = id.GetUid();
    if (uid < EventId::UID::VALID)
    {
        return m_queue.end();
    }
    if (!m_moved.empty())
    {
        auto it = m_moved.find(uid);
        if (it != m_moved.end())
        {
            return it->second.pending ? m_queue.find(CurrentKey(id)) : m_queue.end();
        }
    }
    uint64_t ts = id.GetTs();
    if (ts < m_currentTs || (ts == m_currentTs && uid <= m_lastUid))
    {
        return m_queue.end(); // it ran
    }
    return m_queue.find(CurrentKey(id));
}

void
WormholeSimulatorImpl::ProcessOneEvent()
{
    auto first = m_queue.begin();
    Node& node = *first;
    const Scheduler::EventKey key = node.first;
    NS_ASSERT(key.m_ts >= m_currentTs);
    uint32_t tag = node.second.tag;
    EventImpl* impl = node.second.impl;
    bool enters = node.second.enters;
    bool gated = node.second.gated;
    if (IsListed(tag))
    {
        Unlink(&node);
    }
    if (node.second.moved)
    {
        ForgetMoved(node, false);
    }
    CountOut(node.second);
    m_queue.erase(first);

    if (key.m_ts != m_currentTs)
    {
        m_lastUid = key.m_uid;
    }
    else if (key.m_uid > m_lastUid)
    {
        m_lastUid = key.m_uid;
    }
    m_currentTs = key.m_ts;
    m_currentContext = key.m_context;
    m_currentUid = key.m_uid;
    m_currentTag = tag;
    if (tag == SYSTEM)
    {
        ++m_systemEventCount;
    }
    else
    {
        m_timeline.Reach(key.m_ts, m_eventCount);
        ++m_eventCount;
        if (IsFlowTag(tag))
        {
            ++m_tagEventCount[tag];
        }
    }
    if (!gated || m_startGate.IsNull() || m_startGate(key.m_uid))
    {
        impl->Invoke();
    }
    impl->Unref();
    if (enters)
    {
        m_enteredNodes.push_back(key.m_context);
    }
    if (!m_enteredNodes.empty())
    {
        if (m_afterNodesEntered.IsNull())
        {
            m_enteredNodes.clear();
        }
        else
        {
            m_currentTag = tag;
            m_afterNodesEntered();
        }
    }
    if ((tag == UNATTRIBUTED || tag == WORKLOAD) && !m_afterUnattributed.IsNull())
    {
        m_currentTag = tag;
        m_afterUnattributed();
    }
}

inline void
WormholeSimulatorImpl::CountOut(const Pending& pending)
{
    if (pending.tag == SYSTEM)
    {
        --m_systemPending;
        m_housekeepingPending -= pending.housekeeping ? 1 : 0;
    }
}

bool
WormholeSimulatorImpl::IsFinished() const
{
    return m_queue.size() == m_housekeepingPending || m_stop;
}

void
WormholeSimulatorImpl::Run()
{
    NS_LOG_FUNCTION(this);
    m_stop = false;
    m_watchdogFired = false;
    RunObserver::NotifyRunStart();
    // system events (housekeeping aside) run in a row with nothing but system events pending
    uint64_t alone = 0;
    // housekeeping alone keeps no run alive: plain ns-3 stops when its queue is empty
    while (m_queue.size() > m_housekeepingPending && !m_stop)
    {
        if (m_queue.size() != m_systemPending)
        {
            alone = 0;
        }
        else if (!m_queue.begin()->second.housekeeping)
        {
            if (alone++ == 0)
            {
                m_watchdogSince = m_currentTs;
            }
            if (alone > m_watchdogLimit)
            {
                m_watchdogFired = true;
                break;
            }
        }
        ProcessOneEvent();
    }
    RunObserver::NotifyRunEnd();
}

void
WormholeSimulatorImpl::SetWatchdogLimit(uint64_t events)
{
    m_watchdogLimit = events;
}

bool
WormholeSimulatorImpl::WatchdogFired() const
{
    return m_watchdogFired;
}

Time
WormholeSimulatorImpl::GetWatchdogSince() const
{
    return TimeStep(m_watchdogSince);
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
WormholeSimulatorImpl::Insert(uint64_t ts,
                              uint32_t context,
                              uint32_t tag,
                              EventImpl* event,
                              bool housekeeping,
                              bool enters)
{
    Scheduler::EventKey key;
    key.m_ts = ts;
    key.m_uid = m_uid;
    key.m_context = context;
    m_uid++;
    auto [it, inserted] =
        m_queue.emplace(key, Pending{event, tag, false, housekeeping, enters, false, nullptr, nullptr});
    NS_ASSERT(inserted);
    if (tag == SYSTEM)
    {
        ++m_systemPending;
        m_housekeepingPending += housekeeping ? 1 : 0;
    }
    if (IsListed(tag))
    {
        Link(&*it);
    }
    return EventId(event, ts, context, key.m_uid);
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
    bool enters = delay.IsZero() && context != Simulator::NO_CONTEXT;
    if (enters)
    {
        m_enteredNodes.push_back(context);
    }
    Insert(m_currentTs + delay.GetTimeStep(), context, m_currentTag, event, false, enters);
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
WormholeSimulatorImpl::ScheduleHousekeeping(const Time& delay, EventImpl* event)
{
    NS_ASSERT(delay.IsPositive());
    return Insert(m_currentTs + delay.GetTimeStep(), Simulator::NO_CONTEXT, SYSTEM, event, true);
}

EventId
WormholeSimulatorImpl::ScheduleHousekeepingCallback(const Time& delay, Callback<void> callback)
{
    if (delay.IsStrictlyNegative())
    {
        throw std::invalid_argument("a housekeeping callback in the past");
    }
    return ScheduleHousekeeping(delay, MakeEvent([callback]() { callback(); }));
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
WormholeSimulatorImpl::ScheduleCallbackWithTagAt(int64_t timeNs,
                                                 uint32_t context,
                                                 uint32_t tag,
                                                 Callback<void> callback)
{
    const Time delay = NanoSeconds(std::max<int64_t>(0, timeNs - Now().GetTimeStep()));
    return ScheduleCallbackWithTag(delay, context, tag, callback);
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
    return TimeStep(CurrentKey(id).m_ts - m_currentTs);
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
    // a pending event, even a cancelled one, leaves the queue (found at its current time)
    auto it = FindPending(id);
    if (it == m_queue.end())
    {
        return; // already executed or removed
    }
    EventImpl* impl = it->second.impl;
    if (IsListed(it->second.tag))
    {
        Unlink(&*it);
    }
    if (it->second.moved)
    {
        ForgetMoved(*it, true);
    }
    CountOut(it->second);
    m_queue.erase(it);
    impl->Cancel();
    // whereas the event was ref'ed in Insert, it is unref'ed now
    impl->Unref();
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
    if (id.PeekEventImpl() == nullptr || id.PeekEventImpl()->IsCancelled())
    {
        return true;
    }
    uint32_t uid = id.GetUid();
    if (!m_moved.empty())
    {
        // a moved event is decided by uid, not by the stale timestamp its EventId carries
        auto it = m_moved.find(uid);
        if (it != m_moved.end())
        {
            return !it->second.pending;
        }
    }
    // never moved: pending until a key at least as late as its own has run (every key
    // scheduled is later than every key run so far, and keys run in order)
    uint64_t ts = id.GetTs();
    return ts < m_currentTs || (ts == m_currentTs && uid <= m_lastUid);
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

const EventTimeline&
WormholeSimulatorImpl::GetEventTimeline() const
{
    return m_timeline;
}

uint32_t
WormholeSimulatorImpl::NewTag()
{
    auto tag = static_cast<uint32_t>(m_tagClass.size());
    NS_ASSERT(IsFlowTag(tag));
    m_tagClass.push_back(tag);
    m_tagEventCount.push_back(0);
    m_tagDrawCount.push_back(0);
    m_tagDrawNodes.emplace_back();
    m_tagDrawDigest.push_back(0);
    m_tagPauses.emplace_back();
    m_tagHead.push_back(nullptr);
    return tag;
}

void
WormholeSimulatorImpl::SetTagClass(uint32_t tag, uint32_t tagClass)
{
    if (!IsFlowTag(tag) || tag >= m_tagClass.size() || !IsFlowTag(tagClass))
    {
        throw std::out_of_range("not a flow tag or class: " + std::to_string(tag) + ", " +
                                std::to_string(tagClass));
    }
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

uint32_t
WormholeSimulatorImpl::SwapCurrentTag(uint32_t tag)
{
    return std::exchange(m_currentTag, tag);
}

uint32_t
WormholeSimulatorImpl::SwapCurrentContext(uint32_t context)
{
    return std::exchange(m_currentContext, context);
}

void
WormholeSimulatorImpl::SetAfterUnattributedHook(Callback<void> hook)
{
    m_afterUnattributed = hook;
}

void
WormholeSimulatorImpl::SetAfterNodesEnteredHook(Callback<void> hook)
{
    m_afterNodesEntered = hook;
}

std::vector<uint32_t>
WormholeSimulatorImpl::TakeEnteredNodes()
{
    std::vector<uint32_t> nodes;
    nodes.swap(m_enteredNodes);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    return nodes;
}

bool
WormholeSimulatorImpl::Retag(const EventId& id, uint32_t tag)
{
    auto it = FindPending(id);
    if (it == m_queue.end() || tag == SYSTEM || it->second.tag == SYSTEM)
    {
        return false;
    }
    if (IsListed(it->second.tag))
    {
        Unlink(&*it);
    }
    it->second.tag = tag;
    if (IsListed(tag))
    {
        Link(&*it);
    }
    return true;
}

bool
WormholeSimulatorImpl::Gate(const EventId& id)
{
    auto it = FindPending(id);
    if (it == m_queue.end() || it->second.tag == SYSTEM)
    {
        return false;
    }
    it->second.gated = true;
    return true;
}

void
WormholeSimulatorImpl::SetStartGate(Callback<bool, uint32_t> gate)
{
    m_startGate = gate;
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
    for (const auto& [key, pending] : m_queue) // in time order: the first match is the earliest
    {
        if (pending.tag != SYSTEM && !pending.impl->IsCancelled() &&
            std::find(contexts.begin(), contexts.end(), key.m_context) != contexts.end())
        {
            return TimeStep(key.m_ts);
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
    // only the lists of the class's tags are walked; a moved node keeps its address (and
    // so its place in its tag's list) when it is re-keyed
    for (uint32_t tag = 1; tag < m_tagClass.size(); ++tag)
    {
        if (m_tagClass[tag] != tagClass)
        {
            continue;
        }
        for (Node* node = m_tagHead[tag]; node != nullptr; node = node->second.next)
        {
            if (node->second.impl->IsCancelled() ||
                std::find(exemptContexts.begin(), exemptContexts.end(), node->first.m_context) !=
                    exemptContexts.end())
            {
                // a cancelled event does nothing whenever it is popped: leaving it where it
                // is keeps moves cheap (TCP leaves one cancelled retransmission timer per ACK)
                continue;
            }
            Scheduler::EventKey key = node->first;
            NS_ASSERT_MSG(step >= 0 || key.m_ts >= m_currentTs + static_cast<uint64_t>(-step),
                          "a move back would put an event in the past");
            auto handle = m_queue.extract(key);
            NS_ASSERT(!handle.empty() && &handle.mapped() == &node->second);
            handle.key().m_ts = key.m_ts + step;
            handle.mapped().moved = true;
            auto [entry, fresh] = m_moved.try_emplace(key.m_uid, Moved{key.m_ts, key.m_ts, true});
            entry->second.ts = key.m_ts + step;
            m_queue.insert(std::move(handle));
            ++moved;
        }
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
    uint64_t next = GetMaximumSimulationTime().GetTimeStep();
    for (const Node* node = m_tagHead[UNATTRIBUTED]; node != nullptr; node = node->second.next)
    {
        if (node->first.m_ts < next && !node->second.impl->IsCancelled())
        {
            next = node->first.m_ts;
        }
    }
    return TimeStep(next);
}

uint64_t
WormholeSimulatorImpl::GetTagsEventCount(const std::vector<uint32_t>& tags) const
{
    uint64_t count = 0;
    for (uint32_t tag : tags)
    {
        count += IsFlowTag(tag) && tag < m_tagEventCount.size() ? m_tagEventCount[tag] : 0;
    }
    return count;
}

namespace
{
/** Add a value to a sorted vector that holds each value once. */
void
InsertOnce(std::vector<uint32_t>& values, uint32_t value)
{
    auto at = std::lower_bound(values.begin(), values.end(), value);
    if (at == values.end() || *at != value)
    {
        values.insert(at, value);
    }
}

/** One step of a digest: order-sensitive, and every bit of the value counts. */
uint64_t
Mix(uint64_t digest, uint64_t value)
{
    digest ^= value + 0x9e3779b97f4a7c15ULL + (digest << 6) + (digest >> 2);
    return digest * 0xbf58476d1ce4e5b9ULL;
}
} // namespace

void
WormholeSimulatorImpl::NoteDraw(const RngStream*, double value)
{
    uint32_t tag = m_currentTag;
    if (!IsFlowTag(tag) || tag >= m_tagDrawCount.size())
    {
        ++m_otherDrawCount;
        return;
    }
    ++m_tagDrawCount[tag];
    InsertOnce(m_tagDrawNodes[tag], m_currentContext);
    InsertOnce(m_drawNodes, m_currentContext);
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    m_tagDrawDigest[tag] = Mix(m_tagDrawDigest[tag], bits);
}

uint64_t
WormholeSimulatorImpl::GetTagsDrawDigest(const std::vector<uint32_t>& tags) const
{
    uint64_t digest = 0;
    for (uint32_t tag : tags)
    {
        digest = Mix(digest, IsFlowTag(tag) && tag < m_tagDrawDigest.size() ? m_tagDrawDigest[tag] : 0);
    }
    return digest;
}

std::vector<uint32_t>
WormholeSimulatorImpl::GetDrawNodes() const
{
    return m_drawNodes;
}

uint64_t
WormholeSimulatorImpl::GetTagsDrawCount(const std::vector<uint32_t>& tags) const
{
    uint64_t count = 0;
    for (uint32_t tag : tags)
    {
        count += IsFlowTag(tag) && tag < m_tagDrawCount.size() ? m_tagDrawCount[tag] : 0;
    }
    return count;
}

std::vector<uint32_t>
WormholeSimulatorImpl::GetTagsDrawNodes(const std::vector<uint32_t>& tags) const
{
    std::vector<uint32_t> nodes;
    for (uint32_t tag : tags)
    {
        if (IsFlowTag(tag) && tag < m_tagDrawNodes.size())
        {
            nodes.insert(nodes.end(), m_tagDrawNodes[tag].begin(), m_tagDrawNodes[tag].end());
        }
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    return nodes;
}

uint64_t
WormholeSimulatorImpl::GetOtherDrawCount() const
{
    return m_otherDrawCount;
}

bool
WormholeSimulatorImpl::SeesDraws() const
{
    return m_seesDraws;
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
