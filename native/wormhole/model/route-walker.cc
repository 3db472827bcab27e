/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "route-walker.h"

#include "ns3/boolean.h"
#include "ns3/channel.h"
#include "ns3/ipv4-global-routing.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-list-routing.h"
#include "ns3/ipv4-route.h"
#include "ns3/ipv4-static-routing.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/socket.h"

#include <algorithm>
#include <unordered_set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RouteWalker");

NS_OBJECT_ENSURE_REGISTERED(RouteWalker);

namespace
{
/** @return true if asking this routing protocol for a route has no side effect. */
bool
IsSideEffectFree(Ptr<Ipv4RoutingProtocol> routing)
{
    if (auto list = DynamicCast<Ipv4ListRouting>(routing))
    {
        for (uint32_t i = 0; i < list->GetNRoutingProtocols(); ++i)
        {
            int16_t priority;
            if (!IsSideEffectFree(list->GetRoutingProtocol(i, priority)))
            {
                return false;
            }
        }
        return true;
    }
    if (auto global = DynamicCast<Ipv4GlobalRouting>(routing))
    {
        // random ECMP draws from an RNG stream: asking would change the run
        BooleanValue random;
        global->GetAttribute("RandomEcmpRouting", random);
        return !random.Get();
    }
    return DynamicCast<Ipv4StaticRouting>(routing) != nullptr;
}
} // namespace

TypeId
RouteWalker::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RouteWalker")
                            .SetParent<Object>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<RouteWalker>();
    return tid;
}

RouteWalker::RouteWalker()
    : m_routeOracles(RouteOracle::CreateRegistered())
{
    NS_LOG_FUNCTION(this);
}

Ipv4Address
RouteWalker::SourceAddress(const TrackedFlow& flow)
{
    Ipv4Address bound = flow.GetSrcAddress();
    if (!bound.IsAny() && bound != Ipv4Address())
    {
        return bound;
    }
    // not connected yet, or never (a memo replay holds it): its node's first address
    Ptr<Ipv4> ipv4 = flow.GetSrcNode() ? flow.GetSrcNode()->GetObject<Ipv4>() : nullptr;
    return ipv4 && ipv4->GetNInterfaces() > 1 ? ipv4->GetAddress(1, 0).GetLocal() : bound;
}

RouteWalker::Paths
RouteWalker::PlannedRoute(const FlowRegistry::RegisteredFlow& f) const
{
    if (f.state != FlowRegistry::PENDING)
    {
        return {f.path, f.reversePath};
    }
    const TrackedFlow& t = *f.flow;
    Ptr<Ipv4> ipv4 = t.GetSrcNode()->GetObject<Ipv4>();
    if (!ipv4 || ipv4->GetNInterfaces() < 2 || !t.GetDstNode())
    {
        return {};
    }
    return Route(t, SourceAddress(t));
}

RouteWalker::Paths
RouteWalker::Route(const TrackedFlow& f, Ipv4Address src) const
{
    NS_LOG_FUNCTION(this << &f << src);
    uint8_t protocol = f.GetProtocol();
    std::vector<uint64_t> path =
        Walk(f.GetSrcNode(), src, f.GetDstAddress(), protocol, f.GetSrcPort(), f.GetDstPort());
    uint16_t reverseSource;
    uint16_t reverseDestination;
    if (path.empty() || !f.GetReversePorts(reverseSource, reverseDestination))
    {
        return {path, {}};
    }
    std::vector<uint64_t> back =
        f.GetDstNode()
            ? Walk(f.GetDstNode(), f.GetDstAddress(), src, protocol, reverseSource, reverseDestination)
            : std::vector<uint64_t>{};
    if (back.empty())
    {
        return {}; // half a route is no route
    }
    return {path, back};
}

std::vector<uint64_t>
RouteWalker::RouteBetween(Ptr<Node> src,
                          Ptr<Node> dst,
                          uint16_t srcPort,
                          uint16_t dstPort,
                          bool tcp) const
{
    Ptr<Ipv4> from = src->GetObject<Ipv4>();
    Ptr<Ipv4> to = dst->GetObject<Ipv4>();
    if (!from || !to || from->GetNInterfaces() < 2 || to->GetNInterfaces() < 2)
    {
        return {};
    }
    Ipv4Address a = from->GetAddress(1, 0).GetLocal();
    Ipv4Address b = to->GetAddress(1, 0).GetLocal();
    uint8_t protocol = tcp ? TCP_PROTOCOL : UDP_PROTOCOL;
    std::vector<uint64_t> path = Walk(src, a, b, protocol, srcPort, dstPort);
    if (tcp && !path.empty())
    {
        std::vector<uint64_t> back = Walk(dst, b, a, protocol, dstPort, srcPort);
        if (back.empty())
        {
            return {};
        }
        path.insert(path.end(), back.begin(), back.end());
    }
    return path;
}

std::vector<uint64_t>
RouteWalker::Walk(Ptr<Node> from,
                  Ipv4Address src,
                  Ipv4Address dst,
                  uint8_t protocol,
                  uint16_t srcPort,
                  uint16_t dstPort) const
{
    std::vector<uint64_t> path;
    std::unordered_set<uint32_t> visited;
    Ptr<Node> node = from;
    while (node && path.size() < 64)
    {
        Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
        if (!ipv4 || !visited.insert(node->GetId()).second)
        {
            return {};
        }
        if (ipv4->GetInterfaceForAddress(dst) >= 0)
        {
            return path;
        }
        Ptr<Ipv4RoutingProtocol> routing = ipv4->GetRoutingProtocol();
        if (!routing || !IsSideEffectFree(routing))
        {
            return {};
        }
        Ptr<Ipv4Route> route;
        auto oracle = std::find_if(m_routeOracles.begin(),
                                   m_routeOracles.end(),
                                   [&routing](const Ptr<RouteOracle>& o) { return o->Knows(routing); });
        if (oracle != m_routeOracles.end() && node != from)
        {
            if (srcPort == 0)
            {
                return {}; // the flow's route depends on a port it has not chosen yet
            }
            route = (*oracle)->RouteFlow(routing, src, dst, protocol, srcPort, dstPort);
        }
        else
        {
            Ipv4Header header;
            header.SetSource(src);
            header.SetDestination(dst);
            header.SetProtocol(protocol);
            Socket::SocketErrno error;
            // no packet, as TCP's Connect asks: global and static routing never read it, and
            // a packet made here would take a uid, shifting every uid the script's packets get
            route = routing->RouteOutput(nullptr, header, nullptr, error);
        }
        if (!route || !route->GetOutputDevice())
        {
            return {};
        }
        Ptr<NetDevice> out = route->GetOutputDevice();
        path.push_back((static_cast<uint64_t>(node->GetId()) << 16) | out->GetIfIndex());
        Ptr<Channel> channel = out->GetChannel();
        if (!channel)
        {
            return {};
        }
        Ipv4Address hop = route->GetGateway() == Ipv4Address::GetAny() ? dst : route->GetGateway();
        Ptr<Node> next;
        for (std::size_t d = 0; d < channel->GetNDevices(); ++d)
        {
            Ptr<NetDevice> peer = channel->GetDevice(d);
            if (peer == out)
            {
                continue;
            }
            Ptr<Ipv4> peerIpv4 = peer->GetNode()->GetObject<Ipv4>();
            if (channel->GetNDevices() == 2 ||
                (peerIpv4 && peerIpv4->GetInterfaceForAddress(hop) >= 0))
            {
                next = peer->GetNode();
                break;
            }
        }
        node = next;
    }
    return {};
}

} // namespace ns3
