/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Global routing with equal-cost multipath chosen per flow (a hash of the
 * 5-tuple), as datacenter switches do it; ns-3.44 only spreads per packet.
 */
#ifndef FLOW_HASH_ECMP_ROUTING_H
#define FLOW_HASH_ECMP_ROUTING_H

#include "ns3/ipv4-global-routing.h"

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * @brief Ipv4GlobalRouting whose forwarding picks one of the equal-cost
 * routes by a hash of (source, destination, protocol, source port,
 * destination port), salted with the node id and the HashSeed attribute.
 *
 * Every packet of a flow takes the same path, different flows spread over the
 * paths, and asking for a route has no side effect (no random stream), so the
 * path of a flow can be learnt without sending a packet: call LookupFlow on
 * the source host, then on each next hop, until the destination's node.
 *
 * The candidates are exactly the routes Ipv4GlobalRouting's lookup considers:
 * all host routes to the destination; if none, all network routes that match
 * it (in table order, whatever their prefix length, as ns-3 does); if none,
 * the first matching AS-external route. GlobalRouteManager fills the table
 * (Ipv4GlobalRoutingHelper::PopulateRoutingTables), which lists a route once
 * per equal-cost next hop.
 *
 * The table is indexed on first use, so a lookup costs a few hash-map
 * probes instead of ns-3's walk over every route. The index is rebuilt when
 * the number of routes changes, an interface goes up or down or an address
 * is added or removed (the events on which ns-3 recomputes global routes).
 * A script that recomputes routes by hand with the same number of routes
 * (e.g. RecomputeRoutingTables after changing a metric) calls FlushCache.
 *
 * A route carries the packet's destination (Ipv4GlobalRouting puts the
 * matched entry's there, the network address for a network route).
 *
 * Locally originated packets (RouteOutput) are spread by destination only:
 * a TCP socket asks for its route, and so fixes its source address, before
 * its ports and protocol are set, and its later packets must leave through
 * the same interface. Hosts with a single uplink, the usual case, are not
 * affected. Fragments other than an unfragmented datagram are hashed without
 * ports (only the first fragment carries them).
 */
class FlowHashEcmpRouting : public Ipv4GlobalRouting
{
  public:
    /**
     * @brief Get the type ID.
     * @return the object TypeId
     */
    static TypeId GetTypeId();

    FlowHashEcmpRouting();

    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p,
                               const Ipv4Header& header,
                               Ptr<NetDevice> oif,
                               Socket::SocketErrno& sockerr) override;
    bool RouteInput(Ptr<const Packet> p,
                    const Ipv4Header& header,
                    Ptr<const NetDevice> idev,
                    const UnicastForwardCallback& ucb,
                    const MulticastForwardCallback& mcb,
                    const LocalDeliverCallback& lcb,
                    const ErrorCallback& ecb) override;
    void NotifyInterfaceUp(uint32_t interface) override;
    void NotifyInterfaceDown(uint32_t interface) override;
    void NotifyAddAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void NotifyRemoveAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void SetIpv4(Ptr<Ipv4> ipv4) override;

    /**
     * @brief The route this node gives a packet of a flow, without side effects.
     *
     * On the node that owns `src` this is the route RouteOutput gives the
     * flow's packets (with no output interface requested); on any other node
     * it is the route RouteInput forwards them on. A tracker learns the
     * path of a flow by calling it on every hop.
     *
     * @param src source address of the flow
     * @param dst destination address of the flow
     * @param protocol IP protocol number (6 TCP, 17 UDP)
     * @param srcPort transport source port (0 for other protocols)
     * @param dstPort transport destination port (0 for other protocols)
     * @return the route, or nullptr if the destination is unreachable
     */
    Ptr<Ipv4Route> LookupFlow(Ipv4Address src,
                              Ipv4Address dst,
                              uint8_t protocol,
                              uint16_t srcPort,
                              uint16_t dstPort);

    /**
     * @param dst a destination address
     * @return the number of equal-cost routes towards dst
     */
    uint32_t GetNEqualCostRoutes(Ipv4Address dst);

    /** @brief Drop the index of the routing table; the next lookup rebuilds it. */
    void FlushCache();

  private:
    /** One way out: what an Ipv4Route is made of. */
    struct Way
    {
        uint32_t interface;     //!< output interface
        Ipv4Address gateway;    //!< next hop (0.0.0.0 when directly connected)
        Ipv4Address source;     //!< first address of the output interface
        Ptr<NetDevice> device;  //!< output device
    };

    /** The routing table arranged for lookups, and what this node answers locally. */
    struct Index
    {
        std::size_t nRoutes{0};                                          //!< table size indexed
        std::vector<Way> ways;                                           //!< per route, table order
        std::unordered_map<uint32_t, std::vector<uint32_t>> hostRoutes;  //!< address -> route ids
        /** per network mask: network address -> route ids */
        std::vector<std::pair<Ipv4Mask, std::unordered_map<uint32_t, std::vector<uint32_t>>>>
            networkRoutes;
        std::vector<std::pair<Ipv4Mask, Ipv4Address>> externalRoutes; //!< ids follow the networks
        std::unordered_set<uint32_t> localAddresses; //!< interface and broadcast addresses
        std::unordered_map<uint32_t, std::vector<Way>> waysTo; //!< destination -> candidates
    };

    void DoDispose() override;

    /** @return the index of the current table, rebuilt if the table changed. */
    Index& CurrentIndex();
    /** Rebuild m_index from the routing table and the interfaces. */
    void BuildIndex();
    /** @return the equal-cost ways towards dst, through oif only unless it is null. */
    std::vector<Way> CollectWays(Ipv4Address dst, Ptr<NetDevice> oif);
    /** @return the equal-cost ways towards dst through any interface (cached). */
    const std::vector<Way>& WaysTo(Ipv4Address dst);
    /** @return true if a packet to dst that arrived on iif is delivered to this node. */
    bool IsForMe(Ipv4Address dst, uint32_t iif);
    /** @return the hash a flow's packets are spread by on this node. */
    uint32_t Hash(Ipv4Address src,
                  Ipv4Address dst,
                  uint8_t protocol,
                  uint16_t srcPort,
                  uint16_t dstPort);
    /** @return a route towards dst through the way picked by hash. */
    static Ptr<Ipv4Route> Pick(Ipv4Address dst, const std::vector<Way>& ways, uint32_t hash);

    Ptr<Ipv4> m_ipv4;        //!< the base class keeps its own copy private
    uint32_t m_hashSeed;     //!< HashSeed attribute
    std::optional<uint32_t> m_nodeId; //!< salts the hash so that tiers do not pick alike
    bool m_indexValid{false}; //!< false until the index matches the table
    Index m_index;           //!< the table arranged for lookups
};

} // namespace ns3

#endif /* FLOW_HASH_ECMP_ROUTING_H */
