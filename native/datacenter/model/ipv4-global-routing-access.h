/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The private route lists of ns-3.44's Ipv4GlobalRouting, which
 * FlowHashEcmpRouting indexes in one pass. The access lives in
 * ipv4-global-routing-access.cc alone because it ties the module to one
 * ns-3 version's member layout.
 */
#ifndef IPV4_GLOBAL_ROUTING_ACCESS_H
#define IPV4_GLOBAL_ROUTING_ACCESS_H

#include <list>

namespace ns3
{

class Ipv4GlobalRouting;
class Ipv4RoutingTableEntry;

namespace datacenter
{

/** The route lists of Ipv4GlobalRouting, in the order its lookup consults them. */
struct GlobalRouteLists
{
    const std::list<Ipv4RoutingTableEntry*>& host;     //!< routes to single addresses
    const std::list<Ipv4RoutingTableEntry*>& network;  //!< routes to networks
    const std::list<Ipv4RoutingTableEntry*>& external; //!< AS-external routes (first match wins)
};

/**
 * @return the route lists of a global routing table, so it can be read in
 * one pass (GetRoute(i) walks a list from its start: reading a table of n
 * routes through it costs n^2/2 steps).
 */
GlobalRouteLists GlobalRoutes(const Ipv4GlobalRouting& routing);

} // namespace datacenter
} // namespace ns3

#endif /* IPV4_GLOBAL_ROUTING_ACCESS_H */
