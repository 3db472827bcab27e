/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-hash-ecmp-routing.h"

#include "ipv4-global-routing-access.h"

#include "ns3/hash.h"
#include "ns3/ipv4-route.h"
#include "ns3/ipv4-routing-table-entry.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/udp-l4-protocol.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowHashEcmpRouting");
NS_OBJECT_ENSURE_REGISTERED(FlowHashEcmpRouting);

namespace
{

/** @return the transport ports of a packet whose IPv4 header was removed, or zeros. */
std::pair<uint16_t, uint16_t>
TransportPorts(Ptr<const Packet> p, const Ipv4Header& header)
{
    uint8_t protocol = header.GetProtocol();
    bool carriesPorts =
        protocol == TcpL4Protocol::PROT_NUMBER || protocol == UdpL4Protocol::PROT_NUMBER;
    bool unfragmented = header.GetFragmentOffset() == 0 && header.IsLastFragment();
    if (!carriesPorts || !unfragmented || p->GetSize() < 4)
    {
        return {0, 0};
    }
    // TCP and UDP headers both start with the two ports, in network byte order
    uint8_t ports[4];
    p->CopyData(ports, 4);
    return {static_cast<uint16_t>((ports[0] << 8) | ports[1]),
            static_cast<uint16_t>((ports[2] << 8) | ports[3])};
}

} // namespace

TypeId
FlowHashEcmpRouting::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FlowHashEcmpRouting")
            .SetParent<Ipv4GlobalRouting>()
            .SetGroupName("Datacenter")
            .AddConstructor<FlowHashEcmpRouting>()
            .AddAttribute("HashSeed",
                          "Mixed into every flow hash, like a switch's ECMP hash seed: another "
                          "seed places the flows on other paths.",
                          UintegerValue(0),
                          MakeUintegerAccessor(&FlowHashEcmpRouting::m_hashSeed),
                          MakeUintegerChecker<uint32_t>());
    return tid;
}

FlowHashEcmpRouting::FlowHashEcmpRouting()
    : m_hashSeed(0)
{
}

void
FlowHashEcmpRouting::FlushCache()
{
    m_indexValid = false;
}

FlowHashEcmpRouting::Index&
FlowHashEcmpRouting::CurrentIndex()
{
    if (!m_indexValid || m_index.nRoutes != GetNRoutes())
    {
        BuildIndex();
    }
    return m_index;
}

void
FlowHashEcmpRouting::BuildIndex()
{
    NS_LOG_FUNCTION(this);
    m_index = Index();
    datacenter::GlobalRouteLists lists = datacenter::GlobalRoutes(*this);
    auto addWay = [this](const Ipv4RoutingTableEntry* route) {
        uint32_t interface = route->GetInterface();
        m_index.ways.push_back({interface,
                                route->GetGateway(),
                                m_ipv4->GetAddress(interface, 0).GetLocal(),
                                m_ipv4->GetNetDevice(interface)});
        return static_cast<uint32_t>(m_index.ways.size() - 1);
    };
    for (const Ipv4RoutingTableEntry* route : lists.host)
    {
        m_index.hostRoutes[route->GetDest().Get()].push_back(addWay(route));
    }
    for (const Ipv4RoutingTableEntry* route : lists.network)
    {
        Ipv4Mask mask = route->GetDestNetworkMask();
        auto group = std::find_if(m_index.networkRoutes.begin(),
                                  m_index.networkRoutes.end(),
                                  [&mask](const auto& g) { return g.first == mask; });
        if (group == m_index.networkRoutes.end())
        {
            group = m_index.networkRoutes.insert(group, {mask, {}});
        }
        uint32_t network = route->GetDestNetwork().CombineMask(mask).Get();
        group->second[network].push_back(addWay(route));
    }
    for (const Ipv4RoutingTableEntry* route : lists.external)
    {
        m_index.externalRoutes.emplace_back(route->GetDestNetworkMask(), route->GetDestNetwork());
        addWay(route);
    }
    m_index.nRoutes = m_index.ways.size();
    for (uint32_t i = 0; i < m_ipv4->GetNInterfaces(); ++i)
    {
        for (uint32_t j = 0; j < m_ipv4->GetNAddresses(i); ++j)
        {
            Ipv4InterfaceAddress address = m_ipv4->GetAddress(i, j);
            m_index.localAddresses.insert(address.GetLocal().Get());
            m_index.localAddresses.insert(address.GetBroadcast().Get());
        }
    }
    m_indexValid = true;
}

std::vector<FlowHashEcmpRouting::Way>
FlowHashEcmpRouting::CollectWays(Ipv4Address dst, Ptr<NetDevice> oif)
{
    Index& index = CurrentIndex();
    std::vector<uint32_t> ids;
    auto accept = [&](uint32_t id) {
        if (!oif || index.ways[id].device == oif)
        {
            ids.push_back(id);
        }
    };
    auto host = index.hostRoutes.find(dst.Get());
    if (host != index.hostRoutes.end())
    {
        std::for_each(host->second.begin(), host->second.end(), accept);
    }
    if (ids.empty())
    {
        for (const auto& [mask, networks] : index.networkRoutes)
        {
            auto network = networks.find(dst.CombineMask(mask).Get());
            if (network != networks.end())
            {
                std::for_each(network->second.begin(), network->second.end(), accept);
            }
        }
        std::sort(ids.begin(), ids.end()); // table order, as ns-3 lists them
    }
    if (ids.empty())
    {
        uint32_t firstExternal = index.nRoutes - index.externalRoutes.size();
        for (uint32_t k = 0; k < index.externalRoutes.size() && ids.empty(); ++k)
        {
            const auto& [mask, network] = index.externalRoutes[k];
            if (mask.IsMatch(dst, network))
            {
                accept(firstExternal + k);
            }
        }
    }
    std::vector<Way> ways;
    ways.reserve(ids.size());
    for (uint32_t id : ids)
    {
        ways.push_back(index.ways[id]);
    }
    return ways;
}

const std::vector<FlowHashEcmpRouting::Way>&
FlowHashEcmpRouting::WaysTo(Ipv4Address dst)
{
    Index& index = CurrentIndex();
    auto cached = index.waysTo.find(dst.Get());
    if (cached != index.waysTo.end())
    {
        return cached->second;
    }
    return index.waysTo.emplace(dst.Get(), CollectWays(dst, nullptr)).first->second;
}

bool
FlowHashEcmpRouting::IsForMe(Ipv4Address dst, uint32_t iif)
{
    // the set answers "certainly not" for transit packets without walking
    // every interface; anything it cannot rule out gets the exact answer
    if (!dst.IsMulticast() && !dst.IsBroadcast() &&
        !CurrentIndex().localAddresses.contains(dst.Get()))
    {
        return false;
    }
    return m_ipv4->IsDestinationAddress(dst, iif);
}

uint32_t
FlowHashEcmpRouting::Hash(Ipv4Address src,
                          Ipv4Address dst,
                          uint8_t protocol,
                          uint16_t srcPort,
                          uint16_t dstPort)
{
    if (!m_nodeId)
    {
        m_nodeId = m_ipv4->GetObject<Node>()->GetId();
    }
    std::array<char, 21> key{};
    uint32_t s = src.Get();
    uint32_t d = dst.Get();
    std::memcpy(key.data(), &s, 4);
    std::memcpy(key.data() + 4, &d, 4);
    key[8] = static_cast<char>(protocol);
    std::memcpy(key.data() + 9, &srcPort, 2);
    std::memcpy(key.data() + 11, &dstPort, 2);
    std::memcpy(key.data() + 13, &*m_nodeId, 4);
    std::memcpy(key.data() + 17, &m_hashSeed, 4);
    return Hash32(key.data(), key.size());
}

Ptr<Ipv4Route>
FlowHashEcmpRouting::Pick(Ipv4Address dst, const std::vector<Way>& ways, uint32_t hash)
{
    if (ways.empty())
    {
        return nullptr;
    }
    const Way& way = ways[hash % ways.size()];
    Ptr<Ipv4Route> route = Create<Ipv4Route>();
    route->SetDestination(dst);
    route->SetSource(way.source);
    route->SetGateway(way.gateway);
    route->SetOutputDevice(way.device);
    return route;
}

Ptr<Ipv4Route>
FlowHashEcmpRouting::LookupFlow(Ipv4Address src,
                                Ipv4Address dst,
                                uint8_t protocol,
                                uint16_t srcPort,
                                uint16_t dstPort)
{
    const std::vector<Way>& ways = WaysTo(dst);
    if (m_ipv4->GetInterfaceForAddress(src) >= 0)
    {
        return Pick(dst, ways, Hash(Ipv4Address::GetAny(), dst, 0, 0, 0));
    }
    return Pick(dst, ways, Hash(src, dst, protocol, srcPort, dstPort));
}

uint32_t
FlowHashEcmpRouting::GetNEqualCostRoutes(Ipv4Address dst)
{
    return WaysTo(dst).size();
}

Ptr<Ipv4Route>
FlowHashEcmpRouting::RouteOutput(Ptr<Packet> p,
                                 const Ipv4Header& header,
                                 Ptr<NetDevice> oif,
                                 Socket::SocketErrno& sockerr)
{
    Ipv4Address dst = header.GetDestination();
    if (dst.IsMulticast())
    {
        return nullptr; // as Ipv4GlobalRouting: left to a multicast-capable protocol
    }
    uint32_t hash = Hash(Ipv4Address::GetAny(), dst, 0, 0, 0);
    Ptr<Ipv4Route> route = oif ? Pick(dst, CollectWays(dst, oif), hash) : Pick(dst, WaysTo(dst), hash);
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
    Ipv4Address dst = header.GetDestination();
    if (IsForMe(dst, iif) || !m_ipv4->IsForwarding(iif))
    {
        // local delivery and refusals exactly as Ipv4GlobalRouting does them
        return Ipv4GlobalRouting::RouteInput(p, header, idev, ucb, mcb, lcb, ecb);
    }
    auto [srcPort, dstPort] = TransportPorts(p, header);
    Ptr<Ipv4Route> route =
        Pick(dst, WaysTo(dst), Hash(header.GetSource(), dst, header.GetProtocol(), srcPort, dstPort));
    if (!route)
    {
        return false; // another protocol of a list routing may know the way
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
    m_index = Index();
    m_indexValid = false;
    Ipv4GlobalRouting::DoDispose();
}

void
FlowHashEcmpRouting::NotifyInterfaceUp(uint32_t interface)
{
    FlushCache();
    Ipv4GlobalRouting::NotifyInterfaceUp(interface);
}

void
FlowHashEcmpRouting::NotifyInterfaceDown(uint32_t interface)
{
    FlushCache();
    Ipv4GlobalRouting::NotifyInterfaceDown(interface);
}

void
FlowHashEcmpRouting::NotifyAddAddress(uint32_t interface, Ipv4InterfaceAddress address)
{
    FlushCache();
    Ipv4GlobalRouting::NotifyAddAddress(interface, address);
}

void
FlowHashEcmpRouting::NotifyRemoveAddress(uint32_t interface, Ipv4InterfaceAddress address)
{
    FlushCache();
    Ipv4GlobalRouting::NotifyRemoveAddress(interface, address);
}

} // namespace ns3
