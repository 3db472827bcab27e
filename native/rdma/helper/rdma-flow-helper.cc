/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-flow-helper.h"

#include "ns3/rdma-nic.h"
#include "ns3/rdma-queue-pair.h"

#include "ns3/abort.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

namespace ns3
{

RdmaFlowHelper::RdmaFlowHelper() = default;

uint32_t
RdmaFlowHelper::AddFlow(Ptr<Node> source,
                        Ptr<Node> destination,
                        uint64_t bytes,
                        Time start,
                        CompletionCallback done,
                        uint16_t sourcePort)
{
    uint32_t id = m_flows.size();
    Ptr<RdmaNic> sender = source->GetObject<RdmaNic>();
    Ptr<RdmaNic> receiver = destination->GetObject<RdmaNic>();
    NS_ABORT_MSG_IF(!sender,
                    "RDMA flow " << id << ": node " << source->GetId()
                                 << " has no RdmaNic (RdmaHelper::Install it)");
    NS_ABORT_MSG_IF(!receiver,
                    "RDMA flow " << id << ": node " << destination->GetId()
                                 << " has no RdmaNic (RdmaHelper::Install it)");
    NS_ABORT_MSG_IF(start < Simulator::Now(),
                    "RDMA flow " << id << " starts at " << start.As(Time::US)
                                 << ", before now (" << Simulator::Now().As(Time::US) << ")");
    Ptr<RdmaQueuePair> qp = sender->CreateQueuePair(receiver, bytes, sourcePort);
    qp->SetFlowId(id);
    if (!done.IsNull())
    {
        qp->SetCompletionCallback(done);
    }
    sender->ScheduleQueuePair(qp, start - Simulator::Now());
    m_flows.push_back(qp);
    return id;
}

uint32_t
RdmaFlowHelper::GetNFlows() const
{
    return m_flows.size();
}

Ptr<RdmaQueuePair>
RdmaFlowHelper::GetFlow(uint32_t id) const
{
    NS_ABORT_MSG_IF(id >= m_flows.size(), "no RDMA flow " << id);
    return m_flows[id];
}

uint32_t
RdmaFlowHelper::GetNFinished() const
{
    uint32_t finished = 0;
    for (const auto& qp : m_flows)
    {
        finished += qp->IsFinished() ? 1 : 0;
    }
    return finished;
}

} // namespace ns3
