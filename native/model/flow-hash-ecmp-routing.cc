/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-hash-ecmp-routing.h"

#include "ns3/hash.h"
#include "ns3/ipv4-route.h"
#include "ns3/ipv4-routing-table-entry.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"

#include <array>
#include <cstring>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowHashEcmpRouting");
NS_OBJECT_ENSURE_REGISTERED(FlowHashEcmpRouting);

namespace
{
constexpr uint8_t TCP_PROTOCOL = 6;
constexpr uint8_t UDP_PROTOCOL = 17;
} // namespace

TypeId
FlowHashEcmpRouting::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowHashEcmpRouting")
                            .SetParent<Ipv4GlobalRouting>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<FlowHashEcmpRouting>();
    return tid;
}

FlowHashEcmpRouting::FlowHashEcmpRouting() = default;

const std::vector<FlowHashEcmpRouting::Candidate>&
FlowHashEcmpRouting::Candidates(Ipv4Address dst)
{
    if (!m_tableValid || GetNRoutes() != m_table.size())
    {
        m_table.clear();
        m_candidates.clear();
        for (uint32_t i = 0; i < GetNRoutes(); ++i)
        {
            Ipv4RoutingTableEntry* route = GetRoute(i);
            m_table.push_back({route->IsHost(),
                               route->IsHost() ? route->GetDest() : route->GetDestNetwork(),
                               route->GetDestNetworkMask(),
                               {route->GetInterface(), route->GetGateway()}});
        }
        m_tableValid = true;
    }
    auto found = m_candidates.find(dst.Get());
    if (found != m_candidates.end())
    {
        return found->second;
    }
    std::vector<Candidate> host;
    std::vector<Candidate> network;
    for (const Entry& entry : m_table)
    {
        if (entry.host && entry.dest == dst)
        {
            host.push_back(entry.way);
        }
        else if (!entry.host && entry.mask.IsMatch(dst, entry.dest))
        {
            network.push_back(entry.way);
        }
    }
    return m_candidates.emplace(dst.Get(), host.empty() ? network : host).first->second;
}

uint32_t
FlowHashEcmpRouting::Hash(Ipv4Address src,
                          Ipv4Address dst,
                          uint8_t protocol,
                          uint16_t srcPort,
                          uint16_t dstPort) const
{
    // the node id salts the hash so that successive tiers do not all pick
    // the same index (hash polarization)
    if (m_nodeId < 0)
    {
        m_nodeId = m_ipv4->GetObject<Node>()->GetId();
    }
    auto node = static_cast<uint32_t>(m_nodeId);
    std::array<char, 17> key{};
    uint32_t s = src.Get();
    uint32_t d = dst.Get();
    std::memcpy(key.data(), &s, 4);
    std::memcpy(key.data() + 4, &d, 4);
    key[8] = static_cast<char>(protocol);
    std::memcpy(key.data() + 9, &srcPort, 2);
    std::memcpy(key.data() + 11, &dstPort, 2);
    std::memcpy(key.data() + 13, &node, 4);
    return Hash32(key.data(), key.size());
}

Ptr<Ipv4Route>
FlowHashEcmpRouting::Select(Ipv4Address dst, uint32_t hash, Ptr<NetDevice> oif)
{
    const std::vector<Candidate>& all = Candidates(dst);
    std::vector<const Candidate*> usable;
    for (const Candidate& c : all)
    {
        if (!oif || oif == m_ipv4->GetNetDevice(c.interface))
        {
            usable.push_back(&c);
        }
    }
    if (usable.empty())
    {
        return nullptr;
    }
    const Candidate& way = *usable[hash % usable.size()];
    Ptr<Ipv4Route> route = Create<Ipv4Route>();
    route->SetDestination(dst);
    route->SetSource(m_ipv4->GetAddress(way.interface, 0).GetLocal());
    route->SetGateway(way.gateway);
    route->SetOutputDevice(m_ipv4->GetNetDevice(way.interface));
    return route;
}

Ptr<Ipv4Route>
FlowHashEcmpRouting::LookupFlow(Ipv4Address src,
                                Ipv4Address dst,
                                uint8_t protocol,
                                uint16_t srcPort,
                                uint16_t dstPort)
{
    return Select(dst, Hash(src, dst, protocol, srcPort, dstPort), nullptr);
}

uint32_t
FlowHashEcmpRouting::GetNEqualCostRoutes(Ipv4Address dst)
{
    return Candidates(dst).size();
}

Ptr<Ipv4Route>
FlowHashEcmpRouting::RouteOutput(Ptr<Packet> p,
                                 const Ipv4Header& header,
                                 Ptr<NetDevice> oif,
                                 Socket::SocketErrno& sockerr)
{
    if (header.GetDestination().IsMulticast())
    {
        return nullptr;
    }
    Ptr<Ipv4Route> route =
        Select(header.GetDestination(),
               Hash(Ipv4Address::GetAny(), header.GetDestination(), header.GetProtocol(), 0, 0),
               oif);
    sockerr = route ? Socket::ERROR_NOTERROR : Socket::ERROR_NOROUTETOHOST;
    return route;
}

bool
FlowHashEcmpRouting::RouteInput(Ptr<const Packet> p,
                                const Ipv4Header& header,
                                Ptr<const NetDevice> idev,
                                const UnicastForwardCallback& ucb,
                                const MulticastForwardCallback& mcb,
                                const LocalDeliverCallback& lcb,
                                const ErrorCallback& ecb)
{
    uint32_t iif = m_ipv4->GetInterfaceForDevice(idev);
    if (m_ipv4->IsDestinationAddress(header.GetDestination(), iif) || !m_ipv4->IsForwarding(iif))
    {
        // local delivery and refusals exactly as Ipv4GlobalRouting does them
        return Ipv4GlobalRouting::RouteInput(p, header, idev, ucb, mcb, lcb, ecb);
    }
    uint16_t srcPort = 0;
    uint16_t dstPort = 0;
    uint8_t protocol = header.GetProtocol();
    if ((protocol == TCP_PROTOCOL || protocol == UDP_PROTOCOL) && p->GetSize() >= 4 &&
        header.GetFragmentOffset() == 0)
    {
        // both transports start with the two ports, in network byte order
        uint8_t ports[4];
        p->CopyData(ports, 4);
        srcPort = static_cast<uint16_t>((ports[0] << 8) | ports[1]);
        dstPort = static_cast<uint16_t>((ports[2] << 8) | ports[3]);
    }
    Ptr<Ipv4Route> route =
        LookupFlow(header.GetSource(), header.GetDestination(), protocol, srcPort, dstPort);
    if (!route)
    {
        return false;
    }
    ucb(route, p, header);
    return true;
}

void
FlowHashEcmpRouting::SetIpv4(Ptr<Ipv4> ipv4)
{
    m_ipv4 = ipv4;
    Ipv4GlobalRouting::SetIpv4(ipv4);
}

void
FlowHashEcmpRouting::DoDispose()
{
    m_ipv4 = nullptr;
    m_table.clear();
    m_candidates.clear();
    Ipv4GlobalRouting::DoDispose();
}

void
FlowHashEcmpRouting::NotifyInterfaceUp(uint32_t interface)
{
    m_tableValid = false;
    Ipv4GlobalRouting::NotifyInterfaceUp(interface);
}

void
FlowHashEcmpRouting::NotifyInterfaceDown(uint32_t interface)
{
    m_tableValid = false;
    Ipv4GlobalRouting::NotifyInterfaceDown(interface);
}

} // namespace ns3
