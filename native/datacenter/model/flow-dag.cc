/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-dag.h"

#include "ns3/rdma-nic.h"
#include "ns3/rdma-queue-pair.h"

#include "ns3/abort.h"
#include "ns3/bulk-send-application.h"
#include "ns3/enum.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet-sink.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <queue>
#include <unordered_map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowDag");
NS_OBJECT_ENSURE_REGISTERED(FlowDag);

namespace
{
Ipv4Address
FirstAddress(Ptr<Node> node)
{
    Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
    NS_ABORT_MSG_IF(!ipv4 || ipv4->GetNInterfaces() < 2,
                    "FlowDag: node " << node->GetId() << " has no IPv4 address");
    return ipv4->GetAddress(1, 0).GetLocal();
}

std::vector<FlowDag*>&
Registry()
{
    static std::vector<FlowDag*> instances;
    return instances;
}

std::vector<FlowDag::WorkloadEventCallback>&
WorkloadEventHooks()
{
    static std::vector<FlowDag::WorkloadEventCallback> hooks;
    return hooks;
}
} // namespace

TypeId
FlowDag::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FlowDag")
            .SetParent<Object>()
            .SetGroupName("Datacenter")
            .AddConstructor<FlowDag>()
            .AddAttribute("Transport",
                          "How flows carry their bytes: Socket (BulkSend to a PacketSink over "
                          "Protocol) or Rdma (a queue pair of the nodes' RdmaNic).",
                          EnumValue(SOCKET),
                          MakeEnumAccessor<Transport>(&FlowDag::m_transport),
                          MakeEnumChecker(SOCKET, "Socket", RDMA, "Rdma"))
            .AddAttribute("Protocol",
                          "The socket factory of Socket flows' senders and sinks.",
                          TypeIdValue(TcpSocketFactory::GetTypeId()),
                          MakeTypeIdAccessor(&FlowDag::m_socketFactory),
                          MakeTypeIdChecker())
            .AddAttribute("SendSize",
                          "Bytes a sender hands its socket per write (BulkSend SendSize).",
                          UintegerValue(14480),
                          MakeUintegerAccessor(&FlowDag::m_sendSize),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("FirstPort",
                          "The first port each node hands out; every flow gets the next one "
                          "of its source (as source port) and of its destination (as sink port).",
                          UintegerValue(10000),
                          MakeUintegerAccessor(&FlowDag::m_firstPort),
                          MakeUintegerChecker<uint16_t>(1))
            .AddTraceSource("Release",
                            "A task's prerequisites completed (a flow's applications exist).",
                            MakeTraceSourceAccessor(&FlowDag::m_releaseTrace),
                            "ns3::TracedValueCallback::Uint32")
            .AddTraceSource("Finish",
                            "A task completed (a flow's last byte arrived).",
                            MakeTraceSourceAccessor(&FlowDag::m_finishTrace),
                            "ns3::TracedValueCallback::Uint32");
    return tid;
}

FlowDag::FlowDag()
    : m_transport(SOCKET),
      m_sendSize(14480),
      m_firstPort(10000)
{
    Registry().push_back(this);
}

FlowDag::~FlowDag()
{
    auto& instances = Registry();
    instances.erase(std::remove(instances.begin(), instances.end(), this), instances.end());
}

const std::vector<FlowDag*>&
FlowDag::GetInstances()
{
    return Registry();
}

void
FlowDag::AddWorkloadEventHook(WorkloadEventCallback hook)
{
    WorkloadEventHooks().push_back(hook);
}

void
FlowDag::NotifyWorkloadEvent(const EventId& event)
{
    for (const WorkloadEventCallback& hook : WorkloadEventHooks())
    {
        hook(event);
    }
}

void
FlowDag::DoDispose()
{
    m_tasks.clear();
    m_running.clear();
    m_rdmaFlows = RdmaFlowHelper();
    Object::DoDispose();
}

uint32_t
FlowDag::AddTask(const Task& task)
{
    NS_ABORT_MSG_IF(m_started, "FlowDag: tasks must be added before Start()");
    NS_ABORT_MSG_IF(task.delay.IsStrictlyNegative(), "FlowDag: negative delay or duration");
    m_tasks.push_back(task);
    return m_tasks.size() - 1;
}

uint32_t
FlowDag::AddFlow(Ptr<Node> src, Ptr<Node> dst, uint64_t bytes, Time delay)
{
    NS_ABORT_MSG_IF(bytes == 0, "FlowDag: a flow needs at least one byte");
    NS_ABORT_MSG_IF(!src || !dst || src == dst, "FlowDag: a flow needs two different nodes");
    Task t;
    t.src = src;
    t.dst = dst;
    t.bytes = bytes;
    t.delay = delay;
    // ports in order of addition, not of release: the same graph always gets the same
    // 5-tuples, whatever order simultaneous releases happen in
    t.srcPort = NextPort(src);
    t.dstPort = NextPort(dst);
    return AddTask(t);
}

uint32_t
FlowDag::AddCompute(Ptr<Node> node, Time duration)
{
    NS_ABORT_MSG_IF(!node, "FlowDag: a compute task needs a node");
    Task t;
    t.src = node;
    t.bytes = 0;
    t.delay = duration;
    return AddTask(t);
}

void
FlowDag::AddDependency(uint32_t task, uint32_t prerequisite)
{
    NS_ABORT_MSG_IF(task >= m_tasks.size() || prerequisite >= task,
                    "FlowDag: task " << task << " may only depend on tasks added before it, not "
                                     << prerequisite);
    m_tasks[prerequisite].dependents.push_back(task);
    ++m_tasks[task].waiting;
}

void
FlowDag::Start()
{
    NS_ABORT_MSG_IF(m_started, "FlowDag: Start() called twice");
    for (uint32_t i = 0; m_transport == RDMA && i < m_tasks.size(); ++i)
    {
        for (Ptr<Node> node : {m_tasks[i].src, m_tasks[i].dst})
        {
            NS_ABORT_MSG_IF(node && m_tasks[i].dst && !node->GetObject<RdmaNic>(),
                            "FlowDag: flow task " << i << " is RDMA but node " << node->GetId()
                                                  << " has no RdmaNic (RdmaHelper::Install it)");
        }
    }
    m_started = true;
    EventId roots = Simulator::ScheduleNow(&FlowDag::ReleaseRoots, this);
    NotifyWorkloadEvent(roots);
}

void
FlowDag::ReleaseRoots()
{
    for (uint32_t i = 0; i < m_tasks.size(); ++i)
    {
        if (m_tasks[i].waiting == 0)
        {
            Release(i);
        }
    }
}

uint16_t
FlowDag::NextPort(Ptr<Node> node)
{
    auto [it, fresh] = m_nextPort.emplace(node->GetId(), m_firstPort);
    NS_ABORT_MSG_IF(it->second > 65535,
                    "FlowDag: node " << node->GetId() << " ran out of ports");
    return static_cast<uint16_t>(it->second++);
}

void
FlowDag::Release(uint32_t task)
{
    Task& t = m_tasks[task];
    t.release = Simulator::Now();
    m_running.insert(task);
    if (!t.dst)
    {
        ScheduleWorkloadEvent(t.delay, &FlowDag::Complete, task);
    }
    else if (m_transport == RDMA)
    {
        ReleaseRdmaFlow(task);
    }
    else
    {
        ReleaseSocketFlow(task);
    }
    m_releaseTrace(task);
}

void
FlowDag::ReleaseRdmaFlow(uint32_t task)
{
    Task& t = m_tasks[task];
    uint32_t id = m_rdmaFlows.AddFlow(
        t.src,
        t.dst,
        t.bytes,
        Simulator::Now() + t.delay,
        RdmaFlowHelper::CompletionCallback([this, task](Ptr<RdmaQueuePair>) { Complete(task); }),
        t.srcPort);
    t.queuePair = m_rdmaFlows.GetFlow(id);
}

void
FlowDag::ReleaseSocketFlow(uint32_t task)
{
    Task& t = m_tasks[task];
    Ptr<PacketSink> sink = CreateObject<PacketSink>();
    sink->SetAttribute("Protocol", TypeIdValue(m_socketFactory));
    sink->SetAttribute("Local",
                       AddressValue(InetSocketAddress(Ipv4Address::GetAny(), t.dstPort)));
    sink->SetStartTime(Seconds(0));
    t.dst->AddApplication(sink);
    sink->TraceConnectWithoutContext(
        "Rx",
        Callback<void, Ptr<const Packet>, const Address&>(
            [this, task](Ptr<const Packet> p, const Address& from) { OnSinkRx(task, p, from); }));
    t.sink = sink;

    Ptr<BulkSendApplication> sender = CreateObject<BulkSendApplication>();
    sender->SetAttribute("Protocol", TypeIdValue(m_socketFactory));
    sender->SetAttribute("Remote", AddressValue(InetSocketAddress(FirstAddress(t.dst), t.dstPort)));
    sender->SetAttribute("Local", AddressValue(InetSocketAddress(FirstAddress(t.src), t.srcPort)));
    sender->SetAttribute("MaxBytes", UintegerValue(t.bytes));
    sender->SetAttribute("SendSize", UintegerValue(m_sendSize));
    sender->SetStartTime(t.delay);
    t.src->AddApplication(sender);
    // initialize now rather than in the event AddApplication scheduled, so
    // both start events are pending as soon as the release returns
    sink->Initialize();
    sender->Initialize();
}

void
FlowDag::ScheduleWorkloadEvent(Time delay, void (FlowDag::*method)(uint32_t), uint32_t task)
{
    EventId event = Simulator::Schedule(delay, method, this, task);
    NotifyWorkloadEvent(event);
}

void
FlowDag::Complete(uint32_t task)
{
    Task& t = m_tasks[task];
    t.finish = Simulator::Now();
    m_running.erase(task);
    ++m_finished;
    m_finishTrace(task);
    for (uint32_t next : t.dependents)
    {
        if (--m_tasks[next].waiting == 0)
        {
            ScheduleWorkloadEvent(Seconds(0), &FlowDag::Release, next);
        }
    }
}

void
FlowDag::OnSinkRx(uint32_t task, Ptr<const Packet> packet, const Address& from)
{
    Task& t = m_tasks[task];
    if (!t.finish.IsStrictlyNegative() || t.sink->GetTotalRx() < t.bytes)
    {
        return;
    }
    Complete(task);
}

std::vector<FlowDag::UpcomingFlow>
FlowDag::GetUpcomingFlows(Time horizon, const std::vector<KnownEnd>& ends, bool earliest) const
{
    const int64_t now = Simulator::Now().GetNanoSeconds();
    const int64_t until = (Simulator::Now() + horizon).GetNanoSeconds();
    // a flow is the only one from its source node with its source port (NextPort)
    auto sourceKey = [](const Ptr<Node>& src, uint16_t srcPort) {
        return (static_cast<uint64_t>(src->GetId()) << 16) | srcPort;
    };
    std::unordered_map<uint64_t, const KnownEnd*> known;
    for (const KnownEnd& end : ends)
    {
        known.emplace(sourceKey(end.src, end.srcPort), &end);
    }
    auto knownEnd = [&](const Task& t) -> const KnownEnd* {
        auto it = known.empty() ? known.end() : known.find(sourceKey(t.src, t.srcPort));
        return it != known.end() && it->second->dst == t.dst ? it->second : nullptr;
    };
    // compute tasks running now, and running flows whose end is known, by the time they end
    // (the running tasks only: a scan of every task was most of a lookup on moe-medium)
    using Ending = std::pair<int64_t, uint32_t>;
    std::priority_queue<Ending, std::vector<Ending>, std::greater<>> ending;
    for (uint32_t i : m_running)
    {
        const Task& t = m_tasks[i];
        if (!t.dst)
        {
            ending.emplace((t.release + t.delay).GetNanoSeconds(), i);
        }
        else if (const KnownEnd* end = knownEnd(t))
        {
            ending.emplace(end->end, i);
        }
        else if (earliest)
        {
            ending.emplace(std::max(now, (t.release + t.delay).GetNanoSeconds()), i);
        }
    }
    std::unordered_map<uint32_t, uint32_t> waiting; // tasks touched: prerequisites left
    std::unordered_map<uint32_t, int64_t> ready;    // latest known prerequisite end
    std::vector<UpcomingFlow> upcoming;
    while (!ending.empty())
    {
        auto [end, task] = ending.top();
        ending.pop();
        if (end > until)
        {
            break;
        }
        for (uint32_t next : m_tasks[task].dependents)
        {
            const Task& d = m_tasks[next];
            if (!d.release.IsStrictlyNegative())
            {
                continue;
            }
            auto [left, fresh] = waiting.emplace(next, d.waiting);
            ready[next] = std::max(ready[next], end);
            if (--left->second > 0)
            {
                continue;
            }
            int64_t start = ready[next] + d.delay.GetNanoSeconds();
            if (d.dst)
            {
                if (start <= until)
                {
                    upcoming.push_back(
                        UpcomingFlow{start, next, d.src, d.dst, d.srcPort, d.dstPort, d.bytes});
                }
                if (const KnownEnd* end = knownEnd(d))
                {
                    ending.emplace(std::max(end->end, start), next); // a flow to come, its end known
                }
                else if (earliest)
                {
                    ending.emplace(start, next);
                }
            }
            else
            {
                ending.emplace(start, next); // a compute task: it ends `delay` after it starts
            }
        }
    }
    return upcoming;
}

uint32_t
FlowDag::GetNTasks() const
{
    return m_tasks.size();
}

uint32_t
FlowDag::GetNFinished() const
{
    return m_finished;
}

bool
FlowDag::IsFlow(uint32_t task) const
{
    return m_tasks.at(task).dst != nullptr;
}

Time
FlowDag::GetReleaseTime(uint32_t task) const
{
    return m_tasks.at(task).release;
}

Time
FlowDag::GetStartTime(uint32_t task) const
{
    const Task& t = m_tasks.at(task);
    if (t.release.IsStrictlyNegative() || !t.dst)
    {
        return t.release;
    }
    return t.release + t.delay;
}

Time
FlowDag::GetFinishTime(uint32_t task) const
{
    return m_tasks.at(task).finish;
}

uint16_t
FlowDag::GetSourcePort(uint32_t task) const
{
    return m_tasks.at(task).srcPort;
}

uint16_t
FlowDag::GetDestinationPort(uint32_t task) const
{
    return m_transport == RDMA && IsFlow(task) ? RdmaNic::ROCE_PORT : m_tasks.at(task).dstPort;
}

Ptr<RdmaQueuePair>
FlowDag::GetQueuePair(uint32_t task) const
{
    return m_tasks.at(task).queuePair;
}

} // namespace ns3
