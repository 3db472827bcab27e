/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "bulk-send-flow.h"

#include "private-access.h"

#include "ns3/abort.h"
#include "ns3/bulk-send-application.h"
#include "ns3/inet-socket-address.h"
#include "ns3/packet-sink.h"
#include "ns3/packet.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-rx-buffer.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-tx-buffer.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(BulkSendFlow);

TypeId
BulkSendFlow::GetTypeId()
{
    static TypeId tid = TypeId("ns3::BulkSendFlow")
                            .SetParent<ApplicationFlow>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<BulkSendFlow>();
    return tid;
}

BulkSendFlow::BulkSendFlow() = default;

std::string
BulkSendFlow::GetKind() const
{
    return "bulk" + ProtocolSuffix();
}

Ptr<BulkSendApplication>
BulkSendFlow::Bulk() const
{
    return StaticCast<BulkSendApplication>(m_app);
}

Ptr<Socket>
BulkSendFlow::GetSocket() const
{
    return Bulk()->GetSocket();
}

Ptr<TcpSocketBase>
BulkSendFlow::GetTcpSocket() const
{
    return DynamicCast<TcpSocketBase>(GetSocket());
}

uint64_t&
BulkSendFlow::SentCounter() const
{
    return wormhole::BulkSendTotalBytes(Bulk());
}

std::string
BulkSendFlow::GetCongestionOps() const
{
    Ptr<TcpSocketBase> socket = GetTcpSocket();
    return socket ? wormhole::TcpCongestionOpsName(socket) : std::string();
}

void
BulkSendFlow::ShiftTimes(Time delta)
{
    if (Ptr<TcpSocketBase> tcp = GetTcpSocket())
    {
        wormhole::CubicShiftClocks(wormhole::TcpCongestionOpsOf(tcp), delta);
    }
}

uint64_t
BulkSendFlow::AppCreditable() const
{
    if (m_size == 0)
    {
        return UNLIMITED;
    }
    uint64_t left = m_size - std::min(m_size, SentCounter());
    // the write it holds back, or at least its last byte, is written for real
    uint64_t kept = std::max<uint64_t>(1, wormhole::BulkSendPendingBytes(Bulk()));
    return left > kept ? left - kept : 0;
}

uint64_t
BulkSendFlow::GetSendable() const
{
    Ptr<TcpSocketBase> tcp = GetTcpSocket();
    return AppCreditable() + (tcp ? wormhole::TcpUnsentBytes(tcp) : 0);
}

uint64_t
BulkSendFlow::GetSent() const
{
    Ptr<TcpSocketBase> tcp = GetTcpSocket();
    if (!tcp)
    {
        return 0;
    }
    uint64_t written = SentCounter();
    uint64_t unsent = wormhole::TcpUnsentBytes(tcp);
    return written > unsent ? written - unsent : 0;
}

uint64_t
BulkSendFlow::TakeFromSender(uint64_t bytes)
{
    uint64_t taken = 0;
    if (Ptr<TcpSocketBase> tcp = GetTcpSocket())
    {
        uint64_t fromSocket = std::min<uint64_t>(bytes, std::numeric_limits<uint32_t>::max());
        taken = wormhole::TcpTrimUnsentTail(tcp, static_cast<uint32_t>(fromSocket));
    }
    uint64_t fromApp = std::min(bytes - taken, AppCreditable());
    SentCounter() += fromApp;
    return taken + fromApp;
}

uint64_t
BulkSendFlow::GiveBackToSender(uint64_t bytes)
{
    uint64_t& sent = SentCounter();
    if (m_size == 0 || sent < m_size)
    {
        sent -= std::min(sent, bytes); // the application writes them again
        return bytes;
    }
    // it closed its socket before the skip: the credit came out of the socket's
    // buffer, which has room for it again
    Ptr<TcpSocketBase> tcp = GetTcpSocket();
    if (!tcp)
    {
        return bytes;
    }
    uint64_t left = bytes;
    while (left > 0)
    {
        uint32_t chunk = static_cast<uint32_t>(std::min<uint64_t>(left, 1 << 20));
        if (!tcp->GetTxBuffer()->Add(Create<Packet>(chunk)))
        {
            break;
        }
        left -= chunk;
    }
    return bytes - left;
}

uint64_t
BulkSendFlow::GetCongestionNotifications() const
{
    return m_congestionSignals;
}

uint64_t
BulkSendFlow::GetCongestionWindow() const
{
    Ptr<TcpSocketBase> tcp = GetTcpSocket();
    Ptr<TcpSocketState> tcb = tcp ? wormhole::TcpStateOf(tcp) : nullptr;
    return tcb ? tcb->m_cWnd.Get() : 0;
}

void
BulkSendFlow::NotifyStarted()
{
    ApplicationFlow::NotifyStarted();
    Ptr<TcpSocketBase> tcp = GetTcpSocket();
    if (tcp && !m_congestionTraced)
    {
        m_congestionTraced = true;
        tcp->TraceConnectWithoutContext("CongState",
                                        MakeCallback(&BulkSendFlow::OnCongestionState, this));
    }
}

void
BulkSendFlow::OnCongestionState(TcpSocketState::TcpCongState_t from,
                                TcpSocketState::TcpCongState_t to)
{
    if (to != from && (to == TcpSocketState::CA_CWR || to == TcpSocketState::CA_RECOVERY ||
                       to == TcpSocketState::CA_LOSS))
    {
        ++m_congestionSignals;
    }
}

bool
BulkSendFlow::IsQuiet() const
{
    Ptr<TcpSocketBase> sender = GetTcpSocket();
    if (!sender || !m_sink)
    {
        return false;
    }
    Ptr<TcpSocketBase> receiver;
    for (const auto& s : m_sink->GetAcceptedSockets())
    {
        Address peer;
        if (s->GetPeerName(peer) == 0 && InetSocketAddress::IsMatchingType(peer))
        {
            InetSocketAddress p = InetSocketAddress::ConvertFrom(peer);
            if (p.GetIpv4() == m_srcAddress && p.GetPort() == m_srcPort)
            {
                receiver = DynamicCast<TcpSocketBase>(s);
                break;
            }
        }
    }
    if (!receiver)
    {
        return false;
    }
    uint32_t sent = wormhole::TcpHighestSentSequence(sender);
    uint32_t received = receiver->GetRxBuffer()->NextRxSequence().GetValue();
    uint32_t acked = sender->GetTxBuffer()->HeadSequence().GetValue();
    bool dataInNetwork = sent != received;
    bool ackInNetwork = received != acked && wormhole::TcpDelayedAckCount(receiver) == 0;
    return !dataInNetwork && !ackInNetwork;
}

bool
BulkSendFlow::CanBeHeld() const
{
    return IsTcp();
}

void
BulkSendFlow::StartHeld()
{
    wormhole::StartApplication(m_app);
    // its socket is bound now, as in plain ns-3 (an ephemeral port, in the node's order):
    // the address its sink sees it from, and its end of the transfer, go by that port
    NotifyStarted();
    Ptr<Socket> socket = GetSocket();
    UintegerValue size;
    socket->GetAttribute("SndBufSize", size);
    m_heldBufferSize = size.Get();
    // the application's first write is refused: it keeps it and waits
    socket->SetAttribute("SndBufSize", UintegerValue(0));
}

bool
BulkSendFlow::IsHeld() const
{
    return m_heldBufferSize != 0;
}

void
BulkSendFlow::ResumeHeld(const std::vector<double>& state)
{
    GetSocket()->SetAttribute("SndBufSize", UintegerValue(m_heldBufferSize));
    m_heldBufferSize = 0;
    SetCongestionState(state);
    wormhole::BulkSendResume(Bulk());
}

void
BulkSendFlow::SendEndOfTransfer()
{
    ApplicationFlow::SendEndOfTransfer();
    if (Ptr<TcpSocketBase> receiver = GetReceiverSocket())
    {
        receiver->Close();
    }
}

TcpFlowState
BulkSendFlow::GetTcpState() const
{
    Ptr<TcpSocketBase> socket = GetTcpSocket();
    return socket ? wormhole::CaptureTcpState(socket) : TcpFlowState{};
}

std::vector<double>
BulkSendFlow::GetCongestionState() const
{
    return GetTcpSocket() ? wormhole::TcpStateVector(GetTcpState()) : std::vector<double>{};
}

bool
BulkSendFlow::SetCongestionState(const std::vector<double>& state)
{
    Ptr<TcpSocketBase> socket = GetTcpSocket();
    if (!socket)
    {
        return false;
    }
    if (!state.empty())
    {
        wormhole::RestoreTcpState(socket, wormhole::TcpStateFromVector(state));
    }
    return true;
}

} // namespace ns3
