/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Access to private members through explicit template instantiation:
 * [temp.explicit] exempts the names used in an explicit instantiation from
 * access checking, so a pointer-to-member of a private field can be captured
 * by a friend function defined in the instantiated class template.
 */
#include "private-access.h"

#include "ns3/application.h"
#include "ns3/bulk-send-application.h"
#include "ns3/event-id.h"
#include "ns3/flow-monitor.h"
#include "ns3/onoff-application.h"
#include "ns3/packet-sink.h"
#include "ns3/packet.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/socket.h"
#include "ns3/rtt-estimator.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-tx-buffer.h"
#include "ns3/tcp-tx-item.h"

#include <algorithm>
#include <unordered_map>

namespace ns3
{
namespace wormhole
{
namespace
{

template <typename Member, typename Member::type Pointer>
struct Exposer
{
    friend typename Member::type MemberPointer(Member)
    {
        return Pointer;
    }
};

#define WORMHOLE_EXPOSE(NAME, CLASS, FIELD, TYPE)                                                  \
    struct NAME                                                                                    \
    {                                                                                              \
        using type = TYPE CLASS::*;                                                                \
        friend type MemberPointer(NAME);                                                           \
    };                                                                                             \
    template struct Exposer<NAME, &CLASS::FIELD>

WORMHOLE_EXPOSE(AppStartEvent, Application, m_startEvent, EventId);
WORMHOLE_EXPOSE(AppStopEvent, Application, m_stopEvent, EventId);
using SinkRxTraceType = TracedCallback<Ptr<const Packet>, const Address&>;
WORMHOLE_EXPOSE(SinkRxTrace, PacketSink, m_rxTrace, SinkRxTraceType);

// a private member function: the same rule lets its pointer be named
struct AppStartMethod
{
    using type = void (Application::*)();
    friend type MemberPointer(AppStartMethod);
};

template struct Exposer<AppStartMethod, &Application::StartApplication>;

struct BulkDataSendMethod
{
    using type = void (BulkSendApplication::*)(Ptr<Socket>, uint32_t);
    friend type MemberPointer(BulkDataSendMethod);
};

template struct Exposer<BulkDataSendMethod, &BulkSendApplication::DataSend>;

struct TcpSendEmptyMethod
{
    using type = void (TcpSocketBase::*)(uint8_t);
    friend type MemberPointer(TcpSendEmptyMethod);
};

template struct Exposer<TcpSendEmptyMethod, &TcpSocketBase::SendEmptyPacket>;
WORMHOLE_EXPOSE(SinkTotalRx, PacketSink, m_totalRx, uint64_t);
WORMHOLE_EXPOSE(BulkTotBytes, BulkSendApplication, m_totBytes, uint64_t);
WORMHOLE_EXPOSE(BulkUnsentPacket, BulkSendApplication, m_unsentPacket, Ptr<Packet>);
WORMHOLE_EXPOSE(OnOffTotBytes, OnOffApplication, m_totBytes, uint64_t);
WORMHOLE_EXPOSE(SocketCongestionOps, TcpSocketBase, m_congestionControl, Ptr<TcpCongestionOps>);
WORMHOLE_EXPOSE(SocketTxBuffer, TcpSocketBase, m_txBuffer, Ptr<TcpTxBuffer>);
WORMHOLE_EXPOSE(TxBufferAppList, TcpTxBuffer, m_appList, std::list<TcpTxItem*>);
WORMHOLE_EXPOSE(TxBufferSize, TcpTxBuffer, m_size, uint32_t);
WORMHOLE_EXPOSE(TxBufferSentSize, TcpTxBuffer, m_sentSize, uint32_t);
WORMHOLE_EXPOSE(SocketDelAckCount, TcpSocketBase, m_delAckCount, uint32_t);
WORMHOLE_EXPOSE(TxItemPacket, TcpTxItem, m_packet, Ptr<Packet>);
WORMHOLE_EXPOSE(SocketTcb, TcpSocketBase, m_tcb, Ptr<TcpSocketState>);
WORMHOLE_EXPOSE(SocketRto, TcpSocketBase, m_rto, TracedValue<Time>);
WORMHOLE_EXPOSE(SocketRtt, TcpSocketBase, m_rtt, Ptr<RttEstimator>);
WORMHOLE_EXPOSE(RttEstimate, RttEstimator, m_estimatedRtt, Time);
WORMHOLE_EXPOSE(RttVariation, RttEstimator, m_estimatedVariation, Time);
WORMHOLE_EXPOSE(DctcpAlphaField, TcpDctcp, m_alpha, double);
WORMHOLE_EXPOSE(DctcpAckedEcn, TcpDctcp, m_ackedBytesEcn, uint32_t);
WORMHOLE_EXPOSE(DctcpAckedTotal, TcpDctcp, m_ackedBytesTotal, uint32_t);
WORMHOLE_EXPOSE(DctcpNextSeqFlag, TcpDctcp, m_nextSeqFlag, bool);
WORMHOLE_EXPOSE(CubicEpochStartField, TcpCubic, m_epochStart, Time);
WORMHOLE_EXPOSE(CubicRoundStart, TcpCubic, m_roundStart, Time);
WORMHOLE_EXPOSE(CubicLastAck, TcpCubic, m_lastAck, Time);
using SocketCallbackType = Callback<void, Ptr<Socket>, uint32_t>;
WORMHOLE_EXPOSE(SocketSendCb, Socket, m_sendCb, SocketCallbackType);
WORMHOLE_EXPOSE(SocketDataSentCb, Socket, m_dataSent, SocketCallbackType);
using TcpStateValue = TracedValue<TcpSocket::TcpStates_t>;
WORMHOLE_EXPOSE(SocketConnectionState, TcpSocketBase, m_state, TcpStateValue);
using TcpSocketMap = std::unordered_map<uint64_t, Ptr<TcpSocketBase>>;
WORMHOLE_EXPOSE(L4Sockets, TcpL4Protocol, m_sockets, TcpSocketMap);

#undef WORMHOLE_EXPOSE

// FlowMonitor's tracked-packet map has a private type: let the return type be deduced.
template <typename Member, auto Pointer>
struct DeducedExposer
{
    friend auto MemberPointer(Member)
    {
        return Pointer;
    }
};

struct MonitorStats
{
    friend auto MemberPointer(MonitorStats);
};

template struct DeducedExposer<MonitorStats, &FlowMonitor::m_flowStats>;

struct MonitorTracked
{
    friend auto MemberPointer(MonitorTracked);
};

template struct DeducedExposer<MonitorTracked, &FlowMonitor::m_trackedPackets>;

// the transmit state's enum is private too
struct P2pTxState
{
    friend auto MemberPointer(P2pTxState);
};

template struct DeducedExposer<P2pTxState, &PointToPointNetDevice::m_txMachineState>;

} // namespace

EventId&
ApplicationStartEvent(Ptr<Application> app)
{
    return PeekPointer(app)->*MemberPointer(AppStartEvent());
}

EventId&
ApplicationStopEvent(Ptr<Application> app)
{
    return PeekPointer(app)->*MemberPointer(AppStopEvent());
}

bool
PointToPointTransmitting(Ptr<PointToPointNetDevice> device)
{
    // READY is the enum's first value (ns-3.44: READY, BUSY)
    return static_cast<int>(PeekPointer(device)->*MemberPointer(P2pTxState())) != 0;
}

uint64_t&
PacketSinkTotalRx(Ptr<PacketSink> sink)
{
    return PeekPointer(sink)->*MemberPointer(SinkTotalRx());
}

uint64_t&
BulkSendTotalBytes(Ptr<BulkSendApplication> app)
{
    return PeekPointer(app)->*MemberPointer(BulkTotBytes());
}

void
StartApplication(Ptr<Application> app)
{
    (PeekPointer(app)->*MemberPointer(AppStartMethod()))();
}

void
FirePacketSinkRx(Ptr<PacketSink> sink, Ptr<const Packet> packet, const Address& from)
{
    (PeekPointer(sink)->*MemberPointer(SinkRxTrace()))(packet, from);
}

Ptr<TcpCongestionOps>
TcpCongestionOpsOf(Ptr<TcpSocketBase> socket)
{
    return PeekPointer(socket)->*MemberPointer(SocketCongestionOps());
}

Ptr<TcpSocketState>
TcpStateOf(Ptr<TcpSocketBase> socket)
{
    return PeekPointer(socket)->*MemberPointer(SocketTcb());
}

TracedValue<Time>&
TcpRto(Ptr<TcpSocketBase> socket)
{
    return PeekPointer(socket)->*MemberPointer(SocketRto());
}

Ptr<RttEstimator>
TcpRttEstimatorOf(Ptr<TcpSocketBase> socket)
{
    return PeekPointer(socket)->*MemberPointer(SocketRtt());
}

std::pair<Time&, Time&>
RttEstimatorState(Ptr<RttEstimator> estimator)
{
    RttEstimator* raw = PeekPointer(estimator);
    return {raw->*MemberPointer(RttEstimate()), raw->*MemberPointer(RttVariation())};
}

double*
DctcpAlpha(Ptr<TcpCongestionOps> control)
{
    auto dctcp = DynamicCast<TcpDctcp>(control);
    return dctcp ? &(PeekPointer(dctcp)->*MemberPointer(DctcpAlphaField())) : nullptr;
}

bool
CubicShiftClocks(Ptr<TcpCongestionOps> control, Time delta)
{
    auto cubic = DynamicCast<TcpCubic>(control);
    if (!cubic)
    {
        return false;
    }
    TcpCubic* raw = PeekPointer(cubic);
    for (Time* clock : {&(raw->*MemberPointer(CubicEpochStartField())),
                        &(raw->*MemberPointer(CubicRoundStart())),
                        &(raw->*MemberPointer(CubicLastAck()))})
    {
        if (*clock != Time::Min())
        {
            *clock += delta;
        }
    }
    return true;
}

Time
CubicEpochStart(Ptr<TcpCongestionOps> control)
{
    auto cubic = DynamicCast<TcpCubic>(control);
    return cubic ? PeekPointer(cubic)->*MemberPointer(CubicEpochStartField()) : Time::Min();
}

void
DctcpRestartObservation(Ptr<TcpCongestionOps> control)
{
    if (auto dctcp = DynamicCast<TcpDctcp>(control))
    {
        TcpDctcp* raw = PeekPointer(dctcp);
        raw->*MemberPointer(DctcpAckedEcn()) = 0;
        raw->*MemberPointer(DctcpAckedTotal()) = 0;
        raw->*MemberPointer(DctcpNextSeqFlag()) = false;
    }
}

void
BulkSendResume(Ptr<BulkSendApplication> app)
{
    Ptr<Socket> socket = app->GetSocket();
    (PeekPointer(app)->*MemberPointer(BulkDataSendMethod()))(socket, socket->GetTxAvailable());
}

uint32_t
BulkSendPendingBytes(Ptr<BulkSendApplication> app)
{
    const Ptr<Packet>& pending = PeekPointer(app)->*MemberPointer(BulkUnsentPacket());
    return pending ? pending->GetSize() : 0;
}

uint64_t&
OnOffTotalBytes(Ptr<OnOffApplication> app)
{
    return PeekPointer(app)->*MemberPointer(OnOffTotBytes());
}

std::string
TcpCongestionOpsName(Ptr<TcpSocketBase> socket)
{
    Ptr<TcpCongestionOps> ops = PeekPointer(socket)->*MemberPointer(SocketCongestionOps());
    return ops ? ops->GetInstanceTypeId().GetName() : std::string();
}

uint32_t
TcpHighestSentSequence(Ptr<TcpSocketBase> socket)
{
    TcpTxBuffer* buffer = PeekPointer(PeekPointer(socket)->*MemberPointer(SocketTxBuffer()));
    return buffer->HeadSequence().GetValue() + buffer->*MemberPointer(TxBufferSentSize());
}

void
TcpSendEmptyPacket(Ptr<TcpSocketBase> socket, uint8_t flags)
{
    (PeekPointer(socket)->*MemberPointer(TcpSendEmptyMethod()))(flags);
}

uint32_t
TcpDelayedAckCount(Ptr<TcpSocketBase> socket)
{
    return PeekPointer(socket)->*MemberPointer(SocketDelAckCount());
}

uint32_t
TcpUnsentBytes(Ptr<TcpSocketBase> socket)
{
    TcpTxBuffer* buffer = PeekPointer(PeekPointer(socket)->*MemberPointer(SocketTxBuffer()));
    return buffer->*MemberPointer(TxBufferSize()) - buffer->*MemberPointer(TxBufferSentSize());
}

Callback<void, Ptr<Socket>, uint32_t>&
SocketSendCallback(Ptr<Socket> socket)
{
    return PeekPointer(socket)->*MemberPointer(SocketSendCb());
}

Callback<void, Ptr<Socket>, uint32_t>&
SocketDataSentCallback(Ptr<Socket> socket)
{
    return PeekPointer(socket)->*MemberPointer(SocketDataSentCb());
}

TcpSocket::TcpStates_t
TcpConnectionState(Ptr<TcpSocketBase> socket)
{
    return (PeekPointer(socket)->*MemberPointer(SocketConnectionState())).Get();
}

std::vector<Ptr<TcpSocketBase>>
TcpSocketsOf(Ptr<TcpL4Protocol> tcp)
{
    const TcpSocketMap& sockets = PeekPointer(tcp)->*MemberPointer(L4Sockets());
    std::vector<std::pair<uint64_t, Ptr<TcpSocketBase>>> byIndex(sockets.begin(), sockets.end());
    std::sort(byIndex.begin(), byIndex.end(), [](const auto& a, const auto& b) {
        return a.first < b.first;
    });
    std::vector<Ptr<TcpSocketBase>> ordered;
    ordered.reserve(byIndex.size());
    for (const auto& [index, socket] : byIndex)
    {
        ordered.push_back(socket);
    }
    return ordered;
}

uint32_t
TcpTrimUnsentTail(Ptr<TcpSocketBase> socket, uint32_t bytes)
{
    TcpTxBuffer* buffer = PeekPointer(PeekPointer(socket)->*MemberPointer(SocketTxBuffer()));
    std::list<TcpTxItem*>& unsent = buffer->*MemberPointer(TxBufferAppList());
    uint32_t& size = buffer->*MemberPointer(TxBufferSize());
    uint32_t trimmed = 0;
    while (trimmed < bytes && !unsent.empty())
    {
        TcpTxItem* last = unsent.back();
        Ptr<Packet>& packet = last->*MemberPointer(TxItemPacket());
        uint32_t itemSize = packet->GetSize();
        uint32_t cut = std::min(itemSize, bytes - trimmed);
        if (cut == itemSize)
        {
            unsent.pop_back();
            delete last;
        }
        else
        {
            packet = packet->CreateFragment(0, itemSize - cut);
        }
        size -= cut;
        trimmed += cut;
    }
    return trimmed;
}

} // namespace wormhole
} // namespace ns3

namespace ns3
{
namespace wormhole
{

std::pair<Time, uint64_t>
FlowMonitorDelaySum(Ptr<FlowMonitor> monitor, uint32_t flowId)
{
    auto& stats = PeekPointer(monitor)->*MemberPointer(MonitorStats());
    auto it = stats.find(flowId);
    if (it == stats.end())
    {
        return {Time(), 0};
    }
    return {it->second.delaySum, it->second.rxPackets};
}

bool
FlowMonitorCredit(Ptr<FlowMonitor> monitor, uint32_t flowId, double packets, Time delay)
{
    auto& stats = PeekPointer(monitor)->*MemberPointer(MonitorStats());
    auto it = stats.find(flowId);
    if (it == stats.end() || it->second.rxPackets == 0 || packets <= 0)
    {
        return false;
    }
    FlowMonitor::FlowStats& s = it->second;
    auto n = static_cast<uint64_t>(packets + 0.5);
    double scale = static_cast<double>(n) / s.rxPackets;
    s.txBytes += static_cast<uint64_t>(s.txBytes * static_cast<double>(n) / s.txPackets + 0.5);
    s.rxBytes += static_cast<uint64_t>(s.rxBytes * scale + 0.5);
    s.txPackets += n;
    s.rxPackets += n;
    s.delaySum += delay * static_cast<int64_t>(n);
    s.jitterSum += Time::FromDouble(s.jitterSum.GetDouble() * scale, Time::GetResolution());
    s.timesForwarded += static_cast<uint32_t>(s.timesForwarded * scale + 0.5);
    return true;
}

uint32_t
FlowMonitorShiftInFlight(Ptr<FlowMonitor> monitor, uint32_t flowId, int64_t delta)
{
    auto& tracked = PeekPointer(monitor)->*MemberPointer(MonitorTracked());
    uint32_t shifted = 0;
    for (auto it = tracked.lower_bound({flowId, 0}); it != tracked.end() && it->first.first == flowId;
         ++it)
    {
        it->second.firstSeenTime += TimeStep(delta);
        it->second.lastSeenTime += TimeStep(delta);
        ++shifted;
    }
    return shifted;
}

std::pair<uint64_t, uint64_t>
FlowMonitorPackets(Ptr<FlowMonitor> monitor, uint32_t flowId)
{
    auto& stats = PeekPointer(monitor)->*MemberPointer(MonitorStats());
    auto it = stats.find(flowId);
    if (it == stats.end())
    {
        return {0, 0};
    }
    return {it->second.txPackets, it->second.rxPackets};
}

} // namespace wormhole
} // namespace ns3
