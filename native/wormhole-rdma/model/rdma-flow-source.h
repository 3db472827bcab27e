/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Lets the FlowTracker find the queue pairs of RDMA NICs.
 */
#ifndef WORMHOLE_RDMA_FLOW_SOURCE_H
#define WORMHOLE_RDMA_FLOW_SOURCE_H

#include "ns3/flow-source.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ns3
{

class RdmaNic;
class RdmaQueuePair;

/**
 * @brief The FlowSource of RDMA queue pairs: each queue pair of a node's
 * RdmaNic is one flow (an RdmaFlow), found in creation order once it is about
 * to start (or has), since until then its start time is not known.
 *
 * It follows each NIC's FlowStart and FlowFinish traces to tell the tracker
 * when a queue pair starts (a queue pair created and started by the same
 * event is discovered then) and finishes. Registered with every tracker by
 * this module's static initializer.
 */
class RdmaFlowSource : public FlowSource
{
  public:
    static TypeId GetTypeId();
    RdmaFlowSource();
    ~RdmaFlowSource() override;

    void DiscoverFlows(Ptr<Node> node) override;

  private:
    void DoDispose() override;
    void OnQueuePairStart(Ptr<RdmaQueuePair> qp);
    void OnQueuePairFinish(Ptr<RdmaQueuePair> qp);

    std::unordered_map<uint32_t, uint32_t> m_queuePairsSeen; //!< node id -> queue pairs taken
    std::vector<Ptr<RdmaNic>> m_nicsHooked;                  //!< NICs whose traces we follow
    //! queue pair -> the tracker's flow number
    std::unordered_map<const RdmaQueuePair*, uint32_t> m_flowByQueuePair;
};

} // namespace ns3

#endif /* WORMHOLE_RDMA_FLOW_SOURCE_H */
