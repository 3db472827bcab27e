/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The attribution tag of a tracked flow, carried by each of its packets.
 */
#ifndef WORMHOLE_FLOW_TAG_H
#define WORMHOLE_FLOW_TAG_H

#include "ns3/tag.h"

#include <cstdint>

namespace ns3
{

/**
 * @brief Packet tag naming the flow a packet belongs to (its attribution tag).
 *
 * The flow tracker adds it where a tracked flow's packet (data or ACK)
 * leaves its host, and reads it where a device starts transmitting a packet,
 * so that the events a transmission schedules carry the packet's own flow
 * rather than the flow whose transmission happened to end just before.
 */
class FlowTag : public Tag
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;

    FlowTag();
    explicit FlowTag(uint32_t tag);

    uint32_t GetFlowTag() const;

    uint32_t GetSerializedSize() const override;
    void Serialize(TagBuffer buffer) const override;
    void Deserialize(TagBuffer buffer) override;
    void Print(std::ostream& os) const override;

  private:
    uint32_t m_tag;
};

} // namespace ns3

#endif /* WORMHOLE_FLOW_TAG_H */
