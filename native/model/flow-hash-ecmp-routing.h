/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Global routing with equal-cost multipath chosen per flow (a hash of the
 * 5-tuple), as datacenter switches do it; ns-3.44 only spreads per packet.
 */
#ifndef WORMHOLE_FLOW_HASH_ECMP_ROUTING_H
#define WORMHOLE_FLOW_HASH_ECMP_ROUTING_H

#include "ns3/ipv4-global-routing.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ns3
{

/**
 * @brief Ipv4GlobalRouting whose forwarding picks one of the equal-cost
 * routes by a hash of (source, destination, protocol, source port,
 * destination port) and the node id.
 *
 * Every packet of a flow takes the same path, different flows spread over the
 * paths, and asking for a route has no side effect (no random stream), so the
 * path of a flow can be derived before and while it runs. Routes are computed
 * by GlobalRouteManager as for Ipv4GlobalRouting and the candidates are the
 * ones it would consider (host routes, else matching network routes; AS
 * external routes count as network routes). The table and the candidates of
 * each destination are cached; the cache is dropped whenever the routing
 * table size changes or an interface goes up or down.
 *
 * Locally originated packets (RouteOutput) choose by destination and protocol
 * only, since their ports are not always known when a socket asks for a route;
 * hosts with a single uplink, the usual case, are unaffected.
 */
class FlowHashEcmpRouting : public Ipv4GlobalRouting
{
  public:
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
    void SetIpv4(Ptr<Ipv4> ipv4) override;

    /**
     * The route this node forwards a packet of the given flow on, exactly as
     * RouteInput would choose it; nullptr if there is none.
     */
    Ptr<Ipv4Route> LookupFlow(Ipv4Address src,
                              Ipv4Address dst,
                              uint8_t protocol,
                              uint16_t srcPort,
                              uint16_t dstPort);

    /** @return the number of equal-cost routes towards a destination. */
    uint32_t GetNEqualCostRoutes(Ipv4Address dst);

  private:
    /** One way out: what an Ipv4Route is made of. */
    struct Candidate
    {
        uint32_t interface;
        Ipv4Address gateway;
    };

    /** A copy of one routing-table entry, so lookups do not walk the table's lists. */
    struct Entry
    {
        bool host;
        Ipv4Address dest;
        Ipv4Mask mask;
        Candidate way;
    };

    /** The equal-cost candidates towards dst, in routing-table order (cached). */
    const std::vector<Candidate>& Candidates(Ipv4Address dst);
    void DoDispose() override;
    Ptr<Ipv4Route> Select(Ipv4Address dst, uint32_t hash, Ptr<NetDevice> oif);
    uint32_t Hash(Ipv4Address src,
                  Ipv4Address dst,
                  uint8_t protocol,
                  uint16_t srcPort,
                  uint16_t dstPort) const;

    Ptr<Ipv4> m_ipv4; //!< the base class keeps its own copy private
    mutable int64_t m_nodeId{-1};
    std::vector<Entry> m_table;
    bool m_tableValid{false};
    std::unordered_map<uint32_t, std::vector<Candidate>> m_candidates;
};

} // namespace ns3

#endif /* WORMHOLE_FLOW_HASH_ECMP_ROUTING_H */
