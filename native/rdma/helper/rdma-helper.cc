/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-helper.h"

#include "ns3/rdma-nic.h"

#include "ns3/abort.h"
#include "ns3/loopback-net-device.h"
#include "ns3/net-device.h"
#include "ns3/node.h"

namespace ns3
{

RdmaHelper::RdmaHelper()
{
    m_nicFactory.SetTypeId(RdmaNic::GetTypeId());
}

void
RdmaHelper::SetNicAttribute(const std::string& name, const AttributeValue& value)
{
    m_nicFactory.Set(name, value);
}

void
RdmaHelper::Install(NodeContainer nodes) const
{
    for (auto node = nodes.Begin(); node != nodes.End(); ++node)
    {
        Install(*node);
    }
}

Ptr<RdmaNic>
RdmaHelper::Install(Ptr<Node> node) const
{
    Ptr<NetDevice> uplink;
    uint32_t links = 0;
    for (uint32_t i = 0; i < node->GetNDevices(); ++i)
    {
        Ptr<NetDevice> device = node->GetDevice(i);
        if (!DynamicCast<LoopbackNetDevice>(device))
        {
            uplink = device;
            ++links;
        }
    }
    NS_ABORT_MSG_IF(links != 1,
                    "RDMA on node " << node->GetId() << ": it has " << links
                                    << " devices; install on one device instead");
    return Install(uplink);
}

Ptr<RdmaNic>
RdmaHelper::Install(Ptr<NetDevice> device) const
{
    Ptr<Node> node = device->GetNode();
    NS_ABORT_MSG_IF(node->GetObject<RdmaNic>(),
                    "RDMA on node " << node->GetId() << ": it has an RdmaNic already");
    Ptr<RdmaNic> nic = m_nicFactory.Create<RdmaNic>();
    node->AggregateObject(nic);
    nic->Setup(device);
    return nic;
}

} // namespace ns3
