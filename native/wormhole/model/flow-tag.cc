/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-tag.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FlowTag);

TypeId
FlowTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowTag")
                            .SetParent<Tag>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<FlowTag>();
    return tid;
}

TypeId
FlowTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

FlowTag::FlowTag()
    : m_tag(0)
{
}

FlowTag::FlowTag(uint32_t tag)
    : m_tag(tag)
{
}

uint32_t
FlowTag::GetFlowTag() const
{
    return m_tag;
}

uint32_t
FlowTag::GetSerializedSize() const
{
    return sizeof(uint32_t);
}

void
FlowTag::Serialize(TagBuffer buffer) const
{
    buffer.WriteU32(m_tag);
}

void
FlowTag::Deserialize(TagBuffer buffer)
{
    m_tag = buffer.ReadU32();
}

void
FlowTag::Print(std::ostream& os) const
{
    os << "flow-tag=" << m_tag;
}

} // namespace ns3
