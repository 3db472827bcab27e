/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A sequential SimulatorImpl whose pending events can be moved in time, a
 * partition at a time, without breaking any EventId a model holds.
 */
#ifndef WORMHOLE_SIMULATOR_IMPL_H
#define WORMHOLE_SIMULATOR_IMPL_H

#include "ns3/callback.h"
#include "ns3/event-impl.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"
#include "ns3/scheduler.h"
#include "ns3/simulator-impl.h"

#include "event-timeline.h"

#include <cstdint>
#include <list>
#include <map>
#include <utility>
#include <unordered_map>
#include <vector>

namespace ns3
{

class RngStream;

/**
 * @brief Sequential simulator that can shift the pending events of one
 * partition later (or back) by a time offset.
 *
 * Every pending event carries an attribution tag, inherited from the event
 * that scheduled it. Tag 0 means "unattributed" (set-up code, application
 * start/stop times, user callbacks); other tags are handed out by the flow
 * tracker, one per flow, so every event a flow's packets cause carries the
 * flow's tag. Inheritance alone would leak a tag along a shared queue (the
 * end of one packet's transmission starts the next packet's), so the tracker
 * re-attributes the event that starts a packet's transmission to the packet's
 * own flow (SetCurrentTag). Each tag belongs to one class, which the
 * controller sets to the partition of the tag's flow; a move always shifts a
 * whole class, and classes change as partitions form and split.
 *
 * Workload events (tag WORKLOAD: a dependency graph releasing flows and
 * timing compute) are neither moved nor a bound on moves: they only create
 * flows, which the controller learns about from the after-event hook.
 *
 * The pending events live in one ordered map keyed like ns-3's schedulers
 * (timestamp, then uid: the order of every ns-3 scheduler, so runs are the
 * same whatever SchedulerType says), and each entry carries the event's tag
 * and the links of its tag's intrusive list: scheduling or running an event
 * costs what MapScheduler costs, plus a few pointer writes, and a move walks
 * the lists of the tags it moves only. An event that was never moved is
 * answered by the key its EventId carries (expired once a key at least as
 * late has run, as in DefaultSimulatorImpl); the current times of moved
 * events are kept by uid, so IsExpired, Cancel, Remove and GetDelayLeft stay
 * exact after a move even though the EventId held by a model still carries
 * the old timestamp.
 *
 * Events the accelerator itself schedules (samplers, controller wake-ups) are
 * "system" events: never moved, never counted in GetEventCount(). Its periodic
 * bookkeeping (samplers, drain and resume timers) is "housekeeping": Run()
 * returns once only housekeeping events remain, where plain ns-3's Run()
 * returns because its queue is empty. A watchdog ends a Run() in which system
 * events alone went on for a limit of events (see SetWatchdogLimit).
 *
 * ns-3 hands a node new work at the current instant through
 * ScheduleWithContext with a zero delay: Node::AddApplication schedules the
 * application's Initialize so, and so do models that start work on another
 * node (an RDMA NIC scheduling a queue pair's start). Such an event "enters"
 * its node. The nodes entered by the running event, and the node of an
 * entering event once it has run, are collected for the after-event hook of
 * SetAfterNodesEnteredHook: that is how the flow tracker finds flows created
 * while the simulation runs, wherever they were created, at O(1) per event.
 */
class WormholeSimulatorImpl : public SimulatorImpl
{
  public:
    /** Tag of events not attributed to any flow. */
    static constexpr uint32_t UNATTRIBUTED = 0;
    /** Tag of the accelerator's own events. */
    static constexpr uint32_t SYSTEM = 0xffffffffu;
    /** Tag of a workload's own events (releasing flows, timing compute): never moved. */
    static constexpr uint32_t WORKLOAD = 0xfffffffeu;

    static TypeId GetTypeId();
    /**
     * @return the simulator implementation in use if it is this one, else
     * nullptr (a baseline run). Cheap: it is looked up once per
     * implementation, and the tracker asks for every packet a flow writes.
     */
    static WormholeSimulatorImpl* GetAccelerating();

    WormholeSimulatorImpl();
    ~WormholeSimulatorImpl() override;

    // SimulatorImpl
    void Destroy() override;
    bool IsFinished() const override;
    void Stop() override;
    EventId Stop(const Time& delay) override;
    EventId Schedule(const Time& delay, EventImpl* event) override;
    void ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event) override;
    EventId ScheduleNow(EventImpl* event) override;
    EventId ScheduleDestroy(EventImpl* event) override;
    void Remove(const EventId& id) override;
    void Cancel(const EventId& id) override;
    bool IsExpired(const EventId& id) const override;
    void Run() override;
    Time Now() const override;
    Time GetDelayLeft(const EventId& id) const override;
    Time GetMaximumSimulationTime() const override;
    void SetScheduler(ObjectFactory schedulerFactory) override;
    uint32_t GetSystemId() const override;
    uint32_t GetContext() const override;
    uint64_t GetEventCount() const override;

    // Attribution
    /** @return true for tags whose events a move may shift (flows' own). */
    static constexpr bool IsFlowTag(uint32_t tag)
    {
        return tag != UNATTRIBUTED && tag != SYSTEM && tag != WORKLOAD;
    }
    /** @return a fresh tag, in a class of its own (the class named by the tag). */
    uint32_t NewTag();
    /**
     * Put a tag in a class (a class is named by any tag value; partitions use their smallest).
     * @throws std::out_of_range if either is not a flow's tag (the Python binds it so before Run()).
     */
    void SetTagClass(uint32_t tag, uint32_t tagClass);
    /** @return the class a tag belongs to. */
    uint32_t GetTagClass(uint32_t tag) const;
    /** @return the tag of the event being executed. */
    uint32_t GetCurrentTag() const;
    /**
     * Attribute the rest of the running event to a tag, if it is still
     * unattributed: what a flow's first packet calls so that everything the
     * flow causes from then on carries its tag.
     */
    void AdoptTag(uint32_t tag);
    /**
     * Attribute the rest of the running flow event to another flow's tag: the
     * event that starts a packet's transmission belongs to the packet's flow,
     * whichever flow's event dequeued it. Unattributed, workload and system
     * events keep their tag.
     */
    void SetCurrentTag(uint32_t tag);
    /**
     * Attribute the rest of the running event, whatever its tag, to @p tag,
     * and return the tag it had: for work done in one event on a flow's
     * behalf, such as the end of a transfer a memo replay puts on the wire,
     * whose packets must not carry the workload's tag into the flows they
     * queue with.
     */
    uint32_t SwapCurrentTag(uint32_t tag);
    /**
     * Run the rest of the running event in node @p context, and return the
     * context it had: for work done in one event on another node's behalf,
     * such as the end of a transfer a memo replay owed and pays before a flow
     * starts, sent from the node its completion ran on.
     */
    uint32_t SwapCurrentContext(uint32_t context);
    /**
     * Call `hook` right after every unattributed or workload event: such an
     * event may have created flows (or changed anything), which the
     * controller must learn before the next event runs.
     */
    void SetAfterUnattributedHook(Callback<void> hook);
    /**
     * Call `hook` right after every event that entered a node (scheduled an
     * event on it with ScheduleWithContext and a zero delay), or was itself
     * such an entering event; TakeEnteredNodes then says which nodes. Runs
     * before the after-unattributed hook.
     */
    void SetAfterNodesEnteredHook(Callback<void> hook);
    /**
     * @return the nodes (contexts) entered since the last call, in increasing
     * order, each once; and forget them.
     */
    std::vector<uint32_t> TakeEnteredNodes();

    /**
     * Attribute a pending event to a tag (an application's start event to its
     * flow, so that it no longer bounds the skips of unrelated partitions).
     * @return false if the event is not pending.
     */
    bool Retag(const EventId& id, uint32_t tag);

    /**
     * Gate a pending event: when its turn comes, at its own place in the queue,
     * the gate (SetStartGate) is asked first, and the event runs only if the gate
     * says so; otherwise the gate did what the event was to do, its own way (a
     * memo replay starts a flow held instead of for real). Either way it counts
     * as one executed event. A gated event that runs is exactly the event plain
     * ns-3 runs there, so whatever the gate decides for other flows, this one's
     * instant is plain ns-3's, event for event.
     * @return false if the event is not pending.
     */
    bool Gate(const EventId& id);
    /** The gate of gated events: called with the event's uid, returns whether it runs. */
    void SetStartGate(Callback<bool, uint32_t> gate);

    // Moving
    /**
     * Shift every pending, not cancelled event of a class by delta (later if
     * positive). Cancelled events stay where they are: they do nothing when popped.
     * @return the number of events moved.
     */
    uint64_t MoveClass(uint32_t tagClass, const Time& delta);
    /**
     * MoveClass, except for the events executing on the given nodes: those of
     * an idle flow, which waits on its own timer and must wake at its time.
     */
    uint64_t MoveClassExcept(uint32_t tagClass,
                             const Time& delta,
                             const std::vector<uint32_t>& exemptContexts);
    /**
     * @return the time of the earliest pending, not cancelled, non-system event
     * executing on one of the given nodes, or GetMaximumSimulationTime().
     */
    Time NextEventTimeOn(const std::vector<uint32_t>& contexts) const;
    /**
     * @return the time of the earliest pending, not cancelled, unattributed
     * event, or GetMaximumSimulationTime() if there is none. No class may be
     * skipped past it: such an event may observe or change any flow.
     */
    Time NextUnattributedEventTime() const;
    /**
     * @return the number of executed events attributed to any of these tags (a
     * partition's flows: one call from Python, not one per flow).
     */
    uint64_t GetTagsEventCount(const std::vector<uint32_t>& tags) const;
    /**
     * @return the number of random numbers drawn (RandomDrawMonitor) by
     * executed events attributed to any of these tags: whether what those
     * flows did depended on ns-3's random streams.
     */
    uint64_t GetTagsDrawCount(const std::vector<uint32_t>& tags) const;
    /** @return the nodes (contexts) at which those draws were made, in increasing order. */
    std::vector<uint32_t> GetTagsDrawNodes(const std::vector<uint32_t>& tags) const;
    /**
     * @return a digest of the numbers those tags drew, each tag's in the order
     * drawn, the tags' in the order given: equal digests mean the same draws.
     */
    uint64_t GetTagsDrawDigest(const std::vector<uint32_t>& tags) const;
    /** @return every node at which a flow's event drew a random number, in increasing order. */
    std::vector<uint32_t> GetDrawNodes() const;
    /**
     * @return the random numbers drawn outside any flow's events: before Run(),
     * by events no flow caused (a user's callback, a routing protocol's timer).
     */
    uint64_t GetOtherDrawCount() const;
    /** @return true if every draw is seen (the RandomDrawMonitor could interpose). */
    bool SeesDraws() const;
    /**
     * @return how much of the interval [from, to] the tag of the running
     * event spent paused by moves: what a skip-aware RTT estimator subtracts.
     */
    Time PausedWithin(const Time& from, const Time& to) const;

    /**
     * Schedule an event on a node (context) attributed to a given tag (a
     * flow's, or WORKLOAD): what the controller uses to start a flow or to
     * complete a replayed one.
     */
    EventId ScheduleWithTag(const Time& delay, uint32_t context, uint32_t tag, EventImpl* event);
    /** ScheduleWithTag for a callback (what Python uses). */
    EventId ScheduleCallbackWithTag(const Time& delay,
                                    uint32_t context,
                                    uint32_t tag,
                                    Callback<void> callback);
    /**
     * ScheduleCallbackWithTag at @p timeNs (ns, absolute; now if past): one
     * crossing where Python would read the clock and make the delay first.
     */
    EventId ScheduleCallbackWithTagAt(int64_t timeNs,
                                      uint32_t context,
                                      uint32_t tag,
                                      Callback<void> callback);

    // System events
    /** Schedule an accelerator event: never moved, not counted. */
    EventId ScheduleSystem(const Time& delay, EventImpl* event);
    /** Schedule a callback as a system event (what Python uses). */
    EventId ScheduleSystemCallback(const Time& delay, Callback<void> callback);
    /**
     * Schedule a housekeeping event: a system event that keeps no run alive
     * (Run() returns when only such events are pending; they stay pending).
     */
    EventId ScheduleHousekeeping(const Time& delay, EventImpl* event);
    /**
     * ScheduleHousekeeping for a callback (what Python uses).
     * @throws std::invalid_argument for a negative delay (the Python binds it so before Run()).
     */
    EventId ScheduleHousekeepingCallback(const Time& delay, Callback<void> callback);
    /** @return the number of system events executed. */
    uint64_t GetSystemEventCount() const;
    /** @return how many of the counted events (GetEventCount) had run by each instant it marks. */
    const EventTimeline& GetEventTimeline() const;

    // Watchdog
    /**
     * End Run() once this many system events (housekeeping aside: it cannot keep
     * a run alive) ran with no model event pending: a run plain ns-3 would
     * have ended, kept alive by the accelerator.
     */
    void SetWatchdogLimit(uint64_t events);
    /** @return true if the watchdog ended the last Run(). */
    bool WatchdogFired() const;
    /** @return when only system events were left, in the Run() the watchdog ended. */
    Time GetWatchdogSince() const;

  private:
    void DoDispose() override;

    struct Pending;
    /** The pending events, in the order they run (Scheduler::EventKey's). */
    using Queue = std::map<Scheduler::EventKey, Pending>;
    using Node = Queue::value_type;

    /** What a pending event is, besides its key. */
    struct Pending
    {
        EventImpl* impl;
        uint32_t tag;
        bool moved;        //!< a move changed its time: its current time is in m_moved
        bool housekeeping; //!< a system event that keeps no run alive
        bool enters;       //!< scheduled on its node at the instant it was scheduled (see class doc)
        bool gated;        //!< the start gate decides whether it runs (see Gate)
        Node* prev;        //!< the previous pending event of the same tag (listed tags only)
        Node* next;        //!< the next pending event of the same tag (listed tags only)
    };

    /** Current (and original) time of an event a move changed, by uid. */
    struct Moved
    {
        uint64_t ts;       //!< its time now
        uint64_t original; //!< the time its EventId carries
        bool pending;
    };

    /** A period during which a tag was paused by a move. */
    struct Pause
    {
        uint64_t from;
        uint64_t to;
    };

    void ProcessOneEvent();
    /** The RandomDrawMonitor's Draw trace: attribute the draw to the running event. */
    void NoteDraw(const RngStream* stream, double value);
    EventId Insert(uint64_t ts,
                   uint32_t context,
                   uint32_t tag,
                   EventImpl* event,
                   bool housekeeping = false,
                   bool enters = false);
    /** A pending event leaves the queue (it runs, or is removed): count it out. */
    void CountOut(const Pending& pending);
    /** @return true if the tag's pending events are listed (unattributed and flow tags). */
    bool IsListed(uint32_t tag) const;
    void Link(Node* node);
    void Unlink(Node* node);
    /** The event of a moved node leaves the queue (it runs, or is removed). */
    void ForgetMoved(const Node& node, bool removed);
    /** @return the current key of the event an EventId names (pending or not). */
    Scheduler::EventKey CurrentKey(const EventId& id) const;
    /** @return the queue entry of a pending (possibly cancelled) event, or end(). */
    Queue::iterator FindPending(const EventId& id);

    Queue m_queue;
    /** Per listed tag, its first pending event (the tags' intrusive lists). */
    std::vector<Node*> m_tagHead;
    /** Events a move changed, by uid: pending ones, and run ones moved earlier than their EventId says. */
    std::unordered_map<uint32_t, Moved> m_moved;
    std::list<EventId> m_destroyEvents;
    std::vector<uint32_t> m_tagClass;
    std::vector<uint64_t> m_tagEventCount;
    /** Per tag, the random numbers its events drew. */
    std::vector<uint64_t> m_tagDrawCount;
    /** Per tag, the nodes it drew at (sorted, each once), and a digest of what it drew. */
    std::vector<std::vector<uint32_t>> m_tagDrawNodes;
    std::vector<uint64_t> m_tagDrawDigest;
    /** Every node a flow's event drew at (sorted, each once). */
    std::vector<uint32_t> m_drawNodes;
    uint64_t m_otherDrawCount;
    bool m_seesDraws;
    /** Per tag, the pauses moves imposed on it, oldest first. */
    std::vector<std::vector<Pause>> m_tagPauses;
    Callback<void> m_afterUnattributed;
    Callback<void> m_afterNodesEntered;
    Callback<bool, uint32_t> m_startGate;
    /** Nodes entered since TakeEnteredNodes last ran (may repeat). */
    std::vector<uint32_t> m_enteredNodes;

    bool m_stop;
    uint32_t m_uid;
    uint32_t m_currentUid;
    uint64_t m_currentTs;
    /** The largest uid run at m_currentTs: every key up to (m_currentTs, it) ran or was moved. */
    uint32_t m_lastUid;
    uint32_t m_currentContext;
    uint32_t m_currentTag;
    uint64_t m_eventCount;
    EventTimeline m_timeline;
    uint64_t m_systemEventCount;
    /** Pending system events (housekeeping included), and housekeeping ones. */
    uint64_t m_systemPending;
    uint64_t m_housekeepingPending;
    uint64_t m_watchdogLimit;
    bool m_watchdogFired;
    uint64_t m_watchdogSince;
};

} // namespace ns3

#endif /* WORMHOLE_SIMULATOR_IMPL_H */
