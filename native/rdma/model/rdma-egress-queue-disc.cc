/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-egress-queue-disc.h"

#include "rdma-bth-header.h"
#include "rdma-int-header.h"
#include "rdma-nic.h"
#include "rdma-pfc-port.h"
#include "rdma-pfc-switch.h"

#include "ns3/boolean.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/net-device-queue-interface.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/udp-header.h"
#include "ns3/udp-l4-protocol.h"
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
            .SetGroupName("Rdma")
            .AddConstructor<RdmaEgressQueueDisc>()
            .AddAttribute("ControlDscp",
                          "DSCP of packets served first and never paused (RdmaNic's ControlDscp).",
                          UintegerValue(48),
                          MakeUintegerAccessor(&RdmaEgressQueueDisc::m_controlDscp),
                          MakeUintegerChecker<uint8_t>(0, 63))
            .AddAttribute("Telemetry",
                          "Append an INT record to data packets that carry an INT header (HPCC).",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaEgressQueueDisc::m_telemetry),
                          MakeBooleanChecker());
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
        if (m_telemetry)
        {
            Stamp(item);
        }
    }
    return item;
}

void
RdmaEgressQueueDisc::Stamp(Ptr<QueueDiscItem> item)
{
    auto ip = DynamicCast<Ipv4QueueDiscItem>(item);
    if (!ip || ip->GetHeader().GetProtocol() != UdpL4Protocol::PROT_NUMBER)
    {
        return;
    }
    Ptr<Packet> packet = item->GetPacket();
    UdpHeader udp;
    packet->PeekHeader(udp);
    if (udp.GetDestinationPort() != RdmaNic::ROCE_PORT)
    {
        return;
    }
    packet->RemoveHeader(udp);
    RdmaBthHeader bth;
    packet->RemoveHeader(bth);
    if (bth.IsData() && bth.HasTelemetry())
    {
        if (m_lineRate.GetBitRate() == 0)
        {
            Ptr<NetDevice> device = GetNetDeviceQueueInterface()->GetObject<NetDevice>();
            DataRateValue rate;
            device->GetAttribute("DataRate", rate);
            m_lineRate = rate.Get();
        }
        RdmaIntHeader telemetry;
        packet->RemoveHeader(telemetry);
        telemetry.PushHop(Simulator::Now(), m_txBytes, GetNBytes(), m_lineRate);
        packet->AddHeader(telemetry);
    }
    packet->AddHeader(bth);
    if (Node::ChecksumEnabled())
    {
        // The payload changed: the header recomputes the checksum when added back.
        udp.EnableChecksums();
        udp.InitializeChecksum(ip->GetHeader().GetSource(),
                               ip->GetHeader().GetDestination(),
                               UdpL4Protocol::PROT_NUMBER);
    }
    packet->AddHeader(udp);
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
