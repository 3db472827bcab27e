/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Extension point of the FlowTracker: answers the route of one flow through
 * a routing protocol that routes each flow on a path of its own.
 */
#ifndef WORMHOLE_ROUTE_ORACLE_H
#define WORMHOLE_ROUTE_ORACLE_H

#include "ns3/ipv4-address.h"
#include "ns3/ipv4-route.h"
#include "ns3/ipv4-routing-protocol.h"
#include "extension-registry.h"

#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/type-id.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * @brief Tells the route a flow's own packets take through a routing protocol
 * that hashes flows (per-flow ECMP), without side effects.
 *
 * The FlowTracker learns a flow's path by asking each hop's routing protocol
 * for a route. A protocol that spreads flows by their 5-tuple must be asked
 * with the flow's ports, which RouteOutput cannot carry; the adapter module
 * of such a protocol registers a RouteOracle subclass that recognises it
 * (Knows) and asks it properly (RouteFlow). The source host is always asked
 * through RouteOutput, as its packets are routed. Registered like a
 * FlowSource: Register(MyOracle::GetTypeId()) from a static initializer.
 */
class RouteOracle : public Object, public ExtensionRegistry<RouteOracle>
{
  public:
    static TypeId GetTypeId();
    ~RouteOracle() override;

    /** @return true if @p routing (a node's protocol, maybe a list) routes flows this oracle can tell. */
    virtual bool Knows(Ptr<Ipv4RoutingProtocol> routing) const = 0;

    /**
     * @return the route @p routing (which Knows) forwards a packet of this
     * flow on, or nullptr if the destination is unreachable.
     */
    virtual Ptr<Ipv4Route> RouteFlow(Ptr<Ipv4RoutingProtocol> routing,
                                     Ipv4Address src,
                                     Ipv4Address dst,
                                     uint8_t protocol,
                                     uint16_t srcPort,
                                     uint16_t dstPort) const = 0;
};

} // namespace ns3

#endif /* WORMHOLE_ROUTE_ORACLE_H */
