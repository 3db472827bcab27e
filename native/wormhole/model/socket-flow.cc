/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "socket-flow.h"

#include "attribute-fingerprint.h"
#include "private-access.h"
#include "skip-aware-rtt-estimator.h"
#include "tcp-flow-state.h"
#include "wormhole-simulator-impl.h"

#include "ns3/abort.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/make-event.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/rtt-estimator.h"
#include "ns3/simulator.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-rx-buffer.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-tx-buffer.h"

#include <algorithm>
#include <limits>
#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SocketFlow");

NS_OBJECT_ENSURE_REGISTERED(SocketFlow);

namespace
{
constexpr uint8_t TCP_PROTOCOL = 6;

/** @return the PacketSink of @p node listening on @p port at @p address (or any), nullptr if none. */
Ptr<PacketSink>
FindSink(Ptr<Node> node, Ipv4Address address, uint16_t port)
{
    for (uint32_t i = 0; node && i < node->GetNApplications(); ++i)
    {
        auto sink = DynamicCast<PacketSink>(node->GetApplication(i));
        if (!sink)
        {
            continue;
        }
        AddressValue local;
        sink->GetAttribute("Local", local);
        if (!InetSocketAddress::IsMatchingType(local.Get()))
        {
            continue;
        }
        InetSocketAddress bound = InetSocketAddress::ConvertFrom(local.Get());
        if (bound.GetPort() == port && (bound.GetIpv4().IsAny() || bound.GetIpv4() == address))
        {
            return sink;
        }
    }
    return nullptr;
}
} // namespace

TypeId
SocketFlow::GetTypeId()
{
    static TypeId tid = TypeId("ns3::SocketFlow")
                            .SetParent<TrackedFlow>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<SocketFlow>();
    return tid;
}

SocketFlow::SocketFlow() = default;

SocketFlow::~SocketFlow() = default;

void
SocketFlow::DoDispose()
{
    m_socket = nullptr;
    m_sink = nullptr;
    m_scriptSend = Callback<void, Ptr<Socket>, uint32_t>();
    m_scriptDataSent = Callback<void, Ptr<Socket>, uint32_t>();
    TrackedFlow::DoDispose();
}

void
SocketFlow::SetSocket(Ptr<TcpSocketBase> socket)
{
    NS_LOG_FUNCTION(this << socket);
    m_socket = socket;
    m_srcNode = socket->GetNode();
    Address local;
    Address peer;
    socket->GetSockName(local);
    socket->GetPeerName(peer);
    InetSocketAddress from = InetSocketAddress::ConvertFrom(local);
    InetSocketAddress to = InetSocketAddress::ConvertFrom(peer);
    m_srcAddress = from.GetIpv4();
    m_srcPort = from.GetPort();
    if (m_srcAddress.IsAny())
    {
        m_srcAddress = m_srcNode->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
    }
    m_dstAddress = to.GetIpv4();
    m_dstPort = to.GetPort();
    m_dstNode = wormhole::NodeOwning(m_dstAddress);
    m_start = Simulator::Now();
    m_sink = FindSink(m_dstNode, m_dstAddress, m_dstPort);
    using Segment = Callback<void, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>>;
    socket->TraceConnectWithoutContext("Tx", Segment(MakeCallback(&SocketFlow::OnTx, this)));
    if (m_sink)
    {
        m_sink->TraceConnectWithoutContext("RxWithAddresses",
                                           MakeCallback(&SocketFlow::OnSinkRx, this));
    }
    else
    {
        socket->TraceConnectWithoutContext("Rx", Segment(MakeCallback(&SocketFlow::OnRx, this)));
    }
    socket->TraceConnectWithoutContext("CongState",
                                       MakeCallback(&SocketFlow::OnCongestionState, this));
}

Ptr<TcpSocketBase>
SocketFlow::GetSocket() const
{
    return m_socket;
}

void
SocketFlow::SetLifecycle(Callback<void> sending, Callback<void> finished)
{
    m_sending = sending;
    m_finished = finished;
}

void
SocketFlow::SetTag(uint32_t tag)
{
    m_tag = tag;
}

std::string
SocketFlow::GetKind() const
{
    return "socket-tcp";
}

uint8_t
SocketFlow::GetProtocol() const
{
    return TCP_PROTOCOL;
}

bool
SocketFlow::GetReversePorts(uint16_t& source, uint16_t& destination) const
{
    source = m_dstPort;
    destination = m_srcPort;
    return true;
}

std::string
SocketFlow::GetCongestionOps() const
{
    return wormhole::TcpCongestionOpsName(m_socket);
}

std::string
SocketFlow::GetPlannedCongestionOps() const
{
    return GetCongestionOps();
}

std::string
SocketFlow::GetRttEstimator() const
{
    Ptr<RttEstimator> estimator = wormhole::TcpRttEstimatorOf(m_socket);
    return estimator ? estimator->GetInstanceTypeId().GetName() : std::string();
}

EventId
SocketFlow::GetStartEvent() const
{
    return EventId();
}

void
SocketFlow::OnTx(Ptr<const Packet> packet, const TcpHeader& header, Ptr<const TcpSocketBase>)
{
    bool fin = header.GetFlags() & TcpHeader::FIN;
    if (!m_started)
    {
        if (packet->GetSize() == 0)
        {
            return; // the handshake, or a FIN of a connection that sent nothing
        }
        m_firstSequence = header.GetSequenceNumber();
    }
    if (packet->GetSize() > 0)
    {
        m_sending(); // the tracker adopts the flow's tag, and starts it the first time
    }
    if (fin && !m_closed)
    {
        m_closed = true;
        m_size = static_cast<uint32_t>(header.GetSequenceNumber() - m_firstSequence) +
                 packet->GetSize() + m_credited;
        NS_LOG_LOGIC("flow " << m_srcAddress << ":" << m_srcPort << " closed at " << m_size
                             << " bytes");
        CheckFinished();
    }
}

void
SocketFlow::NotifyStarted()
{
    m_started = true;
    m_lastTail = Tail(); // what the script wrote before its first data segment is its start
    WrapCallbacks();
}

void
SocketFlow::UseSkipAwareRtt()
{
    SkipAwareRttEstimator::ReplaceDefault(m_socket);
}

void
SocketFlow::CompleteVirtually()
{
    NS_ABORT_MSG("FlowTracker: socket flows are never completed virtually");
}

void
SocketFlow::OnSinkRx(Ptr<const Packet> packet, const Address& from, const Address&)
{
    if (!InetSocketAddress::IsMatchingType(from))
    {
        return;
    }
    InetSocketAddress source = InetSocketAddress::ConvertFrom(from);
    if (source.GetIpv4() == m_srcAddress && source.GetPort() == m_srcPort)
    {
        m_received += packet->GetSize();
        CheckFinished();
    }
}

void
SocketFlow::OnRx(Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>)
{
    CheckFinished();
}

void
SocketFlow::CheckFinished()
{
    if (m_closed && !m_done && GetDelivered() >= m_size)
    {
        m_done = true;
        m_finished();
    }
}

SequenceNumber32
SocketFlow::Tail() const
{
    return m_socket->GetTxBuffer()->TailSequence();
}

uint64_t
SocketFlow::WrittenOnWire() const
{
    return m_started ? static_cast<uint32_t>(Tail() - m_firstSequence) : 0;
}

uint64_t
SocketFlow::GetDelivered() const
{
    if (m_sink)
    {
        return m_received + m_credited;
    }
    if (!m_started)
    {
        return 0;
    }
    // with no sink, what the receiver acknowledged (its FIN's sequence number not counted)
    uint64_t acked = static_cast<uint32_t>(m_socket->GetTxBuffer()->HeadSequence() - m_firstSequence);
    return std::min(acked, WrittenOnWire()) + m_credited;
}

uint64_t
SocketFlow::GetReceiverTotal() const
{
    return m_sink ? m_sink->GetTotalRx() : GetDelivered();
}

uint64_t
SocketFlow::GetCredited() const
{
    return m_credited;
}

uint64_t
SocketFlow::GetSendable() const
{
    uint32_t unsent = wormhole::TcpUnsentBytes(m_socket);
    return unsent > 1 ? unsent - 1 : 0;
}

uint64_t
SocketFlow::GetSent() const
{
    uint64_t written = WrittenOnWire() + m_credited;
    uint64_t unsent = wormhole::TcpUnsentBytes(m_socket);
    return written > unsent ? written - unsent : 0;
}

void
SocketFlow::OnCongestionState(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
{
    if (to != from && (to == TcpSocketState::CA_CWR || to == TcpSocketState::CA_RECOVERY ||
                       to == TcpSocketState::CA_LOSS))
    {
        ++m_congestionSignals;
    }
}

uint64_t
SocketFlow::GetCongestionNotifications() const
{
    return m_congestionSignals;
}

uint64_t
SocketFlow::GetCongestionWindow() const
{
    Ptr<TcpSocketState> tcb = wormhole::TcpStateOf(m_socket);
    return tcb ? tcb->m_cWnd.Get() : 0;
}

Ptr<TcpSocketBase>
SocketFlow::GetReceiverSocket() const
{
    return wormhole::AcceptedSocketFrom(m_sink, m_srcAddress, m_srcPort);
}

bool
SocketFlow::IsQuiet() const
{
    Ptr<TcpSocketBase> receiver = GetReceiverSocket();
    if (!receiver)
    {
        return false;
    }
    uint32_t sent = wormhole::TcpHighestSentSequence(m_socket);
    uint32_t received = receiver->GetRxBuffer()->NextRxSequence().GetValue();
    uint32_t acked = m_socket->GetTxBuffer()->HeadSequence().GetValue();
    bool dataInNetwork = sent != received;
    bool ackInNetwork = received != acked && wormhole::TcpDelayedAckCount(receiver) == 0;
    return !dataInNetwork && !ackInNetwork;
}

void
SocketFlow::WrapCallbacks()
{
    Callback<void, Ptr<Socket>, uint32_t>& send = wormhole::SocketSendCallback(m_socket);
    if (!send.IsNull() && !(!m_sendWrapper.IsNull() && send.IsEqual(m_sendWrapper)))
    {
        m_scriptSend = send;
        m_sendWrapper = MakeCallback(&SocketFlow::OnSendRoom, this);
        send = m_sendWrapper;
    }
    Callback<void, Ptr<Socket>, uint32_t>& dataSent = wormhole::SocketDataSentCallback(m_socket);
    if (!dataSent.IsNull() && !(!m_dataSentWrapper.IsNull() && dataSent.IsEqual(m_dataSentWrapper)))
    {
        m_scriptDataSent = dataSent;
        m_dataSentWrapper = MakeCallback(&SocketFlow::OnDataSent, this);
        dataSent = m_dataSentWrapper;
    }
}

void
SocketFlow::CheckWrites()
{
    // once its FIN left the script can write no more (and the ACK of the FIN moves the
    // buffer's tail past the FIN's sequence number)
    if (m_started && !m_closed && m_writesBlocker == SKIPPABLE && Tail() != m_lastTail)
    {
        NS_LOG_LOGIC("flow " << m_srcAddress << ":" << m_srcPort << ": "
                             << (Tail() - m_lastTail)
                             << " bytes written outside its socket's callbacks");
        m_writesBlocker = WRITES_OUTSIDE_SEND_CALLBACKS;
    }
}

void
SocketFlow::OnSendRoom(Ptr<Socket> socket, uint32_t available)
{
    CheckWrites();
    m_scriptSend(socket, available);
    m_lastTail = Tail();
}

void
SocketFlow::OnDataSent(Ptr<Socket> socket, uint32_t sent)
{
    CheckWrites();
    m_scriptDataSent(socket, sent);
    m_lastTail = Tail();
}

TrackedFlow::SkipBlocker
SocketFlow::GetSkipBlocker()
{
    CheckWrites();
    WrapCallbacks();
    if (m_writesBlocker != SKIPPABLE)
    {
        return m_writesBlocker;
    }
    return m_sink ? SKIPPABLE : RECEIVER_NOT_PACKET_SINK;
}

uint64_t
SocketFlow::Credit(uint64_t bytes)
{
    CheckWrites();
    if (m_writesBlocker != SKIPPABLE || !m_sink)
    {
        return 0; // what the script would write meanwhile is unknown
    }
    uint64_t creditable = std::min<uint64_t>(bytes, GetSendable());
    uint32_t taken = wormhole::TcpTrimUnsentTail(m_socket, static_cast<uint32_t>(creditable));
    m_lastTail = Tail();
    wormhole::PacketSinkTotalRx(m_sink) += taken;
    m_credited += taken;
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    if (taken > 0 && impl && !m_roomAnnounced)
    {
        // in the flow's tag, now: the skip moves it to its end, a skip-back with it
        m_roomAnnounced = true;
        impl->ScheduleWithTag(TimeStep(0),
                              m_srcNode->GetId(),
                              m_tag,
                              MakeEvent(&SocketFlow::AnnounceRoom, this));
    }
    return taken;
}

uint64_t
SocketFlow::Uncredit(uint64_t bytes)
{
    Ptr<TcpTxBuffer> buffer = m_socket->GetTxBuffer();
    uint64_t left = std::min(bytes, m_credited);
    uint64_t given = 0;
    while (left > 0)
    {
        auto chunk = static_cast<uint32_t>(std::min<uint64_t>(left, 1 << 20));
        if (!buffer->Add(Create<Packet>(chunk)))
        {
            break;
        }
        left -= chunk;
        given += chunk;
    }
    m_lastTail = Tail();
    if (m_sink)
    {
        wormhole::PacketSinkTotalRx(m_sink) -= given;
    }
    m_credited -= given;
    return given;
}

void
SocketFlow::AnnounceRoom()
{
    m_roomAnnounced = false;
    WrapCallbacks();
    uint32_t available = m_socket->GetTxAvailable();
    if (available > 0 && !m_scriptSend.IsNull())
    {
        OnSendRoom(m_socket, available);
    }
}

void
SocketFlow::ShiftTimes(Time delta)
{
    wormhole::CubicShiftClocks(wormhole::TcpCongestionOpsOf(m_socket), delta);
}

std::string
SocketFlow::GetFingerprint() const
{
    std::ostringstream out;
    out << GetKind() << " socket=" << wormhole::DescribeAttributes(m_socket);
    for (Ptr<Node> host : {m_srcNode, m_dstNode})
    {
        if (auto tcp = host ? host->GetObject<TcpL4Protocol>() : nullptr)
        {
            out << " tcp=" << wormhole::DescribeAttributes(tcp);
        }
    }
    return out.str();
}

std::vector<double>
SocketFlow::GetCongestionState() const
{
    return wormhole::TcpStateVector(wormhole::CaptureTcpState(m_socket));
}

} // namespace ns3
