/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "socket-flow-source.h"

#include "flow-tracker.h"
#include "private-access.h"
#include "socket-flow.h"
#include "wormhole-simulator-impl.h"

#include "ns3/bulk-send-application.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/onoff-application.h"
#include "ns3/packet.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-socket-base.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("SocketFlowSource");

NS_OBJECT_ENSURE_REGISTERED(SocketFlowSource);

namespace
{
constexpr uint8_t TCP_PROTOCOL = 6;
constexpr uint32_t TCP_FLAGS_OFFSET = 13; //!< the flags byte of a TCP header

/** Every tracker follows the sockets of its script. */
struct RegisterSocketFlowSource
{
    RegisterSocketFlowSource()
    {
        FlowSource::Register(SocketFlowSource::GetTypeId());
    }
} g_registerSocketFlowSource;

/** @return true if an application the tracker knows as a flow of its own sends on @p socket. */
bool
OwnedByApplication(Ptr<Node> node, Ptr<TcpSocketBase> socket)
{
    for (uint32_t i = 0; i < node->GetNApplications(); ++i)
    {
        Ptr<Application> app = node->GetApplication(i);
        Ptr<Socket> owned;
        if (auto bulk = DynamicCast<BulkSendApplication>(app))
        {
            owned = bulk->GetSocket();
        }
        else if (auto onoff = DynamicCast<OnOffApplication>(app))
        {
            owned = onoff->GetSocket();
        }
        if (owned == socket)
        {
            return true;
        }
    }
    return false;
}

/** @return true if @p socket's endpoints are these, both IPv4. */
bool
HasEndpoints(Ptr<TcpSocketBase> socket, const InetSocketAddress& local, const InetSocketAddress& peer)
{
    Address mine;
    Address theirs;
    if (socket->GetSockName(mine) != 0 || socket->GetPeerName(theirs) != 0 ||
        !InetSocketAddress::IsMatchingType(mine) || !InetSocketAddress::IsMatchingType(theirs))
    {
        return false;
    }
    InetSocketAddress from = InetSocketAddress::ConvertFrom(mine);
    InetSocketAddress to = InetSocketAddress::ConvertFrom(theirs);
    return from.GetIpv4() == local.GetIpv4() && from.GetPort() == local.GetPort() &&
           to.GetIpv4() == peer.GetIpv4() && to.GetPort() == peer.GetPort();
}
} // namespace

TypeId
SocketFlowSource::GetTypeId()
{
    static TypeId tid = TypeId("ns3::SocketFlowSource")
                            .SetParent<FlowSource>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<SocketFlowSource>();
    return tid;
}

SocketFlowSource::SocketFlowSource() = default;

SocketFlowSource::~SocketFlowSource() = default;

void
SocketFlowSource::DoDispose()
{
    m_seen.clear();
    FlowSource::DoDispose();
}

void
SocketFlowSource::DiscoverFlows(Ptr<Node> node)
{
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    Ptr<Ipv4L3Protocol> ipv4 = node->GetObject<Ipv4L3Protocol>();
    if (!tcp || !ipv4 || !m_nodesFollowed.insert(node->GetId()).second)
    {
        return;
    }
    ipv4->TraceConnectWithoutContext(
        "SendOutgoing",
        Callback<void, const Ipv4Header&, Ptr<const Packet>, uint32_t>(
            [this, node](const Ipv4Header& header, Ptr<const Packet> packet, uint32_t interface) {
                OnSendOutgoing(node, header, packet, interface);
            }));
    // connected while the script set up, before its node was followed
    for (Ptr<TcpSocketBase> socket : wormhole::TcpSocketsOf(tcp))
    {
        if (wormhole::TcpConnectionState(socket) == TcpSocket::SYN_SENT)
        {
            Adopt(node, socket);
        }
    }
}

void
SocketFlowSource::OnSendOutgoing(Ptr<Node> node,
                                 const Ipv4Header& header,
                                 Ptr<const Packet> packet,
                                 uint32_t /* interface */)
{
    if (header.GetProtocol() != TCP_PROTOCOL || packet->GetSize() <= TCP_FLAGS_OFFSET)
    {
        return;
    }
    uint8_t bytes[TCP_FLAGS_OFFSET + 1];
    packet->CopyData(bytes, sizeof(bytes));
    uint8_t flags = bytes[TCP_FLAGS_OFFSET];
    if (!(flags & TcpHeader::SYN) || (flags & TcpHeader::ACK))
    {
        return; // only an opening SYN names a connecting socket
    }
    InetSocketAddress local(header.GetSource(), static_cast<uint16_t>((bytes[0] << 8) | bytes[1]));
    InetSocketAddress peer(header.GetDestination(),
                           static_cast<uint16_t>((bytes[2] << 8) | bytes[3]));
    for (Ptr<TcpSocketBase> socket : wormhole::TcpSocketsOf(node->GetObject<TcpL4Protocol>()))
    {
        if (HasEndpoints(socket, local, peer))
        {
            Adopt(node, socket);
            return;
        }
    }
}

void
SocketFlowSource::Adopt(Ptr<Node> node, Ptr<TcpSocketBase> socket)
{
    if (!m_seen.insert(socket).second || OwnedByApplication(node, socket))
    {
        return;
    }
    Address peer;
    if (socket->GetPeerName(peer) != 0 || !InetSocketAddress::IsMatchingType(peer))
    {
        return; // IPv6 is left to plain ns-3
    }
    Ptr<SocketFlow> flow = CreateObject<SocketFlow>();
    flow->SetSocket(socket);
    uint32_t index = m_tracker->AddFlow(flow);
    NS_LOG_LOGIC("socket flow " << index << " from node " << node->GetId());
    uint32_t tag = m_tracker->GetTag(index);
    flow->SetTag(tag);
    if (WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating())
    {
        // the event that connects (the script's own) is the flow's from here on: its
        // handshake, and what it schedules for the connection, carry the flow's tag
        impl->AdoptTag(tag);
    }
    FlowTracker* tracker = m_tracker;
    flow->SetLifecycle(Callback<void>([tracker, index]() { tracker->NotifyFlowStarted(index); }),
                       Callback<void>([tracker, index]() { tracker->NotifyFlowFinished(index); }));
}

} // namespace ns3
