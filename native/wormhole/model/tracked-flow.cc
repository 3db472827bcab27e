/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "tracked-flow.h"

#include "ns3/abort.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4.h"
#include "ns3/node-list.h"
#include "ns3/node.h"
#include "ns3/packet-sink.h"
#include "ns3/tcp-socket-base.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(TrackedFlow);

TypeId
TrackedFlow::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::TrackedFlow").SetParent<Object>().SetGroupName("Wormhole");
    return tid;
}

TrackedFlow::~TrackedFlow() = default;

TrackedFlow::TrackedFlow() = default;

void
TrackedFlow::DoDispose()
{
    m_srcNode = nullptr;
    m_dstNode = nullptr;
    Object::DoDispose();
}

Ptr<Node>
TrackedFlow::GetSrcNode() const
{
    return m_srcNode;
}

Ptr<Node>
TrackedFlow::GetDstNode() const
{
    return m_dstNode;
}

Ipv4Address
TrackedFlow::GetSrcAddress() const
{
    return m_srcAddress;
}

Ipv4Address
TrackedFlow::GetDstAddress() const
{
    return m_dstAddress;
}

uint16_t
TrackedFlow::GetSrcPort() const
{
    return m_srcPort;
}

uint16_t
TrackedFlow::GetDstPort() const
{
    return m_dstPort;
}

uint64_t
TrackedFlow::GetSize() const
{
    return m_size;
}

Time
TrackedFlow::GetStartTime() const
{
    return m_start;
}

bool
TrackedFlow::GetReversePorts(uint16_t& /* source */, uint16_t& /* destination */) const
{
    return false;
}

double
TrackedFlow::GetAppRate() const
{
    return 0;
}

std::string
TrackedFlow::GetCongestionOps() const
{
    return "";
}

std::string
TrackedFlow::GetPlannedCongestionOps() const
{
    return "";
}

std::string
TrackedFlow::GetRttEstimator() const
{
    return "";
}

bool
TrackedFlow::TraceRtt(Callback<void, Time> /* sink */)
{
    return false;
}

bool
TrackedFlow::IsConstantRate() const
{
    return true;
}

bool
TrackedFlow::IsPaced() const
{
    return false;
}

bool
TrackedFlow::CanBeHeld() const
{
    return false;
}

void
TrackedFlow::StartHeld()
{
    NS_ABORT_MSG("FlowTracker: " << GetKind() << " flows cannot be held");
}

bool
TrackedFlow::IsHeld() const
{
    return false;
}

bool
TrackedFlow::OweEndOfTransfer()
{
    return false;
}

void
TrackedFlow::SendOwedEndOfTransfer()
{
    NS_ABORT_MSG("FlowTracker: " << GetKind() << " flows owe no end of transfer");
}

void
TrackedFlow::ResumeHeld(const std::vector<double>& /* state */)
{
    NS_ABORT_MSG("FlowTracker: " << GetKind() << " flows cannot be held");
}

void
TrackedFlow::NotifyStarted()
{
}

void
TrackedFlow::UseSkipAwareRtt()
{
}

uint64_t
TrackedFlow::GetSent() const
{
    return 0;
}

double
TrackedFlow::GetSendingRate() const
{
    return 0;
}

uint64_t
TrackedFlow::GetCongestionNotifications() const
{
    return 0;
}

uint64_t
TrackedFlow::GetCongestionWindow() const
{
    return 0;
}

bool
TrackedFlow::IsQuiet() const
{
    return false;
}

bool
TrackedFlow::HasStopped() const
{
    return false;
}

void
TrackedFlow::ShiftTimes(Time /* delta */)
{
}

TrackedFlow::SkipBlocker
TrackedFlow::GetSkipBlocker()
{
    return SKIPPABLE;
}

std::vector<double>
TrackedFlow::GetCongestionState() const
{
    return {};
}

bool
TrackedFlow::SetCongestionState(const std::vector<double>& /* state */)
{
    return false;
}

namespace wormhole
{
Ptr<Node>
NodeOwning(Ipv4Address address)
{
    for (auto n = NodeList::Begin(); n != NodeList::End(); ++n)
    {
        Ptr<Ipv4> ipv4 = (*n)->GetObject<Ipv4>();
        if (ipv4 && ipv4->GetInterfaceForAddress(address) >= 0)
        {
            return *n;
        }
    }
    return nullptr;
}

Ptr<TcpSocketBase>
AcceptedSocketFrom(Ptr<PacketSink> sink, Ipv4Address address, uint16_t port)
{
    if (!sink)
    {
        return nullptr;
    }
    for (Ptr<Socket> socket : sink->GetAcceptedSockets())
    {
        Address peer;
        if (socket->GetPeerName(peer) != 0 || !InetSocketAddress::IsMatchingType(peer))
        {
            continue;
        }
        InetSocketAddress from = InetSocketAddress::ConvertFrom(peer);
        if (from.GetIpv4() == address && from.GetPort() == port)
        {
            return DynamicCast<TcpSocketBase>(socket);
        }
    }
    return nullptr;
}
} // namespace wormhole

} // namespace ns3
