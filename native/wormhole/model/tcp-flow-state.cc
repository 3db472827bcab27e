/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "tcp-flow-state.h"

#include "private-access.h"

#include "ns3/rtt-estimator.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-state.h"

namespace ns3
{
namespace wormhole
{

TcpFlowState
CaptureTcpState(Ptr<TcpSocketBase> socket)
{
    TcpFlowState state;
    Ptr<TcpSocketState> tcb = TcpStateOf(socket);
    if (!tcb)
    {
        return state;
    }
    state.cwnd = tcb->m_cWnd.Get();
    state.ssthresh = tcb->m_ssThresh.Get();
    if (double* alpha = DctcpAlpha(TcpCongestionOpsOf(socket)))
    {
        state.alpha = *alpha;
    }
    if (Ptr<RttEstimator> rtt = TcpRttEstimatorOf(socket))
    {
        state.srtt = rtt->GetEstimate().GetNanoSeconds();
        state.rttvar = rtt->GetVariation().GetNanoSeconds();
    }
    state.rto = TcpRto(socket).Get().GetNanoSeconds();
    return state;
}

void
RestoreTcpState(Ptr<TcpSocketBase> socket, const TcpFlowState& state)
{
    Ptr<TcpSocketState> tcb = TcpStateOf(socket);
    if (!tcb || state.cwnd <= 0)
    {
        return;
    }
    tcb->m_cWnd = static_cast<uint32_t>(state.cwnd);
    tcb->m_cWndInfl = static_cast<uint32_t>(state.cwnd);
    tcb->m_ssThresh = static_cast<uint32_t>(state.ssthresh);
    tcb->m_congState = TcpSocketState::CA_OPEN;
    Ptr<TcpCongestionOps> control = TcpCongestionOpsOf(socket);
    if (double* alpha = DctcpAlpha(control); alpha && state.alpha >= 0)
    {
        *alpha = state.alpha;
    }
    DctcpRestartObservation(control);
    if (Ptr<RttEstimator> rtt = TcpRttEstimatorOf(socket); rtt && state.srtt > 0)
    {
        auto [estimate, variation] = RttEstimatorState(rtt);
        estimate = NanoSeconds(state.srtt);
        variation = NanoSeconds(state.rttvar);
    }
    if (state.rto > 0)
    {
        TcpRto(socket) = NanoSeconds(state.rto);
    }
}

std::vector<double>
TcpStateVector(const TcpFlowState& state)
{
    return {state.cwnd,
            state.ssthresh,
            state.alpha,
            static_cast<double>(state.srtt),
            static_cast<double>(state.rttvar),
            static_cast<double>(state.rto)};
}

TcpFlowState
TcpStateFromVector(const std::vector<double>& numbers)
{
    TcpFlowState state;
    auto at = [&numbers](std::size_t i, double otherwise) {
        return i < numbers.size() ? numbers[i] : otherwise;
    };
    state.cwnd = at(0, state.cwnd);
    state.ssthresh = at(1, state.ssthresh);
    state.alpha = at(2, state.alpha);
    state.srtt = static_cast<int64_t>(at(3, static_cast<double>(state.srtt)));
    state.rttvar = static_cast<int64_t>(at(4, static_cast<double>(state.rttvar)));
    state.rto = static_cast<int64_t>(at(5, static_cast<double>(state.rto)));
    return state;
}

} // namespace wormhole
} // namespace ns3
