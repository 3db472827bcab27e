/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The FlowTracker's gate on flow starts, for memo replay: a flow's start is
 * decided at its own start event, and a flow can start held, be resumed or
 * complete without sending.
 */
#ifndef WORMHOLE_START_GATE_H
#define WORMHOLE_START_GATE_H

#include "flow-registry.h"
#include "tcp-flow-state.h"

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

namespace ns3
{

class SimulatorImpl;

/**
 * @brief Holds and releases flow starts (WormholeSimulatorImpl::Gate).
 *
 * A gated start event stays where it is in the queue; when its turn comes the
 * decide callback is told the flow, unless DecideStart was called for it
 * already, and the event runs as it is (the flow starts for real) or the flow
 * starts held in its place. A held TCP flow connects but sends nothing until
 * ResumeHeld; a held RDMA queue pair does not start.
 */
class StartGate : public Object
{
  public:
    static TypeId GetTypeId();

    /** Gate the starts of the flows of @p registry. */
    void SetRegistry(Ptr<FlowRegistry> registry);

    /**
     * Gate a flow's pending start event. @return the start time, or -1 s if no
     * start was pending (or its node is not initialized yet).
     */
    Time GateStart(uint32_t flow);
    /** Who decides a gated flow's start, when its start event is next: it calls DecideStart. */
    void SetDecideCallback(Callback<void, uint32_t> decide);
    /** How a gated flow starts when its start event runs: held or for real. */
    void DecideStart(uint32_t flow, bool held);
    /** @return the uid of a pending flow's start event (0 if none). */
    uint32_t GetStartEventUid(uint32_t flow) const;
    /**
     * Let a held flow send, its congestion control in the given state (empty:
     * as it is), in an event attributed to the flow.
     */
    void ResumeHeld(uint32_t flow, const std::vector<double>& state);
    /**
     * Complete a flow that never started, as a replay says it completes now
     * (TrackedFlow::CompleteVirtually, in the flow's own event).
     */
    void CompleteVirtually(uint32_t flow);
    /**
     * Let the flow's next virtual completion owe the end of its transfer
     * (TrackedFlow::OweEndOfTransfer). @return false if it cannot.
     */
    bool OweEndOfTransfer(uint32_t flow);
    /** Put on the wire the end of transfer a flow owes, in the flow's own event. */
    void SendOwedEndOfTransfer(uint32_t flow);

  private:
    /** The gate of gated start events: runs the event, or starts its flow held instead. */
    bool OnGatedStart(uint32_t uid);
    /** Run @p action now, in the running event but attributed to the flow (its packets carry its tag). */
    void RunAsFlow(uint32_t flow, const std::function<void()>& action);
    /** Run @p action now, in an event on the flow's source node attributed to the flow. */
    void ScheduleForFlow(uint32_t flow, std::function<void()> action);

    Ptr<FlowRegistry> m_registry;
    std::unordered_map<uint32_t, uint32_t> m_gatedStarts; //!< gated start event uid -> flow
    std::unordered_map<uint32_t, bool> m_decided;          //!< flow -> held, as DecideStart said
    Callback<void, uint32_t> m_decide;                     //!< the decide callback
    SimulatorImpl* m_gatingImpl{nullptr};                  //!< the simulator whose gate is ours
};

} // namespace ns3

#endif /* WORMHOLE_START_GATE_H */
