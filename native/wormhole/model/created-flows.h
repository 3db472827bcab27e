/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The flows an event created, as the controller and the memo learn them: what
 * each is, and its start gated, read in one crossing.
 */
#ifndef WORMHOLE_CREATED_FLOWS_H
#define WORMHOLE_CREATED_FLOWS_H

#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class FlowTracker;

/**
 * @brief Reads the flows the tracker discovered since a caller last asked,
 * and gates their starts for a memo (FlowTracker::GateStart), in one call.
 *
 * After an event that created flows, the controller reads each one's state
 * and start time, and a memo gates each pending one's start event and reads
 * the nodes and size it looks the flow up by: one crossing of the Python
 * boundary for all of it, rather than a dozen for each flow. Nothing is read
 * that can change before the flow starts.
 */
class CreatedFlows : public Object
{
  public:
    /** Numbers before the flows: the time (ns), the running event's tag and the simulator's event count. */
    static constexpr uint32_t HEADER = 3;
    /**
     * Numbers per flow: its id, its state (FlowRegistry::State), its
     * application's start time in seconds (a double's bits), its source and
     * destination node ids, its size in bytes, and, if gated, its start
     * event's uid and its gated start (ns; -1 if its start is not gated).
     */
    static constexpr uint32_t FIELDS = 8;

    static TypeId GetTypeId();
    CreatedFlows();
    ~CreatedFlows() override;

    /** Read and gate the flows of @p tracker (which owns this reader). */
    void SetTracker(FlowTracker* tracker);

    /**
     * @return HEADER numbers (the time in ns, the running event's tag and
     * the event count of the accelerating simulator, each -1 under another),
     * then FIELDS numbers for each flow numbered @p from or more. With
     * @p gate, each pending flow's start event uid is read and its start
     * gated (FlowTracker::GetStartEventUid, then FlowTracker::GateStart);
     * without, those two numbers are 0 and -1.
     */
    std::vector<int64_t> Take(uint32_t from, bool gate);

  private:
    FlowTracker* m_tracker{nullptr}; //!< whose flows are read
};

} // namespace ns3

#endif /* WORMHOLE_CREATED_FLOWS_H */
