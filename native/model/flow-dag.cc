/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-dag.h"

#include "wormhole-simulator-impl.h"

#include "ns3/abort.h"
#include "ns3/bulk-send-application.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet-sink.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

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
} // namespace

TypeId
FlowDag::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FlowDag")
            .SetParent<Object>()
            .SetGroupName("Wormhole")
            .AddConstructor<FlowDag>()
            .AddAttribute("Protocol",
                          "The socket factory of the flows' senders and sinks.",
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
                            "A flow's prerequisites completed; its applications were created.",
                            MakeTraceSourceAccessor(&FlowDag::m_releaseTrace),
                            "ns3::TracedValueCallback::Uint32")
            .AddTraceSource("Finish",
                            "A flow's last byte arrived.",
                            MakeTraceSourceAccessor(&FlowDag::m_finishTrace),
                            "ns3::TracedValueCallback::Uint32");
    return tid;
}

FlowDag::FlowDag()
    : m_sendSize(14480),
      m_firstPort(10000)
{
}

void
FlowDag::DoDispose()
{
    m_flows.clear();
    Object::DoDispose();
}

uint32_t
FlowDag::AddFlow(Ptr<Node> src, Ptr<Node> dst, uint64_t bytes, Time delay)
{
    NS_ABORT_MSG_IF(bytes == 0, "FlowDag: a flow needs at least one byte");
    NS_ABORT_MSG_IF(!src || !dst || src == dst, "FlowDag: a flow needs two different nodes");
    NS_ABORT_MSG_IF(delay.IsStrictlyNegative(), "FlowDag: negative start delay");
    NS_ABORT_MSG_IF(m_started, "FlowDag: flows must be added before Start()");
    Flow f;
    f.src = src;
    f.dst = dst;
    f.bytes = bytes;
    f.delay = delay;
    m_flows.push_back(f);
    return m_flows.size() - 1;
}

void
FlowDag::AddDependency(uint32_t flow, uint32_t prerequisite)
{
    NS_ABORT_MSG_IF(flow >= m_flows.size() || prerequisite >= flow,
                    "FlowDag: flow " << flow << " may only depend on flows added before it, not "
                                     << prerequisite);
    m_flows[prerequisite].dependents.push_back(flow);
    ++m_flows[flow].waiting;
}

void
FlowDag::Start()
{
    NS_ABORT_MSG_IF(m_started, "FlowDag: Start() called twice");
    m_started = true;
    for (uint32_t i = 0; i < m_flows.size(); ++i)
    {
        if (m_flows[i].waiting == 0)
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
FlowDag::Release(uint32_t flow)
{
    Flow& f = m_flows[flow];
    f.release = Simulator::Now();
    f.srcPort = NextPort(f.src);
    f.dstPort = NextPort(f.dst);

    Ptr<PacketSink> sink = CreateObject<PacketSink>();
    sink->SetAttribute("Protocol", TypeIdValue(m_socketFactory));
    sink->SetAttribute("Local",
                       AddressValue(InetSocketAddress(Ipv4Address::GetAny(), f.dstPort)));
    sink->SetStartTime(Seconds(0));
    f.dst->AddApplication(sink);
    sink->TraceConnectWithoutContext(
        "Rx",
        Callback<void, Ptr<const Packet>, const Address&>(
            [this, flow](Ptr<const Packet> p, const Address& from) { OnSinkRx(flow, p, from); }));
    f.sink = sink;

    Ptr<BulkSendApplication> sender = CreateObject<BulkSendApplication>();
    sender->SetAttribute("Protocol", TypeIdValue(m_socketFactory));
    sender->SetAttribute("Remote", AddressValue(InetSocketAddress(FirstAddress(f.dst), f.dstPort)));
    sender->SetAttribute("Local", AddressValue(InetSocketAddress(FirstAddress(f.src), f.srcPort)));
    sender->SetAttribute("MaxBytes", UintegerValue(f.bytes));
    sender->SetAttribute("SendSize", UintegerValue(m_sendSize));
    sender->SetStartTime(f.delay);
    f.src->AddApplication(sender);
    // initialize now rather than in the event AddApplication scheduled, so
    // both start events are pending as soon as the release returns
    sink->Initialize();
    sender->Initialize();
    m_releaseTrace(flow);
}

void
FlowDag::ScheduleRelease(uint32_t flow)
{
    EventId release = Simulator::ScheduleNow(&FlowDag::Release, this, flow);
    auto impl = DynamicCast<WormholeSimulatorImpl>(Simulator::GetImplementation());
    if (impl)
    {
        // the release is the workload's decision, not part of the finished flow
        impl->Retag(release, WormholeSimulatorImpl::UNATTRIBUTED);
    }
}

void
FlowDag::OnSinkRx(uint32_t flow, Ptr<const Packet> packet, const Address& from)
{
    Flow& f = m_flows[flow];
    if (!f.finish.IsNegative() || f.sink->GetTotalRx() < f.bytes)
    {
        return;
    }
    f.finish = Simulator::Now();
    ++m_finished;
    m_finishTrace(flow);
    for (uint32_t next : f.dependents)
    {
        if (--m_flows[next].waiting == 0)
        {
            ScheduleRelease(next);
        }
    }
}

uint32_t
FlowDag::GetNFlows() const
{
    return m_flows.size();
}

uint32_t
FlowDag::GetNFinished() const
{
    return m_finished;
}

Time
FlowDag::GetReleaseTime(uint32_t flow) const
{
    return m_flows.at(flow).release;
}

Time
FlowDag::GetStartTime(uint32_t flow) const
{
    const Flow& f = m_flows.at(flow);
    return f.release.IsNegative() ? f.release : f.release + f.delay;
}

Time
FlowDag::GetFinishTime(uint32_t flow) const
{
    return m_flows.at(flow).finish;
}

uint16_t
FlowDag::GetSourcePort(uint32_t flow) const
{
    return m_flows.at(flow).srcPort;
}

uint16_t
FlowDag::GetDestinationPort(uint32_t flow) const
{
    return m_flows.at(flow).dstPort;
}

} // namespace ns3
