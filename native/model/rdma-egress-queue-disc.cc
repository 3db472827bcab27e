/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-egress-queue-disc.h"

#include "rdma-pfc-port.h"
#include "rdma-pfc-switch.h"

#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaEgressQueueDisc");
NS_OBJECT_ENSURE_REGISTERED(RdmaEgressQueueDisc);

namespace
{
constexpr uint32_t CONTROL_CLASS = 0;
constexpr uint32_t DATA_CLASS = 1;
} // namespace

TypeId
RdmaEgressQueueDisc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaEgressQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("Wormhole")
            .AddConstructor<RdmaEgressQueueDisc>()
            .AddAttribute("ControlDscp",
                          "DSCP of packets served first and never paused (RdmaNic's ControlDscp).",
                          UintegerValue(48),
                          MakeUintegerAccessor(&RdmaEgressQueueDisc::m_controlDscp),
                          MakeUintegerChecker<uint8_t>(0, 63));
    return tid;
}

RdmaEgressQueueDisc::RdmaEgressQueueDisc()
    : QueueDisc(QueueDiscSizePolicy::NO_LIMITS)
{
}

void
RdmaEgressQueueDisc::DoDispose()
{
    m_pfcPort = nullptr;
    m_pfcSwitch = nullptr;
    QueueDisc::DoDispose();
}

void
RdmaEgressQueueDisc::SetPfcPort(Ptr<RdmaPfcPort> port)
{
    m_pfcPort = port;
    port->SetResumeCallback(MakeCallback(&QueueDisc::Run, static_cast<QueueDisc*>(this)));
}

void
RdmaEgressQueueDisc::SetPfcSwitch(Ptr<RdmaPfcSwitch> buffer)
{
    m_pfcSwitch = buffer;
}

uint64_t
RdmaEgressQueueDisc::GetTxBytes() const
{
    return m_txBytes;
}

bool
RdmaEgressQueueDisc::IsControl(Ptr<const QueueDiscItem> item) const
{
    auto ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    return ip && (ip->GetHeader().GetTos() >> 2) == m_controlDscp;
}

bool
RdmaEgressQueueDisc::DataPaused() const
{
    return m_pfcPort && m_pfcPort->IsPaused();
}

bool
RdmaEgressQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item)
{
    if (IsControl(item))
    {
        return GetQueueDiscClass(CONTROL_CLASS)->GetQueueDisc()->Enqueue(item);
    }
    if (m_pfcSwitch && !m_pfcSwitch->Admit(item->GetPacket()))
    {
        DropBeforeEnqueue(item, "PFC headroom exceeded");
        return false;
    }
    return GetQueueDiscClass(DATA_CLASS)->GetQueueDisc()->Enqueue(item);
}

Ptr<QueueDiscItem>
RdmaEgressQueueDisc::DoDequeue()
{
    Ptr<QueueDiscItem> item = GetQueueDiscClass(CONTROL_CLASS)->GetQueueDisc()->Dequeue();
    if (!item && !DataPaused())
    {
        item = GetQueueDiscClass(DATA_CLASS)->GetQueueDisc()->Dequeue();
    }
    if (item)
    {
        m_txBytes += item->GetSize();
    }
    return item;
}

Ptr<const QueueDiscItem>
RdmaEgressQueueDisc::DoPeek()
{
    Ptr<const QueueDiscItem> item = GetQueueDiscClass(CONTROL_CLASS)->GetQueueDisc()->Peek();
    if (!item && !DataPaused())
    {
        item = GetQueueDiscClass(DATA_CLASS)->GetQueueDisc()->Peek();
    }
    return item;
}

bool
RdmaEgressQueueDisc::CheckConfig()
{
    if (GetNInternalQueues() > 0 || GetNPacketFilters() > 0)
    {
        NS_LOG_ERROR("RdmaEgressQueueDisc takes no internal queues and no packet filters");
        return false;
    }
    if (GetNQueueDiscClasses() != 2)
    {
        NS_LOG_ERROR("RdmaEgressQueueDisc needs two classes: control, then data");
        return false;
    }
    return true;
}

void
RdmaEgressQueueDisc::InitializeParams()
{
}

} // namespace ns3
