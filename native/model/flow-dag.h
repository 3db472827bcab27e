/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A dependency graph of bulk flows: each flow starts a fixed delay after the
 * last of the flows it depends on has been received in full, the way NCCL
 * steps a collective and a training step waits for its inputs.
 */
#ifndef WORMHOLE_FLOW_DAG_H
#define WORMHOLE_FLOW_DAG_H

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"
#include "ns3/type-id.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ns3
{

class Node;
class Packet;
class PacketSink;
class Address;

/**
 * @brief Starts BulkSend flows as their prerequisites complete.
 *
 * Flows are added with their source, destination, size and start delay, and
 * dependencies between them. Start() releases the flows that depend on
 * nothing; a flow released at time t gets a PacketSink on its destination
 * and a BulkSendApplication on its source starting at t + delay, bound to a
 * source port of its own. A flow is finished when its sink has received all
 * its bytes; that releases every flow whose last prerequisite it was.
 *
 * Everything is ordinary ns-3: the same graph gives the same run with any
 * simulator implementation. Releases run in an event of their own, at the
 * time of the completion that caused them, so that an accelerator sees the
 * new applications before they start.
 */
class FlowDag : public Object
{
  public:
    static TypeId GetTypeId();

    FlowDag();

    /**
     * Add a flow of `bytes` (> 0) from src to dst that starts `delay` after its
     * prerequisites are complete (after Start() if it has none).
     * @return the flow's id, in order of addition from 0.
     */
    uint32_t AddFlow(Ptr<Node> src, Ptr<Node> dst, uint64_t bytes, Time delay);
    /** Make `flow` wait for `prerequisite` to complete (added earlier). */
    void AddDependency(uint32_t flow, uint32_t prerequisite);
    /** Release the flows without prerequisites; call once, before or during the run. */
    void Start();

    uint32_t GetNFlows() const;
    uint32_t GetNFinished() const;
    /** @return when the flow's prerequisites completed, or -1 s if not yet. */
    Time GetReleaseTime(uint32_t flow) const;
    /** @return when the flow's application starts (release + delay), or -1 s. */
    Time GetStartTime(uint32_t flow) const;
    /** @return when the flow's last byte arrived, or -1 s while unfinished. */
    Time GetFinishTime(uint32_t flow) const;
    uint16_t GetSourcePort(uint32_t flow) const;
    uint16_t GetDestinationPort(uint32_t flow) const;

  private:
    struct Flow
    {
        Ptr<Node> src;
        Ptr<Node> dst;
        uint64_t bytes;
        Time delay;
        std::vector<uint32_t> dependents;
        uint32_t waiting{0};
        Time release{Seconds(-1)};
        Time finish{Seconds(-1)};
        uint16_t srcPort{0};
        uint16_t dstPort{0};
        Ptr<PacketSink> sink;
    };

    void DoDispose() override;
    /** Create the flow's sink and sender. */
    void Release(uint32_t flow);
    /** Schedule the release, as an event not attributed to the flow that completed. */
    void ScheduleRelease(uint32_t flow);
    void OnSinkRx(uint32_t flow, Ptr<const Packet> packet, const Address& from);
    uint16_t NextPort(Ptr<Node> node);

    std::vector<Flow> m_flows;
    std::unordered_map<uint32_t, uint32_t> m_nextPort; //!< per node id
    uint32_t m_finished{0};
    bool m_started{false};
    TypeId m_socketFactory;
    uint32_t m_sendSize;
    uint16_t m_firstPort;
    TracedCallback<uint32_t> m_releaseTrace;
    TracedCallback<uint32_t> m_finishTrace;
};

} // namespace ns3

#endif /* WORMHOLE_FLOW_DAG_H */
