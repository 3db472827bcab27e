/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Starts RDMA flows (one message on its own queue pair) and keeps them for
 * reporting flow completion times.
 */
#ifndef RDMA_FLOW_HELPER_H
#define RDMA_FLOW_HELPER_H

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class Node;
class RdmaQueuePair;

/**
 * @brief Creates flows between nodes that have an RdmaNic (RdmaHelper).
 *
 * Each flow is a queue pair created at once (so it can be inspected before
 * it starts) and started by an event at its start time, in the sending
 * node's context. Flow ids count from 0 in AddFlow order. A flow's FCT is
 * GetFinishTime() - GetStartTime() of its queue pair: from its start to the
 * moment the receiver holds the last byte.
 */
class RdmaFlowHelper
{
  public:
    /** Called when a flow completes (its receiver holds every byte). */
    typedef Callback<void, Ptr<RdmaQueuePair>> CompletionCallback;

    RdmaFlowHelper();

    /**
     * A flow of @p bytes from @p source to @p destination starting at
     * simulation time @p start (not in the past).
     * @param done called at completion; may be null
     * @param sourcePort UDP source port of the flow, 0 to let the NIC pick one
     * @return the flow id
     */
    uint32_t AddFlow(Ptr<Node> source,
                     Ptr<Node> destination,
                     uint64_t bytes,
                     Time start,
                     CompletionCallback done = CompletionCallback(),
                     uint16_t sourcePort = 0);

    uint32_t GetNFlows() const;
    /** @return the queue pair of flow @p id. */
    Ptr<RdmaQueuePair> GetFlow(uint32_t id) const;
    /** @return how many flows have completed. */
    uint32_t GetNFinished() const;

  private:
    std::vector<Ptr<RdmaQueuePair>> m_flows;
};

} // namespace ns3

#endif /* RDMA_FLOW_HELPER_H */
