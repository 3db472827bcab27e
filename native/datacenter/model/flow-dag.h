/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A dependency graph of bulk flows and compute tasks: each task is released
 * when the last of the tasks it depends on has completed, the way NCCL steps
 * a collective and a training step waits for its inputs and its kernels.
 * Flows are BulkSend over sockets or RDMA WRITEs on queue pairs.
 */
#ifndef FLOW_DAG_H
#define FLOW_DAG_H

#include "ns3/rdma-flow-helper.h"

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"
#include "ns3/type-id.h"

#include <cstdint>
#include <set>
#include <unordered_map>
#include <vector>

namespace ns3
{

class Node;
class Packet;

class PacketSink;
class Address;
class RdmaQueuePair;

/**
 * @brief Starts flows and times compute tasks as their prerequisites complete.
 *
 * Tasks are numbered in order of addition. A flow task has a source,
 * destination, size and start delay; a compute task has a node and a
 * duration. Start() releases the tasks that depend on nothing. Every flow
 * gets a port of its own on its source and on its destination (handed out
 * per node in order of addition, so a graph's flows always have the same
 * 5-tuples). With the Socket transport, a flow released at time t gets a
 * PacketSink on its destination and a BulkSendApplication on its source
 * starting at t + delay, bound to those ports; it completes when its sink
 * has received all its bytes. With the Rdma transport, it is a queue pair
 * (RdmaFlowHelper; both nodes need an RdmaNic) whose UDP source port is the
 * flow's source port, starting at t + delay; it completes when its receiver
 * holds the last byte. A compute task released at t completes at t +
 * duration. A completion releases every task whose last prerequisite it was.
 *
 * Everything is ordinary ns-3: the same graph gives the same run with any
 * simulator implementation. Releases and compute completions run in events
 * of their own, the graph's "workload events": each one is handed to the
 * workload-event hooks (AddWorkloadEventHook) as soon as it is scheduled, so
 * that a simulator that classifies events (an accelerator that must never
 * move them) can tell them from the flows' events without FlowDag knowing it.
 */
class FlowDag : public Object
{
  public:
    /** @brief A flow the graph will start at a time already known (see GetUpcomingFlows). */
    struct UpcomingFlow
    {
        int64_t start{0}; //!< ns
        uint32_t task{0}; //!< the flow task's id
        Ptr<Node> src;
        Ptr<Node> dst;
        uint16_t srcPort{0};
        uint16_t dstPort{0};
        uint64_t bytes{0};
    };

    /**
     * @brief A flow, running or still to come, whose end the caller knows
     * (an accelerator that scheduled its completion, or asks what replaying
     * it would release): GetUpcomingFlows follows what it releases as it
     * follows a compute task's end.
     */
    struct KnownEnd
    {
        Ptr<Node> src;
        Ptr<Node> dst;
        uint16_t srcPort{0};
        int64_t end{0}; //!< ns
    };

    /** Called with every workload event any FlowDag schedules, right after it is scheduled. */
    typedef Callback<void, const EventId&> WorkloadEventCallback;

    /** How flow tasks carry their bytes. */
    enum Transport
    {
        SOCKET, //!< BulkSend to a PacketSink over the Protocol socket factory
        RDMA,   //!< an RDMA WRITE on a queue pair of the nodes' RdmaNic
    };

    static TypeId GetTypeId();

    FlowDag();
    ~FlowDag() override;

    /**
     * Add a flow of `bytes` (> 0) from src to dst that starts `delay` after its
     * prerequisites are complete (after Start() if it has none).
     * @return the task's id, in order of addition from 0.
     */
    uint32_t AddFlow(Ptr<Node> src, Ptr<Node> dst, uint64_t bytes, Time delay);
    /**
     * Add a compute task on a node that completes `duration` after its
     * prerequisites are complete. @return the task's id.
     */
    uint32_t AddCompute(Ptr<Node> node, Time duration);
    /** Make `task` wait for `prerequisite` to complete (added earlier). */
    void AddDependency(uint32_t task, uint32_t prerequisite);
    /** Release the tasks without prerequisites, in an event at the current time; call once. */
    void Start();

    /**
     * @return every FlowDag that exists: a flow tracker hooks their Release
     * traces to learn each flow's applications the moment they are created.
     */
    static const std::vector<FlowDag*>& GetInstances();

    /**
     * Hand every workload event (a release, a compute task's completion) that
     * any FlowDag schedules from now on to @p hook, right after scheduling
     * it and before anything else runs. Hooks are class-wide, not per graph,
     * because the module that classifies events (an accelerator's adapter)
     * is loaded before the graphs exist; they run in the order added.
     */
    static void AddWorkloadEventHook(WorkloadEventCallback hook);

    /**
     * @return the flows that will start within `horizon` at times already
     * determined: released by compute tasks running now (or by chains of
     * compute tasks they release), since a compute task's end is known when
     * it starts, and by the flows in `ends`, running or to come, whose ends
     * the caller knows. A flow that waits on any other flow is not among
     * them, unless `earliest`: then every flow that may start within `horizon`
     * is, at the earliest time it may, a running flow whose end is not in
     * `ends` taken to end now and a flow to come to end as it starts.
     */
    std::vector<UpcomingFlow> GetUpcomingFlows(Time horizon,
                                               const std::vector<KnownEnd>& ends = {},
                                               bool earliest = false) const;

    uint32_t GetNTasks() const;
    uint32_t GetNFinished() const;
    /** @return true for a flow task, false for a compute task. */
    bool IsFlow(uint32_t task) const;
    /** @return when the task's prerequisites completed, or -1 s if not yet. */
    Time GetReleaseTime(uint32_t task) const;
    /** @return when the task starts (release + delay for a flow, release for compute), or -1 s. */
    Time GetStartTime(uint32_t task) const;
    /** @return when the task completed (a flow's last byte arrived), or -1 s while unfinished. */
    Time GetFinishTime(uint32_t task) const;
    uint16_t GetSourcePort(uint32_t task) const;
    /** @return the sink's port of a Socket flow, RoCEv2's UDP port (4791) of an Rdma flow. */
    uint16_t GetDestinationPort(uint32_t task) const;
    /** @return the queue pair of a released Rdma flow task, nullptr otherwise. */
    Ptr<RdmaQueuePair> GetQueuePair(uint32_t task) const;

  private:
    struct Task
    {
        Ptr<Node> src; //!< the computing node of a compute task
        Ptr<Node> dst; //!< nullptr for a compute task
        uint64_t bytes;
        Time delay; //!< a flow's start delay, a compute task's duration
        std::vector<uint32_t> dependents;
        uint32_t waiting{0};
        Time release{Seconds(-1)};
        Time finish{Seconds(-1)};
        uint16_t srcPort{0};
        uint16_t dstPort{0};
        Ptr<PacketSink> sink;
        Ptr<RdmaQueuePair> queuePair;
    };

    void DoDispose() override;
    uint32_t AddTask(const Task& task);
    /** Release every task that depends on nothing. */
    void ReleaseRoots();
    /** Create a flow's sender and receiver, or time a compute task. */
    void Release(uint32_t task);
    /** Create a Socket flow's sink and BulkSend sender. */
    void ReleaseSocketFlow(uint32_t task);
    /** Create an Rdma flow's queue pair. */
    void ReleaseRdmaFlow(uint32_t task);
    /** Hand a workload event just scheduled to the workload-event hooks. */
    static void NotifyWorkloadEvent(const EventId& event);
    /** Schedule a workload event: the graph's own, not part of the flow that caused it. */
    void ScheduleWorkloadEvent(Time delay, void (FlowDag::*method)(uint32_t), uint32_t task);
    /** A task completed: release its dependents whose last prerequisite it was. */
    void Complete(uint32_t task);
    void OnSinkRx(uint32_t task, Ptr<const Packet> packet, const Address& from);
    uint16_t NextPort(Ptr<Node> node);

    std::vector<Task> m_tasks;
    /** Tasks released and not finished, by index: what GetUpcomingFlows starts from. */
    std::set<uint32_t> m_running;
    std::unordered_map<uint32_t, uint32_t> m_nextPort; //!< per node id
    uint32_t m_finished{0};
    bool m_started{false};
    Transport m_transport;
    RdmaFlowHelper m_rdmaFlows;
    TypeId m_socketFactory;
    uint32_t m_sendSize;
    uint16_t m_firstPort;
    TracedCallback<uint32_t> m_releaseTrace;
    TracedCallback<uint32_t> m_finishTrace;
};

} // namespace ns3

#endif /* FLOW_DAG_H */
