/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The few private members of ns-3.44 models that crediting a fast-forward
 * has to read or change. Every such access lives in private-access.cc and
 * is covered by a test, because it ties the shim to one ns-3 version's
 * member layout.
 */
#ifndef WORMHOLE_PRIVATE_ACCESS_H
#define WORMHOLE_PRIVATE_ACCESS_H

#include "ns3/ptr.h"

#include <cstdint>
#include <string>
#include <utility>

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/tcp-socket.h"
#include "ns3/traced-value.h"

#include <vector>

namespace ns3
{

class PacketSink;
class BulkSendApplication;
class OnOffApplication;
class TcpSocketBase;
class TcpSocketState;
class TcpCongestionOps;
class RttEstimator;
class Application;
class EventId;
class Packet;
class Address;
class FlowMonitor;
class Socket;
class TcpL4Protocol;
class PointToPointNetDevice;

namespace wormhole
{

/** @return PacketSink's byte counter, the one GetTotalRx() reports. */
uint64_t& PacketSinkTotalRx(Ptr<PacketSink> sink);

/** @return true while a point-to-point device transmits a packet (its transmit state machine is busy). */
bool PointToPointTransmitting(Ptr<PointToPointNetDevice> device);

/** @return BulkSendApplication's count of bytes handed to its socket. */
uint64_t& BulkSendTotalBytes(Ptr<BulkSendApplication> app);

/**
 * @return the bytes of the write a BulkSendApplication holds back until its
 * socket has room (counted in its total only once the socket takes them).
 */
uint32_t BulkSendPendingBytes(Ptr<BulkSendApplication> app);

/**
 * Let a BulkSendApplication write again, as its socket's "data sent"
 * callback does when room frees up in the send buffer.
 */
void BulkSendResume(Ptr<BulkSendApplication> app);

/** @return OnOffApplication's count of bytes handed to its socket. */
uint64_t& OnOffTotalBytes(Ptr<OnOffApplication> app);

/** @return the event that will start an application (set by Application::DoInitialize). */
EventId& ApplicationStartEvent(Ptr<Application> app);

/** @return the event that will stop an application (set by Application::DoInitialize). */
EventId& ApplicationStopEvent(Ptr<Application> app);

/** Start an application now (its private StartApplication), as its start event would. */
void StartApplication(Ptr<Application> app);

/**
 * Fire a PacketSink's "Rx" trace as if `packet` had just been received from
 * `from` (its other traces and counters are left alone).
 */
void FirePacketSinkRx(Ptr<PacketSink> sink, Ptr<const Packet> packet, const Address& from);

/** @return the TypeId name of the congestion control of a TCP socket. */
std::string TcpCongestionOpsName(Ptr<TcpSocketBase> socket);

/** @return the congestion control object of a TCP socket. */
Ptr<TcpCongestionOps> TcpCongestionOpsOf(Ptr<TcpSocketBase> socket);

/** @return the congestion state (cwnd, ssthresh, ...) a TCP socket shares with its control. */
Ptr<TcpSocketState> TcpStateOf(Ptr<TcpSocketBase> socket);

/** @return a TCP socket's retransmission timeout. */
TracedValue<Time>& TcpRto(Ptr<TcpSocketBase> socket);

/** @return a TCP socket's round-trip time estimator. */
Ptr<RttEstimator> TcpRttEstimatorOf(Ptr<TcpSocketBase> socket);

/** @return an RTT estimator's smoothed estimate and variation. */
std::pair<Time&, Time&> RttEstimatorState(Ptr<RttEstimator> estimator);

/**
 * @return DCTCP's congestion estimate alpha, or nullptr if the control is not DCTCP.
 */
double* DctcpAlpha(Ptr<TcpCongestionOps> control);

/**
 * Start a new DCTCP observation window at the next ACK (its byte counters and
 * sequence threshold refer to a stream position that a replay changes).
 */
void DctcpRestartObservation(Ptr<TcpCongestionOps> control);

/**
 * Move the clocks TCP Cubic keeps by @p delta: the start of its epoch (the
 * cubic function's t is the time since then), and HyStart's round start and
 * last ACK of a train. One left unset (Time::Min()) stays unset.
 * @return false if the control is not Cubic.
 */
bool CubicShiftClocks(Ptr<TcpCongestionOps> control, Time delta);

/** @return the start of Cubic's current epoch, Time::Min() if it has none or the control is not Cubic. */
Time CubicEpochStart(Ptr<TcpCongestionOps> control);

/** @return the sequence number after the highest byte a TCP socket has sent. */
uint32_t TcpHighestSentSequence(Ptr<TcpSocketBase> socket);

/**
 * Make a TCP socket send a segment without data now, with these header
 * flags (its protected SendEmptyPacket: an ACK, or a FIN).
 */
void TcpSendEmptyPacket(Ptr<TcpSocketBase> socket, uint8_t flags);

/** @return the number of segments a TCP receiver holds back its ACK for (delayed ACK). */
uint32_t TcpDelayedAckCount(Ptr<TcpSocketBase> socket);

/** @return the bytes in a TCP socket's send buffer that were never sent. */
uint32_t TcpUnsentBytes(Ptr<TcpSocketBase> socket);

/**
 * Remove up to `bytes` never-sent bytes from the tail of a TCP socket's send
 * buffer, as if the application had written fewer bytes.
 * @return the number of bytes removed.
 */
uint32_t TcpTrimUnsentTail(Ptr<TcpSocketBase> socket, uint32_t bytes);

/** @return the callback a socket calls when room frees up in its send buffer (SetSendCallback's). */
Callback<void, Ptr<Socket>, uint32_t>& SocketSendCallback(Ptr<Socket> socket);

/** @return the callback a socket calls when it has sent new data (SetDataSentCallback's). */
Callback<void, Ptr<Socket>, uint32_t>& SocketDataSentCallback(Ptr<Socket> socket);

/** @return the state of a TCP socket's connection (LISTEN, SYN_SENT, ESTABLISHED, ...). */
TcpSocket::TcpStates_t TcpConnectionState(Ptr<TcpSocketBase> socket);

/** @return the TCP sockets of a node's TcpL4Protocol, in the order they were created. */
std::vector<Ptr<TcpSocketBase>> TcpSocketsOf(Ptr<TcpL4Protocol> tcp);

/**
 * Credit a FlowMonitor flow with `packets` more packets delivered, each with
 * the mean size, jitter and hop count of the packets it saw so far and the
 * given delay (the mean of the steady window being skipped).
 * @return false if the monitor has no such flow or it saw no packet yet.
 */
bool FlowMonitorCredit(Ptr<FlowMonitor> monitor, uint32_t flowId, double packets, Time delay);

/** @return the delay sum and received packets of a FlowMonitor flow (zeros if unknown). */
std::pair<Time, uint64_t> FlowMonitorDelaySum(Ptr<FlowMonitor> monitor, uint32_t flowId);

/** Shift the first/last-seen times of a FlowMonitor flow's packets in flight by delta. */
uint32_t FlowMonitorShiftInFlight(Ptr<FlowMonitor> monitor, uint32_t flowId, int64_t delta);

/** @return how many packets a FlowMonitor flow has sent and received so far (zeros if unknown). */
std::pair<uint64_t, uint64_t> FlowMonitorPackets(Ptr<FlowMonitor> monitor, uint32_t flowId);

} // namespace wormhole
} // namespace ns3

#endif /* WORMHOLE_PRIVATE_ACCESS_H */
