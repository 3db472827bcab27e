/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The FlowTracker's route discovery: the links a flow's packets cross, from
 * the routing tables, without side effects.
 */
#ifndef WORMHOLE_ROUTE_WALKER_H
#define WORMHOLE_ROUTE_WALKER_H

#include "flow-registry.h"
#include "route-oracle.h"
#include "tracked-flow.h"

#include "ns3/ipv4-address.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <utility>
#include <vector>

namespace ns3
{

class Node;

/**
 * @brief Walks a flow's route hop by hop, asking each node's routing
 * protocol as its packets would (RouteOutput, with no packet), and a
 * registered RouteOracle on transit nodes whose routing hashes flows.
 *
 * A link is an egress port, node << 16 | device index. A route that cannot be
 * known without side effects (random ECMP, on-demand routing protocols, a
 * loop) is empty.
 */
class RouteWalker : public Object
{
  public:
    static constexpr uint8_t TCP_PROTOCOL = 6;  //!< IPv4 protocol number of TCP
    static constexpr uint8_t UDP_PROTOCOL = 17; //!< IPv4 protocol number of UDP

    /** A route: the data path's links and the reverse (ACK) path's (empty for UDP). */
    using Paths = std::pair<std::vector<uint64_t>, std::vector<uint64_t>>;

    static TypeId GetTypeId();
    /** Make one of each registered RouteOracle. */
    RouteWalker();

    /**
     * @return the flow's source address: the one its socket bound, or, before it
     * connects (or if a memo replay never lets it), its node's first address.
     */
    static Ipv4Address SourceAddress(const TrackedFlow& flow);

    /**
     * @return the planned route of a flow that has not started, from the
     * routing tables as they are now; the actual one of a started flow.
     */
    Paths PlannedRoute(const FlowRegistry::RegisteredFlow& flow) const;
    /**
     * @return the data path (first) and reverse path (second, if it has one)
     * of a flow whose packets leave from @p src; nothing if either is unknown.
     */
    Paths Route(const TrackedFlow& flow, Ipv4Address src) const;
    /**
     * @return the links (data path, then reverse path for TCP) a flow between
     * two nodes with these ports would use, from their first addresses.
     */
    std::vector<uint64_t> RouteBetween(Ptr<Node> src,
                                       Ptr<Node> dst,
                                       uint16_t srcPort,
                                       uint16_t dstPort,
                                       bool tcp) const;

  private:
    /**
     * @return the egress ports a packet of the given 5-tuple crosses from
     * `from` to `dst`, as the routing protocols would choose them, or empty if
     * that cannot be known without side effects. Transit nodes whose routing
     * a RouteOracle knows (per-flow ECMP) are asked for the flow's own route
     * (by its ports).
     */
    std::vector<uint64_t> Walk(Ptr<Node> from,
                               Ipv4Address src,
                               Ipv4Address dst,
                               uint8_t protocol,
                               uint16_t srcPort,
                               uint16_t dstPort) const;

    std::vector<Ptr<RouteOracle>> m_routeOracles; //!< one of each registered type
};

} // namespace ns3

#endif /* WORMHOLE_ROUTE_WALKER_H */
