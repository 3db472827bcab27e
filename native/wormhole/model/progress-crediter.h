/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The FlowTracker's side of a skip: crediting flows the bytes they would have
 * delivered, taking them back, and moving the clocks their objects keep.
 */
#ifndef WORMHOLE_PROGRESS_CREDITER_H
#define WORMHOLE_PROGRESS_CREDITER_H

#include "flow-registry.h"

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{

class FlowMonitor;
class Ipv4FlowClassifier;

/**
 * @brief Credits and un-credits skipped flows, and shifts the times their
 * objects keep, so that every counter a script reads stays exact.
 *
 * What a credit touches depends on the kind of flow (TrackedFlow::Credit);
 * this class adds the script's FlowMonitors: credited bytes count as packets
 * of the flow and its ACK flow, with the mean delay of the flow's current
 * sampling window (marked by MarkMonitors), and the packets they track in
 * flight have the skipped time removed from their delays.
 */
class ProgressCrediter : public Object
{
  public:
    static TypeId GetTypeId();

    /** Credit the flows of @p registry. */
    void SetRegistry(Ptr<FlowRegistry> registry);

    /**
     * Credit a flow with bytes it would have delivered while fast-forwarded
     * (see FlowTracker::Credit). @return the bytes credited.
     */
    uint64_t Credit(uint32_t flow, uint64_t bytes);
    /** Take back bytes credited by a skip cut short. @return the bytes taken back. */
    uint64_t Uncredit(uint32_t flow, uint64_t bytes);
    /**
     * The flow's pending events were moved by @p delta: move the absolute
     * times its objects keep, and the delays of its packets FlowMonitors track
     * in flight.
     */
    void ShiftTimes(uint32_t flow, Time delta);

    /** Keep a script's FlowMonitor consistent with skips. */
    void AddFlowMonitor(Ptr<FlowMonitor> monitor, Ptr<Ipv4FlowClassifier> classifier);
    /** Shift the in-flight packets FlowMonitors track for a flow (both directions) by delta. */
    void ShiftMonitoredPackets(uint32_t flow, Time delta);
    /**
     * A sampling window of the flow begins: remember what FlowMonitors had
     * measured of its delays, so that a credit uses the window's mean delay.
     */
    void MarkMonitors(uint32_t flow);

  private:
    /** Per FlowMonitor: (delay sum, packets) of a flow's data when its window began. */
    using MonitorMarks = std::vector<std::pair<Time, uint64_t>>;

    /** @return the FlowMonitor flow ids of a flow's data (first) and ACK (second) packets. */
    std::pair<int64_t, int64_t> MonitorFlowIds(std::size_t monitor, const TrackedFlow& flow) const;
    /** Credit the flow's FlowMonitor flows @p bytes, as its history of @p delivered bytes says. */
    void CreditMonitors(uint32_t flow, uint64_t bytes, uint64_t delivered);

    Ptr<FlowRegistry> m_registry;
    std::vector<std::pair<Ptr<FlowMonitor>, Ptr<Ipv4FlowClassifier>>> m_monitors;
    std::vector<MonitorMarks> m_marks; //!< by flow number, grown as windows begin
};

} // namespace ns3

#endif /* WORMHOLE_PROGRESS_CREDITER_H */
