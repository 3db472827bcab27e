/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "application-flow.h"

#include "attribute-fingerprint.h"
#include "bulk-send-flow.h"
#include "onoff-flow.h"
#include "private-access.h"
#include "skip-aware-rtt-estimator.h"

#include "ns3/abort.h"
#include "ns3/bulk-send-application.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/node.h"
#include "ns3/onoff-application.h"
#include "ns3/packet-sink.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <deque>
#include <memory>
#include <sstream>
#include <utility>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(ApplicationFlow);

namespace
{
constexpr uint8_t TCP_PROTOCOL = 6;
constexpr uint8_t UDP_PROTOCOL = 17;
} // namespace

TypeId
ApplicationFlow::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::ApplicationFlow").SetParent<TrackedFlow>().SetGroupName("Wormhole");
    return tid;
}

ApplicationFlow::~ApplicationFlow() = default;

Ptr<ApplicationFlow>
ApplicationFlow::Adapt(Ptr<Application> app)
{
    bool bulk = DynamicCast<BulkSendApplication>(app) != nullptr;
    if (!bulk && !DynamicCast<OnOffApplication>(app))
    {
        return nullptr;
    }
    AddressValue remote;
    app->GetAttribute("Remote", remote);
    if (!InetSocketAddress::IsMatchingType(remote.Get()))
    {
        return nullptr; // IPv6 and packet sockets are left to plain ns-3
    }
    Ptr<ApplicationFlow> flow = bulk ? Ptr<ApplicationFlow>(CreateObject<BulkSendFlow>())
                                     : Ptr<ApplicationFlow>(CreateObject<OnOffFlow>());
    flow->Configure(app);
    return flow;
}

void
ApplicationFlow::Configure(Ptr<Application> app)
{
    m_app = app;
    m_srcNode = app->GetNode();
    TypeIdValue protocol;
    app->GetAttribute("Protocol", protocol);
    m_tcp = protocol.Get() == TcpSocketFactory::GetTypeId();
    AddressValue remote;
    app->GetAttribute("Remote", remote);
    InetSocketAddress dst = InetSocketAddress::ConvertFrom(remote.Get());
    m_dstAddress = dst.GetIpv4();
    m_dstPort = dst.GetPort();
    m_dstNode = wormhole::NodeOwning(m_dstAddress);
    AddressValue local;
    app->GetAttribute("Local", local);
    if (InetSocketAddress::IsMatchingType(local.Get()))
    {
        // a sender bound to its own port: its packets are known before it starts
        InetSocketAddress bound = InetSocketAddress::ConvertFrom(local.Get());
        m_srcPort = bound.GetPort();
        m_srcAddress = bound.GetIpv4();
    }
    UintegerValue maxBytes;
    app->GetAttribute("MaxBytes", maxBytes);
    m_size = maxBytes.Get();
    TimeValue start;
    app->GetAttribute("StartTime", start);
    // an application's start time counts from when it is initialized: at time 0
    // for a script's set-up, at its creation for one a workload adds while running
    EventId& startEvent = wormhole::ApplicationStartEvent(app);
    m_start = startEvent.IsPending() ? TimeStep(startEvent.GetTs()) : Simulator::Now() + start.Get();
}

void
ApplicationFlow::DoDispose()
{
    m_app = nullptr;
    m_sink = nullptr;
    TrackedFlow::DoDispose();
}

Ptr<Application>
ApplicationFlow::GetApplication() const
{
    return m_app;
}

void
ApplicationFlow::SetSink(Ptr<PacketSink> sink)
{
    m_sink = sink;
}

Ptr<PacketSink>
ApplicationFlow::GetSink() const
{
    return m_sink;
}

void
ApplicationFlow::NotifyReceived(uint32_t bytes)
{
    m_received += bytes;
}

bool
ApplicationFlow::IsComplete() const
{
    return m_size > 0 && GetDelivered() >= m_size;
}

bool
ApplicationFlow::IsTcp() const
{
    return m_tcp;
}

std::string
ApplicationFlow::ProtocolSuffix() const
{
    return m_tcp ? "-tcp" : "-udp";
}

uint8_t
ApplicationFlow::GetProtocol() const
{
    return m_tcp ? TCP_PROTOCOL : UDP_PROTOCOL;
}

bool
ApplicationFlow::GetReversePorts(uint16_t& source, uint16_t& destination) const
{
    source = m_dstPort;
    destination = m_srcPort;
    return m_tcp;
}

EventId
ApplicationFlow::GetStartEvent() const
{
    return wormhole::ApplicationStartEvent(m_app);
}

void
ApplicationFlow::NotifyStarted()
{
    Address local;
    GetSocket()->GetSockName(local);
    InetSocketAddress bound = InetSocketAddress::ConvertFrom(local);
    m_srcPort = bound.GetPort();
    m_srcAddress = bound.GetIpv4();
    if (m_srcAddress.IsAny())
    {
        m_srcAddress = m_srcNode->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
    }
}

void
ApplicationFlow::UseSkipAwareRtt()
{
    if (auto tcp = DynamicCast<TcpSocketBase>(GetSocket()))
    {
        SkipAwareRttEstimator::ReplaceDefault(tcp);
    }
}

std::string
ApplicationFlow::GetRttEstimator() const
{
    auto tcp = DynamicCast<TcpSocketBase>(GetSocket());
    Ptr<RttEstimator> estimator = tcp ? wormhole::TcpRttEstimatorOf(tcp) : nullptr;
    return estimator ? estimator->GetInstanceTypeId().GetName() : std::string();
}

void
ApplicationFlow::CompleteVirtually()
{
    NS_ABORT_MSG_IF(!m_sink, "FlowTracker: a flow without a sink cannot complete virtually");
    uint64_t lacking = m_size - std::min(m_size, GetDelivered());
    SentCounter() = m_size;
    wormhole::PacketSinkTotalRx(m_sink) += lacking;
    m_credited += lacking;
    Ptr<Packet> rest =
        Create<Packet>(static_cast<uint32_t>(std::min<uint64_t>(lacking, UINT32_MAX)));
    wormhole::FirePacketSinkRx(m_sink, rest, InetSocketAddress(m_srcAddress, m_srcPort));
    SendEndOfTransfer();
}

void
ApplicationFlow::SendEndOfTransfer()
{
    if (Ptr<TcpSocketBase> receiver = GetReceiverSocket())
    {
        wormhole::TcpSendEmptyPacket(receiver, TcpHeader::ACK);
    }
}

Ptr<TcpSocketBase>
ApplicationFlow::GetReceiverSocket() const
{
    return m_tcp ? wormhole::AcceptedSocketFrom(m_sink, m_srcAddress, m_srcPort) : nullptr;
}

bool
ApplicationFlow::TraceRtt(Callback<void, Time> sink)
{
    Ptr<TcpSocketBase> sender = m_tcp ? DynamicCast<TcpSocketBase>(GetSocket()) : nullptr;
    if (!sender)
    {
        return false;
    }
    // first transmissions not acknowledged yet: each segment's end, and when it left
    struct Sent
    {
        std::deque<std::pair<SequenceNumber32, Time>> segments;
        SequenceNumber32 highest{0};
    };
    auto sent = std::make_shared<Sent>();
    using Trace = Callback<void, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>>;
    sender->TraceConnectWithoutContext(
        "Tx",
        Trace([sent](Ptr<const Packet> packet, const TcpHeader& header, Ptr<const TcpSocketBase>) {
            if (packet->GetSize() == 0)
            {
                return;
            }
            SequenceNumber32 end = header.GetSequenceNumber() + packet->GetSize();
            if (end <= sent->highest)
            {
                sent->segments.clear(); // sent again: which copy an ACK answers is unknown (Karn)
                return;
            }
            sent->highest = end;
            sent->segments.emplace_back(end, Simulator::Now());
        }));
    sender->TraceConnectWithoutContext(
        "Rx",
        Trace([sent, sink](Ptr<const Packet>, const TcpHeader& header, Ptr<const TcpSocketBase>) {
            if (!(header.GetFlags() & TcpHeader::ACK))
            {
                return;
            }
            Time first = Time::Max();
            while (!sent->segments.empty() && sent->segments.front().first <= header.GetAckNumber())
            {
                first = sent->segments.front().second; // the last segment this ACK newly covers
                sent->segments.pop_front();
            }
            if (first != Time::Max())
            {
                sink(Simulator::Now() - first);
            }
        }));
    return true;
}

uint64_t
ApplicationFlow::GetDelivered() const
{
    return m_received + m_credited;
}

uint64_t
ApplicationFlow::GetReceiverTotal() const
{
    return m_sink ? m_sink->GetTotalRx() : 0;
}

uint64_t
ApplicationFlow::GetCredited() const
{
    return m_credited;
}

uint64_t
ApplicationFlow::Credit(uint64_t bytes)
{
    uint64_t credited = TakeFromSender(bytes);
    if (m_sink)
    {
        wormhole::PacketSinkTotalRx(m_sink) += credited;
    }
    m_credited += credited;
    return credited;
}

uint64_t
ApplicationFlow::Uncredit(uint64_t bytes)
{
    bytes = GiveBackToSender(std::min(bytes, m_credited));
    if (m_sink)
    {
        wormhole::PacketSinkTotalRx(m_sink) -= bytes;
    }
    m_credited -= bytes;
    return bytes;
}

std::string
ApplicationFlow::GetFingerprint() const
{
    std::ostringstream out;
    out << GetKind() << " size=" << m_size << " app=" << wormhole::DescribeAttributes(m_app);
    for (Ptr<Node> host : {m_srcNode, m_dstNode})
    {
        if (auto tcp = host ? host->GetObject<TcpL4Protocol>() : nullptr)
        {
            out << " tcp=" << wormhole::DescribeAttributes(tcp);
        }
    }
    if (m_tcp)
    {
        out << " socket=" << wormhole::DescribeDefaults(TcpSocketBase::GetTypeId())
            << " cc=" << wormhole::DescribeDefaults(PlannedCongestionOps());
    }
    return out.str();
}

TypeId
ApplicationFlow::PlannedCongestionOps() const
{
    TypeIdValue control;
    m_srcNode->GetObject<TcpL4Protocol>()->GetAttribute("SocketType", control);
    return control.Get();
}

std::string
ApplicationFlow::GetPlannedCongestionOps() const
{
    return m_tcp ? PlannedCongestionOps().GetName() : std::string();
}

} // namespace ns3
