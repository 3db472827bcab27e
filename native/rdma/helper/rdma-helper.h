/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Installs the RoCEv2 host stack (RdmaNic) on nodes.
 */
#ifndef RDMA_HELPER_H
#define RDMA_HELPER_H

#include "ns3/attribute.h"
#include "ns3/node-container.h"
#include "ns3/object-factory.h"

#include <string>

namespace ns3
{

class NetDevice;
class RdmaNic;

/**
 * @brief Gives hosts an RdmaNic.
 *
 * Call after the Internet stack is installed and addresses are assigned
 * (Ipv4AddressHelper::Assign installs a default queue disc that the NIC
 * replaces). The NIC is aggregated to the node: `node->GetObject<RdmaNic>()`.
 * Congestion-control parameters are attributes of the congestion-control
 * type, e.g. Config::SetDefault("ns3::RdmaDcqcn::RateAi", ...).
 */
class RdmaHelper
{
  public:
    RdmaHelper();

    /** Set an attribute of every RdmaNic this helper creates (e.g. "Mtu", "CongestionControl"). */
    void SetNicAttribute(const std::string& name, const AttributeValue& value);

    /** Install on each node, bound to its only non-loopback device. */
    void Install(NodeContainer nodes) const;
    /** Install on @p node, bound to its only non-loopback device. */
    Ptr<RdmaNic> Install(Ptr<Node> node) const;
    /** Install on the node of @p device, bound to @p device. */
    Ptr<RdmaNic> Install(Ptr<NetDevice> device) const;

  private:
    ObjectFactory m_nicFactory;
};

} // namespace ns3

#endif /* RDMA_HELPER_H */
