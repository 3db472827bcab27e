/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-hash-ecmp-routing-helper.h"

#include "ns3/flow-hash-ecmp-routing.h"
#include "ns3/global-router-interface.h"
#include "ns3/node.h"

namespace ns3
{

FlowHashEcmpRoutingHelper::FlowHashEcmpRoutingHelper()
{
    m_factory.SetTypeId(FlowHashEcmpRouting::GetTypeId());
}

FlowHashEcmpRoutingHelper*
FlowHashEcmpRoutingHelper::Copy() const
{
    return new FlowHashEcmpRoutingHelper(*this);
}

void
FlowHashEcmpRoutingHelper::SetAttribute(std::string name, const AttributeValue& value)
{
    m_factory.Set(name, value);
}

Ptr<Ipv4RoutingProtocol>
FlowHashEcmpRoutingHelper::Create(Ptr<Node> node) const
{
    // what Ipv4GlobalRoutingHelper does, so GlobalRouteManager fills our tables
    Ptr<GlobalRouter> router = CreateObject<GlobalRouter>();
    node->AggregateObject(router);
    Ptr<FlowHashEcmpRouting> routing = m_factory.Create<FlowHashEcmpRouting>();
    router->SetRoutingProtocol(routing);
    return routing;
}

} // namespace ns3
