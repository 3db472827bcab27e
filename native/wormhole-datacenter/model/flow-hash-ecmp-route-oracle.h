/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Lets the FlowTracker learn a flow's own path through flow-hash ECMP routing.
 */
#ifndef WORMHOLE_FLOW_HASH_ECMP_ROUTE_ORACLE_H
#define WORMHOLE_FLOW_HASH_ECMP_ROUTE_ORACLE_H

#include "ns3/route-oracle.h"

namespace ns3
{

class FlowHashEcmpRouting;

/**
 * @brief The RouteOracle of FlowHashEcmpRouting (alone or in an
 * Ipv4ListRouting): a flow's route on a transit node is
 * FlowHashEcmpRouting::LookupFlow with the flow's 5-tuple. Registered with
 * every tracker by this module's static initializer.
 */
class FlowHashEcmpRouteOracle : public RouteOracle
{
  public:
    static TypeId GetTypeId();
    FlowHashEcmpRouteOracle();
    ~FlowHashEcmpRouteOracle() override;

    bool Knows(Ptr<Ipv4RoutingProtocol> routing) const override;
    Ptr<Ipv4Route> RouteFlow(Ptr<Ipv4RoutingProtocol> routing,
                             Ipv4Address src,
                             Ipv4Address dst,
                             uint8_t protocol,
                             uint16_t srcPort,
                             uint16_t dstPort) const override;

    /** @return the flow-hash ECMP routing of a node (alone or in a list), or nullptr. */
    static Ptr<FlowHashEcmpRouting> Find(Ptr<Ipv4RoutingProtocol> routing);
};

} // namespace ns3

#endif /* WORMHOLE_FLOW_HASH_ECMP_ROUTE_ORACLE_H */
