/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-switch-helper.h"

#include "ns3/rdma-egress-queue-disc.h"
#include "ns3/rdma-pfc-port.h"
#include "ns3/rdma-pfc-switch.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/channel.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/fifo-queue-disc.h"
#include "ns3/loopback-net-device.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue.h"
#include "ns3/queue-size.h"
#include "ns3/red-queue-disc.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

namespace ns3
{

namespace
{
/** Kmin and Kmax per Gb/s of link rate when SetEcn() is not called. */
constexpr double KMIN_BYTES_PER_GBPS = 4000;
constexpr double KMAX_BYTES_PER_GBPS = 16000;
constexpr double DEFAULT_PMAX = 0.2;
constexpr uint32_t DEFAULT_BUFFER_BYTES = 32 * 1000 * 1000;
constexpr uint32_t DEFAULT_MEAN_PACKET_BYTES = 1048;
constexpr uint32_t DEVICE_QUEUE_PACKETS = 1;
} // namespace

RdmaSwitchHelper::RdmaSwitchHelper()
    : m_bufferBytes(DEFAULT_BUFFER_BYTES),
      m_meanPacketSize(DEFAULT_MEAN_PACKET_BYTES)
{
}

void
RdmaSwitchHelper::SetEcn(uint32_t kminBytes, uint32_t kmaxBytes, double pmax)
{
    NS_ABORT_MSG_IF(kminBytes > kmaxBytes,
                    "ECN thresholds: Kmin " << kminBytes << " > Kmax " << kmaxBytes);
    NS_ABORT_MSG_IF(pmax <= 0 || pmax > 1, "ECN Pmax " << pmax << " is not in (0, 1]");
    m_ecnSet = true;
    m_kmin = kminBytes;
    m_kmax = kmaxBytes;
    m_pmax = pmax;
}

void
RdmaSwitchHelper::SetBufferSize(uint32_t bytes)
{
    m_bufferBytes = bytes;
}

void
RdmaSwitchHelper::SetMeanPacketSize(uint32_t bytes)
{
    m_meanPacketSize = bytes;
}

void
RdmaSwitchHelper::EnablePfc(uint64_t xoffBytes, uint64_t xonBytes, uint64_t headroomBytes)
{
    NS_ABORT_MSG_IF(xonBytes >= xoffBytes,
                    "PFC XON " << xonBytes << " must be below XOFF " << xoffBytes);
    m_pfc = true;
    m_xoff = xoffBytes;
    m_xon = xonBytes;
    m_headroom = headroomBytes;
}

void
RdmaSwitchHelper::EnableTelemetry()
{
    m_telemetry = true;
}

QueueDiscContainer
RdmaSwitchHelper::Install(NodeContainer switches) const
{
    QueueDiscContainer roots;
    for (auto node = switches.Begin(); node != switches.End(); ++node)
    {
        roots.Add(Install(*node));
    }
    return roots;
}

QueueDiscContainer
RdmaSwitchHelper::Install(Ptr<Node> node) const
{
    Ptr<RdmaPfcSwitch> pfc;
    if (m_pfc)
    {
        NS_ABORT_MSG_IF(node->GetObject<RdmaPfcSwitch>(),
                        "PFC on node " << node->GetId() << " is installed already");
        pfc = CreateObject<RdmaPfcSwitch>();
        pfc->SetAttribute("XoffBytes", UintegerValue(m_xoff));
        pfc->SetAttribute("XonBytes", UintegerValue(m_xon));
        pfc->SetAttribute("HeadroomBytes", UintegerValue(m_headroom));
        node->AggregateObject(pfc);
    }
    QueueDiscContainer roots;
    for (uint32_t i = 0; i < node->GetNDevices(); ++i)
    {
        Ptr<NetDevice> device = node->GetDevice(i);
        if (DynamicCast<LoopbackNetDevice>(device))
        {
            continue;
        }
        Ptr<QueueDisc> root = InstallPort(device);
        if (pfc)
        {
            DynamicCast<RdmaEgressQueueDisc>(root)->SetPfcSwitch(pfc);
            pfc->AddPort(device);
        }
        roots.Add(root);
    }
    return roots;
}

Ptr<QueueDisc>
RdmaSwitchHelper::InstallPort(Ptr<NetDevice> device) const
{
    Ptr<Node> node = device->GetNode();
    Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
    NS_ABORT_MSG_IF(!tc, "RDMA switch node " << node->GetId() << " has no Internet stack");
    if (tc->GetRootQueueDiscOnDevice(device))
    {
        tc->DeleteRootQueueDiscOnDevice(device);
    }

    DataRateValue rate;
    NS_ABORT_MSG_IF(!device->GetAttributeFailSafe("DataRate", rate),
                    "RDMA switch node " << node->GetId() << ": device " << device->GetIfIndex()
                                        << " has no DataRate attribute");
    double gbps = static_cast<double>(rate.Get().GetBitRate()) / 1e9;
    uint32_t kmin = m_ecnSet ? m_kmin : static_cast<uint32_t>(KMIN_BYTES_PER_GBPS * gbps);
    uint32_t kmax = m_ecnSet ? m_kmax : static_cast<uint32_t>(KMAX_BYTES_PER_GBPS * gbps);
    double pmax = m_ecnSet ? m_pmax : DEFAULT_PMAX;
    TimeValue delay;
    if (Ptr<Channel> channel = device->GetChannel())
    {
        channel->GetAttributeFailSafe("Delay", delay);
    }

    Ptr<RedQueueDisc> red = CreateObject<RedQueueDisc>();
    red->SetAttribute("MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::BYTES, m_bufferBytes)));
    red->SetAttribute("MeanPktSize", UintegerValue(m_meanPacketSize));
    red->SetAttribute("QW", DoubleValue(1.0));
    red->SetAttribute("MinTh", DoubleValue(kmin));
    red->SetAttribute("MaxTh", DoubleValue(kmax));
    red->SetAttribute("LInterm", DoubleValue(1.0 / pmax));
    red->SetAttribute("UseEcn", BooleanValue(true));
    red->SetAttribute("UseHardDrop", BooleanValue(false));
    red->SetAttribute("Gentle", BooleanValue(false));
    red->SetAttribute("Wait", BooleanValue(false));
    red->SetAttribute("LinkBandwidth", DataRateValue(rate.Get()));
    red->SetAttribute("LinkDelay", TimeValue(delay.Get()));

    Ptr<FifoQueueDisc> control = CreateObject<FifoQueueDisc>();
    control->SetAttribute("MaxSize", QueueSizeValue(QueueSize("10000p")));

    Ptr<RdmaEgressQueueDisc> root = CreateObject<RdmaEgressQueueDisc>();
    root->SetAttribute("Telemetry", BooleanValue(m_telemetry));
    for (Ptr<QueueDisc> child : {Ptr<QueueDisc>(control), Ptr<QueueDisc>(red)})
    {
        Ptr<QueueDiscClass> c = CreateObject<QueueDiscClass>();
        c->SetQueueDisc(child);
        root->AddQueueDiscClass(c);
    }
    tc->SetRootQueueDiscOnDevice(device, root);

    if (auto p2p = DynamicCast<PointToPointNetDevice>(device))
    {
        p2p->GetQueue()->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, DEVICE_QUEUE_PACKETS));
    }
    Ptr<RdmaPfcPort> port = device->GetObject<RdmaPfcPort>();
    if (!port)
    {
        port = CreateObject<RdmaPfcPort>();
        device->AggregateObject(port);
    }
    root->SetPfcPort(port);
    return root;
}

int64_t
RdmaSwitchHelper::AssignStreams(QueueDiscContainer roots, int64_t stream)
{
    int64_t used = 0;
    for (auto root = roots.Begin(); root != roots.End(); ++root)
    {
        for (std::size_t i = 0; i < (*root)->GetNQueueDiscClasses(); ++i)
        {
            if (auto red = DynamicCast<RedQueueDisc>((*root)->GetQueueDiscClass(i)->GetQueueDisc()))
            {
                used += red->AssignStreams(stream + used);
            }
        }
    }
    return used;
}

} // namespace ns3
