/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-hash-ecmp-route-oracle.h"

#include "ns3/flow-hash-ecmp-routing.h"
#include "ns3/ipv4-list-routing.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FlowHashEcmpRouteOracle);

namespace
{
/** Every FlowTracker asks flow-hash ECMP routing for flows' own routes once this module is loaded. */
struct RegisterFlowHashEcmpRouteOracle
{
    RegisterFlowHashEcmpRouteOracle()
    {
        RouteOracle::Register(FlowHashEcmpRouteOracle::GetTypeId());
    }
} g_registerFlowHashEcmpRouteOracle;
} // namespace

TypeId
FlowHashEcmpRouteOracle::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowHashEcmpRouteOracle")
                            .SetParent<RouteOracle>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<FlowHashEcmpRouteOracle>();
    return tid;
}

FlowHashEcmpRouteOracle::FlowHashEcmpRouteOracle() = default;

FlowHashEcmpRouteOracle::~FlowHashEcmpRouteOracle() = default;

Ptr<FlowHashEcmpRouting>
FlowHashEcmpRouteOracle::Find(Ptr<Ipv4RoutingProtocol> routing)
{
    if (auto list = DynamicCast<Ipv4ListRouting>(routing))
    {
        for (uint32_t i = 0; i < list->GetNRoutingProtocols(); ++i)
        {
            int16_t priority;
            if (auto hashed = Find(list->GetRoutingProtocol(i, priority)))
            {
                return hashed;
            }
        }
        return nullptr;
    }
    return DynamicCast<FlowHashEcmpRouting>(routing);
}

bool
FlowHashEcmpRouteOracle::Knows(Ptr<Ipv4RoutingProtocol> routing) const
{
    return Find(routing) != nullptr;
}

Ptr<Ipv4Route>
FlowHashEcmpRouteOracle::RouteFlow(Ptr<Ipv4RoutingProtocol> routing,
                                   Ipv4Address src,
                                   Ipv4Address dst,
                                   uint8_t protocol,
                                   uint16_t srcPort,
                                   uint16_t dstPort) const
{
    return Find(routing)->LookupFlow(src, dst, protocol, srcPort, dstPort);
}

} // namespace ns3
