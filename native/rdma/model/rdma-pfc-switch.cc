/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-pfc-switch.h"

#include "rdma-pfc-port.h"

#include "ns3/abort.h"
#include "ns3/channel.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/log.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/ppp-header.h"
#include "ns3/queue-disc.h"
#include "ns3/simulator.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaPfcSwitch");
NS_OBJECT_ENSURE_REGISTERED(RdmaPfcSwitch);

namespace
{
constexpr uint16_t PPP_IPV4 = 0x0021;
} // namespace

TypeId
RdmaPfcSwitch::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaPfcSwitch")
            .SetParent<Object>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaPfcSwitch>()
            .AddAttribute("XoffBytes",
                          "Lossless bytes held for one ingress port at which PAUSE is sent "
                          "upstream.",
                          UintegerValue(200 * 1000),
                          MakeUintegerAccessor(&RdmaPfcSwitch::m_xoff),
                          MakeUintegerChecker<uint64_t>(1))
            .AddAttribute("XonBytes",
                          "Bytes held for an ingress port at or below which RESUME is sent "
                          "(must be below XoffBytes).",
                          UintegerValue(180 * 1000),
                          MakeUintegerAccessor(&RdmaPfcSwitch::m_xon),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("HeadroomBytes",
                          "Bytes an ingress port may hold beyond XoffBytes, for what arrives "
                          "while PAUSE travels (2 x propagation delay x rate plus a few MTUs); "
                          "beyond it data packets are dropped.",
                          UintegerValue(100 * 1000),
                          MakeUintegerAccessor(&RdmaPfcSwitch::m_headroom),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("ControlDscp",
                          "DSCP of the control class, which PFC neither accounts nor pauses.",
                          UintegerValue(48),
                          MakeUintegerAccessor(&RdmaPfcSwitch::m_controlDscp),
                          MakeUintegerChecker<uint8_t>(0, 63))
            .AddTraceSource("PauseSent",
                            "PAUSE (true) or RESUME (false) sent upstream of a port.",
                            MakeTraceSourceAccessor(&RdmaPfcSwitch::m_pauseTrace),
                            "ns3::RdmaPfcSwitch::PauseTracedCallback")
            .AddTraceSource("HeadroomDrop",
                            "A data packet was dropped: its ingress port's headroom was full.",
                            MakeTraceSourceAccessor(&RdmaPfcSwitch::m_headroomDropTrace),
                            "ns3::Packet::TracedCallback");
    return tid;
}

RdmaPfcSwitch::RdmaPfcSwitch() = default;

void
RdmaPfcSwitch::DoDispose()
{
    m_ports.clear();
    m_charges.clear();
    Object::DoDispose();
}

void
RdmaPfcSwitch::AddPort(Ptr<NetDevice> device)
{
    NS_ABORT_MSG_IF(m_xon >= m_xoff,
                    "PFC XonBytes (" << m_xon << ") must be below XoffBytes (" << m_xoff << ")");
    uint32_t ifIndex = device->GetIfIndex();
    if (m_ports.size() <= ifIndex)
    {
        m_ports.resize(ifIndex + 1);
    }
    NS_ABORT_MSG_IF(m_ports[ifIndex].device, "PFC port " << ifIndex << " added twice");
    m_ports[ifIndex].device = device;

    device->TraceConnectWithoutContext(
        "MacRx",
        Callback<void, Ptr<const Packet>>(
            [this, ifIndex](Ptr<const Packet> packet) { Arrive(ifIndex, packet); }));
    device->TraceConnectWithoutContext("PhyTxBegin",
                                       MakeCallback(&RdmaPfcSwitch::Depart, this));
    device->TraceConnectWithoutContext("MacTxDrop", MakeCallback(&RdmaPfcSwitch::Forget, this));

    Ptr<Node> node = device->GetNode();
    if (auto tc = node->GetObject<TrafficControlLayer>())
    {
        if (auto qdisc = tc->GetRootQueueDiscOnDevice(device))
        {
            qdisc->TraceConnectWithoutContext(
                "Drop",
                Callback<void, Ptr<const QueueDiscItem>>(
                    [this](Ptr<const QueueDiscItem> item) { Forget(item->GetPacket()); }));
        }
    }
    if (!m_ipv4Hooked)
    {
        m_ipv4Hooked = true;
        if (auto ipv4 = node->GetObject<Ipv4L3Protocol>())
        {
            ipv4->TraceConnectWithoutContext(
                "Drop",
                Callback<void,
                         const Ipv4Header&,
                         Ptr<const Packet>,
                         Ipv4L3Protocol::DropReason,
                         Ptr<Ipv4>,
                         uint32_t>([this](const Ipv4Header&,
                                          Ptr<const Packet> packet,
                                          Ipv4L3Protocol::DropReason,
                                          Ptr<Ipv4>,
                                          uint32_t) { Forget(packet); }));
        }
    }
}

bool
RdmaPfcSwitch::IsLossless(Ptr<const Packet> packet) const
{
    Ptr<Packet> copy = packet->Copy();
    PppHeader ppp;
    copy->RemoveHeader(ppp);
    if (ppp.GetProtocol() != PPP_IPV4)
    {
        return false;
    }
    Ipv4Header ip;
    copy->PeekHeader(ip);
    return (ip.GetTos() >> 2) != m_controlDscp;
}

void
RdmaPfcSwitch::Arrive(uint32_t ifIndex, Ptr<const Packet> packet)
{
    if (!IsLossless(packet))
    {
        return;
    }
    Port& port = m_ports[ifIndex];
    uint32_t bytes = packet->GetSize();
    m_charges[packet->GetUid()] = {ifIndex, bytes};
    port.bytes += bytes;
    m_maxIngress = std::max(m_maxIngress, port.bytes);
    if (!port.pausing && port.bytes >= m_xoff)
    {
        Signal(ifIndex, true);
    }
}

bool
RdmaPfcSwitch::Admit(Ptr<const Packet> packet)
{
    auto found = m_charges.find(packet->GetUid());
    if (found == m_charges.end())
    {
        return true;
    }
    if (m_ports[found->second.ifIndex].bytes <= m_xoff + m_headroom)
    {
        return true;
    }
    ++m_headroomDrops;
    m_headroomDropTrace(packet);
    Charge charge = found->second;
    m_charges.erase(found);
    Release(charge);
    return false;
}

void
RdmaPfcSwitch::Depart(Ptr<const Packet> packet)
{
    Forget(packet);
}

void
RdmaPfcSwitch::Forget(Ptr<const Packet> packet)
{
    auto found = m_charges.find(packet->GetUid());
    if (found == m_charges.end())
    {
        return;
    }
    Charge charge = found->second;
    m_charges.erase(found);
    Release(charge);
}

void
RdmaPfcSwitch::Release(const Charge& charge)
{
    Port& port = m_ports[charge.ifIndex];
    port.bytes -= charge.bytes;
    if (port.pausing && port.bytes <= m_xon)
    {
        Signal(charge.ifIndex, false);
    }
}

void
RdmaPfcSwitch::Signal(uint32_t ifIndex, bool pause)
{
    Port& port = m_ports[ifIndex];
    port.pausing = pause;
    if (pause)
    {
        ++port.pauses;
    }
    m_pauseTrace(ifIndex, pause);

    Ptr<Channel> channel = port.device->GetChannel();
    for (std::size_t i = 0; channel && i < channel->GetNDevices(); ++i)
    {
        Ptr<NetDevice> peer = channel->GetDevice(i);
        if (peer == port.device)
        {
            continue;
        }
        Ptr<RdmaPfcPort> upstream = peer->GetObject<RdmaPfcPort>();
        if (!upstream)
        {
            NS_LOG_WARN("node " << peer->GetNode()->GetId() << " device " << peer->GetIfIndex()
                                << " has no RdmaPfcPort: it cannot be paused");
            continue;
        }
        TimeValue delay;
        channel->GetAttributeFailSafe("Delay", delay);
        Simulator::ScheduleWithContext(peer->GetNode()->GetId(),
                                       delay.Get(),
                                       pause ? &RdmaPfcPort::ReceivePause
                                             : &RdmaPfcPort::ReceiveResume,
                                       upstream);
    }
}

uint64_t
RdmaPfcSwitch::GetIngressBytes(uint32_t ifIndex) const
{
    return ifIndex < m_ports.size() ? m_ports[ifIndex].bytes : 0;
}

uint32_t
RdmaPfcSwitch::GetNPausesSent(uint32_t ifIndex) const
{
    return ifIndex < m_ports.size() ? m_ports[ifIndex].pauses : 0;
}

uint32_t
RdmaPfcSwitch::GetNPausesSent() const
{
    uint32_t total = 0;
    for (const Port& port : m_ports)
    {
        total += port.pauses;
    }
    return total;
}

uint64_t
RdmaPfcSwitch::GetHeadroomDrops() const
{
    return m_headroomDrops;
}

uint64_t
RdmaPfcSwitch::GetMaxIngressBytes() const
{
    return m_maxIngress;
}

} // namespace ns3
