/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The congestion state of a TCP sender that a memo replay carries over from
 * the recorded episode, so that the flow continues as it would have.
 */
#ifndef WORMHOLE_TCP_FLOW_STATE_H
#define WORMHOLE_TCP_FLOW_STATE_H

#include "ns3/ptr.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class TcpSocketBase;

/**
 * @brief What a TCP sender's behaviour depends on besides sequence numbers:
 * its window, slow-start threshold, DCTCP's congestion estimate and its
 * round-trip time estimates. Times in nanoseconds, windows in bytes.
 */
struct TcpFlowState
{
    double cwnd{0};
    double ssthresh{0};
    double alpha{-1}; //!< DCTCP's alpha; -1 for other congestion controls
    int64_t srtt{0};
    int64_t rttvar{0};
    int64_t rto{0};
};

/** @brief A flow's progress and sender state at one sampling instant. */
struct FlowSnapshot
{
    int64_t time{0}; //!< ns
    uint64_t delivered{0};
    TcpFlowState tcp; //!< a BulkSend TCP flow's sender state (cwnd 0 for other flows)
    /** the congestion state of any kind of flow (TrackedFlow::GetCongestionState) */
    std::vector<double> state;
};

namespace wormhole
{

/** @return the sender state of a connected TCP socket (cwnd 0 if it has none yet). */
TcpFlowState CaptureTcpState(Ptr<TcpSocketBase> socket);

/**
 * Put a TCP sender in a recorded state: window, threshold, alpha and RTT
 * estimates; DCTCP starts a new observation window (its old one counts
 * bytes of a stream the replay changed). The congestion state becomes
 * open (no recovery in progress), as at the recorded sampling instant.
 */
void RestoreTcpState(Ptr<TcpSocketBase> socket, const TcpFlowState& state);

/** @return the state as numbers: cwnd, ssthresh, alpha, srtt, rttvar, rto. */
std::vector<double> TcpStateVector(const TcpFlowState& state);

/** @return the state TcpStateVector gave these numbers for (missing ones as in TcpFlowState{}). */
TcpFlowState TcpStateFromVector(const std::vector<double>& numbers);

} // namespace wormhole
} // namespace ns3

#endif /* WORMHOLE_TCP_FLOW_STATE_H */
