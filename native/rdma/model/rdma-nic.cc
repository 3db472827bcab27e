/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-nic.h"

#include "rdma-aeth-header.h"
#include "rdma-bth-header.h"
#include "rdma-congestion-control.h"
#include "rdma-dcqcn.h"
#include "rdma-int-header.h"
#include "rdma-pfc-port.h"
#include "rdma-queue-pair.h"
#include "rdma-receive-queue-pair.h"

#include "ns3/abort.h"
#include "ns3/data-rate.h"
#include "ns3/ipv4-end-point.h"
#include "ns3/ipv4-interface.h"
#include "ns3/ipv4-route.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/net-device-queue-interface.h"
#include "ns3/node.h"
#include "ns3/object-factory.h"
#include "ns3/packet.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue-disc.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/socket.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/type-id.h"
#include "ns3/udp-l4-protocol.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaNic");
NS_OBJECT_ENSURE_REGISTERED(RdmaNic);

namespace
{
constexpr uint32_t UDP_HEADER_BYTES = 8;
constexpr uint32_t IPV4_HEADER_BYTES = 20;
constexpr uint32_t PPP_HEADER_BYTES = 2;
constexpr uint32_t ETHERNET_HEADER_BYTES = 14;
/** RoCEv2 NICs choose UDP source ports in the dynamic range. */
constexpr uint16_t FIRST_SOURCE_PORT = 49152;
constexpr uint32_t SOURCE_PORTS = 16384;
} // namespace

TypeId
RdmaNic::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaNic")
            .SetParent<Object>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaNic>()
            .AddAttribute("Mtu",
                          "Payload bytes per data packet. Default 1000: HPCC's ns-3 Mtu "
                          "(SimAI.conf PACKET_PAYLOAD_SIZE sets 9000).",
                          UintegerValue(1000),
                          MakeUintegerAccessor(&RdmaNic::m_mtu),
                          MakeUintegerChecker<uint32_t>(1, 9000))
            .AddAttribute("AckInterval",
                          "Packets received in order per coalesced ACK (an ACK also goes at "
                          "message end and when a packet requests one). Default 1: SimAI.conf "
                          "L2_ACK_INTERVAL.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&RdmaNic::m_ackInterval),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("CnpInterval",
                          "The notification point sends at most one CNP per queue pair per "
                          "interval. Default 50 us: DCQCN paper (SIGCOMM'15), N = 50 us.",
                          TimeValue(MicroSeconds(50)),
                          MakeTimeAccessor(&RdmaNic::m_cnpInterval),
                          MakeTimeChecker(Time(0)))
            .AddAttribute("RetransmitTimeout",
                          "A queue pair goes back to its first unacknowledged PSN when no ACK "
                          "advanced it for this long. Default 1 ms (about the RoCE local ACK "
                          "timeout 4.096 us * 2^8).",
                          TimeValue(MilliSeconds(1)),
                          MakeTimeAccessor(&RdmaNic::m_retransmitTimeout),
                          MakeTimeChecker(TimeStep(1)))
            .AddAttribute("TxQueuePackets",
                          "Size of the device's transmit queue in packets: the NIC keeps it "
                          "this full, no more, so queues build in the network.",
                          UintegerValue(1),
                          MakeUintegerAccessor(&RdmaNic::m_txQueuePackets),
                          MakeUintegerChecker<uint32_t>(1))
            .AddAttribute("DataDscp",
                          "DSCP of data packets (the lossless class); ECT(0) is always set.",
                          UintegerValue(26),
                          MakeUintegerAccessor(&RdmaNic::m_dataDscp),
                          MakeUintegerChecker<uint8_t>(0, 63))
            .AddAttribute("ControlDscp",
                          "DSCP of ACKs, NAKs and CNPs (RoCE deployments use CS6 = 48).",
                          UintegerValue(48),
                          MakeUintegerAccessor(&RdmaNic::m_controlDscp),
                          MakeUintegerChecker<uint8_t>(0, 63))
            .AddAttribute("CongestionControl",
                          "TypeId of the congestion control of every queue pair "
                          "(an ns3::RdmaCongestionControl: ns3::RdmaDcqcn or ns3::RdmaHpcc).",
                          TypeIdValue(RdmaDcqcn::GetTypeId()),
                          MakeTypeIdAccessor(&RdmaNic::m_ccType),
                          MakeTypeIdChecker())
            .AddTraceSource("FlowStart",
                            "A queue pair of this NIC started sending.",
                            MakeTraceSourceAccessor(&RdmaNic::m_flowStart),
                            "ns3::RdmaNic::QueuePairTracedCallback")
            .AddTraceSource("FlowFinish",
                            "The receiver of a queue pair of this NIC got the last byte.",
                            MakeTraceSourceAccessor(&RdmaNic::m_flowFinish),
                            "ns3::RdmaNic::QueuePairTracedCallback");
    return tid;
}

RdmaNic::RdmaNic() = default;

void
RdmaNic::DoDispose()
{
    m_paceEvent.Cancel();
    if (m_endPoint)
    {
        m_udp->DeAllocate(m_endPoint); // still ours: UDP has not destroyed it
        m_endPoint = nullptr;
    }
    if (m_txQueue)
    {
        m_txQueue->SetWakeCallback(MakeNullCallback<void>());
    }
    for (auto& qp : m_queuePairs)
    {
        qp->Dispose();
    }
    for (auto& rq : m_receiveQueuePairs)
    {
        rq->Dispose();
    }
    m_queuePairs.clear();
    m_receiveQueuePairs.clear();
    m_senders.clear();
    m_receivers.clear();
    m_active.clear();
    m_control.clear();
    m_routes.clear();
    m_node = nullptr;
    m_device = nullptr;
    m_txQueue = nullptr;
    m_udp = nullptr;
    m_pfc = nullptr;
    Object::DoDispose();
}

void
RdmaNic::DoInitialize()
{
    if (m_device)
    {
        Ptr<TrafficControlLayer> tc = m_node->GetObject<TrafficControlLayer>();
        NS_ABORT_MSG_IF(tc && tc->GetRootQueueDiscOnDevice(m_device),
                        "RDMA on node " << m_node->GetId()
                                        << ": a queue disc was installed on its device after "
                                           "RdmaHelper::Install; the NIC must own the device");
    }
    Object::DoInitialize();
}

void
RdmaNic::Setup(Ptr<NetDevice> device)
{
    NS_ABORT_MSG_IF(m_device, "RdmaNic::Setup called twice");
    m_device = device;
    m_node = device->GetNode();
    uint32_t id = m_node->GetId();
    Ptr<Ipv4> ipv4 = m_node->GetObject<Ipv4>();
    NS_ABORT_MSG_IF(!ipv4, "RDMA on node " << id << ": install the Internet stack first");
    int32_t interface = ipv4->GetInterfaceForDevice(device);
    NS_ABORT_MSG_IF(interface < 0 || ipv4->GetNAddresses(interface) == 0,
                    "RDMA on node " << id << ": assign an IPv4 address to device "
                                    << device->GetIfIndex() << " first");
    m_address = ipv4->GetAddress(interface, 0).GetLocal();

    m_udp = m_node->GetObject<UdpL4Protocol>();
    NS_ABORT_MSG_IF(!m_udp, "RDMA on node " << id << ": the node has no UDP");
    m_endPoint = m_udp->Allocate(nullptr, m_address, ROCE_PORT);
    NS_ABORT_MSG_IF(!m_endPoint,
                    "RDMA on node " << id << ": UDP port " << ROCE_PORT << " is taken");
    m_endPoint->SetRxCallback(MakeCallback(&RdmaNic::Receive, this));
    m_endPoint->SetDestroyCallback(MakeCallback(&RdmaNic::EndPointDestroyed, this));

    Ptr<TrafficControlLayer> tc = m_node->GetObject<TrafficControlLayer>();
    if (tc && tc->GetRootQueueDiscOnDevice(device))
    {
        tc->DeleteRootQueueDiscOnDevice(device);
    }
    Ptr<NetDeviceQueueInterface> queues = device->GetObject<NetDeviceQueueInterface>();
    NS_ABORT_MSG_IF(!queues,
                    "RDMA on node " << id << ": device " << device->GetIfIndex()
                                    << " has no NetDeviceQueueInterface (use point-to-point)");
    m_txQueue = queues->GetTxQueue(0);
    m_txQueue->SetWakeCallback(MakeCallback(&RdmaNic::TrySend, this));

    DataRateValue rate;
    NS_ABORT_MSG_IF(!device->GetAttributeFailSafe("DataRate", rate),
                    "RDMA on node " << id << ": device " << device->GetIfIndex()
                                    << " has no DataRate attribute");
    m_lineRate = rate.Get();
    m_wireOverhead = UDP_HEADER_BYTES + IPV4_HEADER_BYTES;
    if (auto p2p = DynamicCast<PointToPointNetDevice>(device))
    {
        p2p->GetQueue()->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, m_txQueuePackets));
        m_wireOverhead += PPP_HEADER_BYTES;
    }
    else
    {
        m_wireOverhead += ETHERNET_HEADER_BYTES;
    }

    m_pfc = device->GetObject<RdmaPfcPort>();
    if (!m_pfc)
    {
        m_pfc = CreateObject<RdmaPfcPort>();
        device->AggregateObject(m_pfc);
    }
    m_pfc->SetResumeCallback(MakeCallback(&RdmaNic::Kick, this));
}

void
RdmaNic::EndPointDestroyed()
{
    m_endPoint = nullptr;
}

uint16_t
RdmaNic::PickSourcePort(uint32_t qpn) const
{
    uint32_t h = (m_node->GetId() + 1) * 0x9E3779B1u ^ qpn * 0x85EBCA6Bu;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return static_cast<uint16_t>(FIRST_SOURCE_PORT + h % SOURCE_PORTS);
}

Ptr<RdmaQueuePair>
RdmaNic::CreateQueuePair(Ptr<RdmaNic> receiver, uint64_t bytes, uint16_t sourcePort)
{
    NS_ABORT_MSG_IF(!m_device, "RdmaNic::CreateQueuePair before Setup");
    NS_ABORT_MSG_IF(!receiver || !receiver->m_device,
                    "RDMA flow from node " << m_node->GetId() << ": the receiver has no RDMA NIC");
    NS_ABORT_MSG_IF(receiver == this,
                    "RDMA flow from node " << m_node->GetId() << " to itself");
    NS_ABORT_MSG_IF(bytes == 0, "RDMA flow from node " << m_node->GetId() << " of 0 bytes");
    uint32_t qpn = m_nextQpn++;
    uint16_t port = sourcePort ? sourcePort : PickSourcePort(qpn);
    Ptr<RdmaReceiveQueuePair> rx = receiver->Accept(qpn, m_address, port);

    RdmaQueuePair::Config config;
    config.qpn = qpn;
    config.source = m_address;
    config.destination = receiver->GetAddress();
    config.sourcePort = port;
    config.size = bytes;
    config.mtu = m_mtu;
    config.wireOverhead = m_wireOverhead;
    config.retransmitTimeout = m_retransmitTimeout;
    Ptr<RdmaQueuePair> qp = CreateObject<RdmaQueuePair>();
    ObjectFactory congestionControl(m_ccType.GetName());
    Ptr<RdmaCongestionControl> cc = congestionControl.Create<RdmaCongestionControl>();
    NS_ABORT_MSG_IF(!cc, m_ccType.GetName() << " is not an ns3::RdmaCongestionControl");
    uint32_t ipBytes = IPV4_HEADER_BYTES + UDP_HEADER_BYTES + RdmaBthHeader().GetSerializedSize() +
                       m_mtu + RdmaBthHeader::ICRC_BYTES +
                       (cc->WantsTelemetry() ? RdmaIntHeader().GetSerializedSize() : 0);
    NS_ABORT_MSG_IF(ipBytes > m_device->GetMtu(),
                    "RDMA on node " << m_node->GetId() << ": " << m_mtu
                                    << "-byte payloads make " << ipBytes
                                    << "-byte IP packets, above the device MTU of "
                                    << m_device->GetMtu() << " (lower Mtu or raise the device's)");
    qp->Setup(this, config, cc, rx);
    rx->SetCompletionCallback(MakeCallback(&RdmaQueuePair::NotifyDelivered, qp));
    m_queuePairs.push_back(qp);
    m_senders[qpn] = qp;
    return qp;
}

Ptr<RdmaReceiveQueuePair>
RdmaNic::Accept(uint32_t peerQpn, Ipv4Address peer, uint16_t sourcePort)
{
    RdmaReceiveQueuePair::Config config;
    config.qpn = m_nextQpn++;
    config.peerQpn = peerQpn;
    config.local = m_address;
    config.peer = peer;
    config.sourcePort = sourcePort;
    config.ackInterval = m_ackInterval;
    config.cnpInterval = m_cnpInterval;
    Ptr<RdmaReceiveQueuePair> rx = CreateObject<RdmaReceiveQueuePair>();
    rx->Setup(this, config);
    m_receiveQueuePairs.push_back(rx);
    m_receivers[config.qpn] = rx;
    return rx;
}

void
RdmaNic::StartQueuePair(Ptr<RdmaQueuePair> qp)
{
    NS_ABORT_MSG_IF(qp->GetNic() != this, "a queue pair starts on the NIC that created it");
    qp->Start();
    m_active.push_back(qp);
    m_flowStart(qp);
    Kick();
}

void
RdmaNic::ScheduleQueuePair(Ptr<RdmaQueuePair> qp, Time delay)
{
    NS_ABORT_MSG_IF(qp->GetNic() != this, "a queue pair starts on the NIC that created it");
    // ScheduleWithContext gives no EventId: enter the node's context first, then schedule there
    Ptr<RdmaNic> self = this;
    Simulator::ScheduleWithContext(m_node->GetId(), TimeStep(0), [self, qp, delay]() {
        qp->SetStartEvent(Simulator::Schedule(delay, &RdmaNic::StartQueuePair, self, qp));
    });
}

Ptr<Node>
RdmaNic::GetNode() const
{
    return m_node;
}

Ptr<NetDevice>
RdmaNic::GetDevice() const
{
    return m_device;
}

Ipv4Address
RdmaNic::GetAddress() const
{
    return m_address;
}

DataRate
RdmaNic::GetLineRate() const
{
    return m_lineRate;
}

uint32_t
RdmaNic::GetMtu() const
{
    return m_mtu;
}

uint32_t
RdmaNic::GetNQueuePairs() const
{
    return m_queuePairs.size();
}

Ptr<RdmaQueuePair>
RdmaNic::GetQueuePair(uint32_t i) const
{
    NS_ABORT_MSG_IF(i >= m_queuePairs.size(), "no queue pair " << i);
    return m_queuePairs[i];
}

uint32_t
RdmaNic::GetNActiveQueuePairs() const
{
    return m_active.size();
}

uint64_t
RdmaNic::GetDataPacketsSent() const
{
    return m_dataPackets;
}

uint64_t
RdmaNic::GetControlPacketsSent() const
{
    return m_controlPackets;
}

uint64_t
RdmaNic::GetUnknownQpDrops() const
{
    return m_unknownQp;
}

void
RdmaNic::Kick()
{
    TrySend();
}

void
RdmaNic::SendControl(Ptr<Packet> packet, Ipv4Address destination, uint16_t sourcePort)
{
    m_control.push_back({packet, destination, sourcePort});
    TrySend();
}

void
RdmaNic::NotifyFinished(Ptr<RdmaQueuePair> qp)
{
    m_flowFinish(qp);
}

void
RdmaNic::NotifyAcknowledged(Ptr<RdmaQueuePair> qp)
{
    auto found = std::find(m_active.begin(), m_active.end(), qp);
    if (found == m_active.end())
    {
        return;
    }
    size_t index = found - m_active.begin();
    m_active.erase(found);
    if (m_nextActive > index)
    {
        --m_nextActive;
    }
    if (m_nextActive >= m_active.size())
    {
        m_nextActive = 0;
    }
}

void
RdmaNic::TrySend()
{
    if (m_sending || !m_txQueue)
    {
        return;
    }
    m_sending = true;
    while (!m_txQueue->IsStopped())
    {
        if (!m_control.empty())
        {
            Control control = m_control.front();
            m_control.pop_front();
            ++m_controlPackets;
            Transmit(control.packet, control.destination, control.sourcePort, m_controlDscp << 2);
            continue;
        }
        if (m_pfc->IsPaused())
        {
            break;
        }
        Ptr<RdmaQueuePair> qp = NextReady();
        if (!qp)
        {
            SchedulePacing();
            break;
        }
        ++m_dataPackets;
        Transmit(qp->BuildNextPacket(),
                 qp->GetDestination(),
                 qp->GetSourcePort(),
                 (m_dataDscp << 2) | Ipv4Header::ECN_ECT0);
    }
    m_sending = false;
}

Ptr<RdmaQueuePair>
RdmaNic::NextReady()
{
    Time now = Simulator::Now();
    size_t n = m_active.size();
    for (size_t k = 0; k < n; ++k)
    {
        size_t index = (m_nextActive + k) % n;
        Ptr<RdmaQueuePair> qp = m_active[index];
        if (qp->HasDataToSend() && qp->GetNextSendTime() <= now)
        {
            m_nextActive = (index + 1) % n;
            return qp;
        }
    }
    return nullptr;
}

void
RdmaNic::SchedulePacing()
{
    m_paceEvent.Cancel();
    bool waiting = false;
    Time earliest;
    for (const auto& qp : m_active)
    {
        if (qp->HasDataToSend() && (!waiting || qp->GetNextSendTime() < earliest))
        {
            earliest = qp->GetNextSendTime();
            waiting = true;
        }
    }
    if (waiting)
    {
        m_paceEvent = Simulator::Schedule(earliest - Simulator::Now(), &RdmaNic::TrySend, this);
    }
}

Ptr<Ipv4Route>
RdmaNic::Route(Ipv4Address destination)
{
    auto found = m_routes.find(destination.Get());
    if (found != m_routes.end())
    {
        return found->second;
    }
    Ipv4Header header;
    header.SetSource(m_address);
    header.SetDestination(destination);
    header.SetProtocol(UdpL4Protocol::PROT_NUMBER);
    Socket::SocketErrno error;
    Ptr<Ipv4> ipv4 = m_node->GetObject<Ipv4>();
    Ptr<Ipv4Route> route =
        ipv4->GetRoutingProtocol()->RouteOutput(Create<Packet>(), header, m_device, error);
    NS_ABORT_MSG_IF(!route,
                    "RDMA on node " << m_node->GetId() << ": no route to " << destination
                                    << " (populate the routing tables first)");
    m_routes.emplace(destination.Get(), route);
    return route;
}

void
RdmaNic::Transmit(Ptr<Packet> packet, Ipv4Address destination, uint16_t sourcePort, uint8_t tos)
{
    SocketIpTosTag tosTag;
    tosTag.SetTos(tos);
    packet->AddPacketTag(tosTag);
    m_udp->Send(packet, m_address, destination, sourcePort, ROCE_PORT, Route(destination));
}

void
RdmaNic::Receive(Ptr<Packet> packet,
                 Ipv4Header header,
                 uint16_t /* port */,
                 Ptr<Ipv4Interface> /* iface */)
{
    RdmaBthHeader bth;
    packet->RemoveHeader(bth);
    if (bth.IsData())
    {
        auto found = m_receivers.find(bth.GetDestQp());
        if (found == m_receivers.end())
        {
            ++m_unknownQp;
            return;
        }
        found->second->ReceiveData(packet, bth, header.GetEcn() == Ipv4Header::ECN_CE);
        return;
    }
    auto found = m_senders.find(bth.GetDestQp());
    if (found == m_senders.end())
    {
        ++m_unknownQp;
        return;
    }
    if (bth.GetOpcode() == RdmaBthHeader::CNP)
    {
        found->second->ReceiveCnp();
    }
    else if (bth.GetOpcode() == RdmaBthHeader::RC_ACKNOWLEDGE)
    {
        RdmaAethHeader aeth;
        packet->RemoveHeader(aeth);
        if (bth.HasTelemetry())
        {
            RdmaIntHeader telemetry;
            packet->RemoveHeader(telemetry);
            found->second->ReceiveAck(bth.GetWirePsn(), aeth.IsNak(), &telemetry);
        }
        else
        {
            found->second->ReceiveAck(bth.GetWirePsn(), aeth.IsNak(), nullptr);
        }
    }
}

} // namespace ns3
