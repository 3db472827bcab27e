/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef FLOW_HASH_ECMP_ROUTING_HELPER_H
#define FLOW_HASH_ECMP_ROUTING_HELPER_H

#include "ns3/ipv4-routing-helper.h"
#include "ns3/object-factory.h"

#include <string>

namespace ns3
{

/**
 * @brief Installs FlowHashEcmpRouting, like Ipv4GlobalRoutingHelper installs
 * Ipv4GlobalRouting: pass it to InternetStackHelper::SetRoutingHelper (alone
 * or in an Ipv4ListRoutingHelper), then fill the tables with
 * Ipv4GlobalRoutingHelper::PopulateRoutingTables().
 */
class FlowHashEcmpRoutingHelper : public Ipv4RoutingHelper
{
  public:
    FlowHashEcmpRoutingHelper();

    FlowHashEcmpRoutingHelper* Copy() const override;
    Ptr<Ipv4RoutingProtocol> Create(Ptr<Node> node) const override;

    /**
     * @brief Set an attribute of every FlowHashEcmpRouting created from now on.
     * @param name attribute name, e.g. "HashSeed"
     * @param value attribute value
     */
    void SetAttribute(std::string name, const AttributeValue& value);

  private:
    ObjectFactory m_factory; //!< makes the routing objects
};

} // namespace ns3

#endif /* FLOW_HASH_ECMP_ROUTING_HELPER_H */
