/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The packet round-trip times each TCP flow saw along its bytes: what a run's
 * RTTs are compared on, besides its flows' completion times.
 */
#ifndef WORMHOLE_FLOW_RTT_MONITOR_H
#define WORMHOLE_FLOW_RTT_MONITOR_H

#include "flow-tracker.h"

#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * @brief Each flow's mean packet RTT over every 1/Bins of its bytes.
 *
 * Follows the flows a FlowTracker finds (its FlowStart trace) that can say
 * their packet RTTs (TrackedFlow::TraceRtt: TCP flows, from their sender
 * socket, not from TCP's estimator, which ns-3's default Timestamp option
 * limits to whole milliseconds; RDMA queue pairs). Time a skip paused the flow
 * is left out, as the skip-aware RTT estimator does. Each sample goes to the
 * bin of the bytes delivered when it is taken: bins by bytes, not by time, line
 * a plain run and an accelerated one up although a skip moves the accelerated
 * flow's clock. Bins a skip credits have no samples; a replayed flow sends no
 * data and has none at all.
 */
class FlowRttMonitor : public Object
{
  public:
    static TypeId GetTypeId();

    /** Follow every flow @p tracker finds from now on. */
    void Follow(Ptr<FlowTracker> tracker);
    /** @return the flow's mean packet RTT per bin in seconds, negative where it has none; empty if not followed. */
    std::vector<double> GetBins(uint32_t flow) const;

  private:
    struct Followed
    {
        Ptr<TrackedFlow> flow;
        std::vector<double> sum;     //!< per bin, the RTTs' sum, s
        std::vector<uint32_t> count; //!< per bin, how many
    };

    void OnFlowStart(uint32_t flow);
    void OnRtt(uint32_t flow, Time rtt);

    Ptr<FlowTracker> m_tracker;
    uint32_t m_nBins{20};
    std::unordered_map<uint32_t, Followed> m_flows;
};

} // namespace ns3

#endif /* WORMHOLE_FLOW_RTT_MONITOR_H */
