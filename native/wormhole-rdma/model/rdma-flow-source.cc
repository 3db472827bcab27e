/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-flow-source.h"

#include "rdma-flow.h"

#include "ns3/flow-tracker.h"
#include "ns3/node.h"
#include "ns3/rdma-nic.h"
#include "ns3/rdma-queue-pair.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaFlowSource);

namespace
{
/** Every FlowTracker finds RDMA queue pairs once this module is loaded. */
struct RegisterRdmaFlowSource
{
    RegisterRdmaFlowSource()
    {
        FlowSource::Register(RdmaFlowSource::GetTypeId());
    }
} g_registerRdmaFlowSource;
} // namespace

TypeId
RdmaFlowSource::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaFlowSource")
                            .SetParent<FlowSource>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<RdmaFlowSource>();
    return tid;
}

RdmaFlowSource::RdmaFlowSource() = default;

RdmaFlowSource::~RdmaFlowSource() = default;

void
RdmaFlowSource::DoDispose()
{
    m_nicsHooked.clear();
    m_flowByQueuePair.clear();
    FlowSource::DoDispose();
}

void
RdmaFlowSource::DiscoverFlows(Ptr<Node> node)
{
    Ptr<RdmaNic> nic = node->GetObject<RdmaNic>();
    if (!nic)
    {
        return;
    }
    if (std::find(m_nicsHooked.begin(), m_nicsHooked.end(), nic) == m_nicsHooked.end())
    {
        m_nicsHooked.push_back(nic);
        nic->TraceConnectWithoutContext("FlowStart",
                                        MakeCallback(&RdmaFlowSource::OnQueuePairStart, this));
        nic->TraceConnectWithoutContext("FlowFinish",
                                        MakeCallback(&RdmaFlowSource::OnQueuePairFinish, this));
    }
    // in creation order, each once it is about to start (or has): until then its start
    // time is not known
    uint32_t& seen = m_queuePairsSeen[node->GetId()];
    for (; seen < nic->GetNQueuePairs(); ++seen)
    {
        Ptr<RdmaQueuePair> qp = nic->GetQueuePair(seen);
        if (!qp->IsStarted() && !qp->GetStartEvent().IsPending())
        {
            break;
        }
        Ptr<RdmaFlow> flow = CreateObject<RdmaFlow>();
        flow->SetQueuePair(qp);
        m_flowByQueuePair[PeekPointer(qp)] = m_tracker->AddFlow(flow);
    }
}

void
RdmaFlowSource::OnQueuePairStart(Ptr<RdmaQueuePair> qp)
{
    auto it = m_flowByQueuePair.find(PeekPointer(qp));
    if (it == m_flowByQueuePair.end())
    {
        m_tracker->Discover(); // created and started by the same event
        it = m_flowByQueuePair.find(PeekPointer(qp));
    }
    m_tracker->NotifyFlowStarted(it->second);
}

void
RdmaFlowSource::OnQueuePairFinish(Ptr<RdmaQueuePair> qp)
{
    auto it = m_flowByQueuePair.find(PeekPointer(qp));
    if (it != m_flowByQueuePair.end())
    {
        m_tracker->NotifyFlowFinished(it->second);
    }
}

} // namespace ns3
