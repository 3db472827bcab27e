/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-int-header.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaIntHeader);

namespace
{
constexpr uint32_t QUEUE_UNIT_BYTES = 32;
constexpr uint32_t QUEUE_FIELD_MAX = (1u << 20) - 1;
constexpr uint64_t RATE_UNIT_BPS = 1000000000;
constexpr uint32_t RATE_FIELD_MAX = (1u << 12) - 1;
constexpr uint32_t HOP_BYTES = 12;
} // namespace

TypeId
RdmaIntHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaIntHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<RdmaIntHeader>();
    return tid;
}

TypeId
RdmaIntHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

RdmaIntHeader::RdmaIntHeader()
    : m_nHops(0),
      m_hops{}
{
}

void
RdmaIntHeader::PushHop(Time now, uint64_t txBytes, uint64_t queueBytes, DataRate rate)
{
    if (m_nHops >= MAX_HOPS)
    {
        return;
    }
    uint64_t queueUnits = std::min<uint64_t>(queueBytes / QUEUE_UNIT_BYTES, QUEUE_FIELD_MAX);
    uint64_t rateUnits = std::min<uint64_t>(rate.GetBitRate() / RATE_UNIT_BPS, RATE_FIELD_MAX);
    m_hops[m_nHops++] = {static_cast<uint32_t>(now.GetNanoSeconds()),
                         static_cast<uint32_t>(txBytes),
                         static_cast<uint32_t>(queueUnits * QUEUE_UNIT_BYTES),
                         rateUnits * RATE_UNIT_BPS};
}

uint32_t
RdmaIntHeader::GetNHops() const
{
    return m_nHops;
}

RdmaIntHeader::Hop
RdmaIntHeader::GetHop(uint32_t i) const
{
    NS_ABORT_MSG_IF(i >= m_nHops, "INT hop " << i << " of " << uint32_t(m_nHops));
    return m_hops[i];
}

uint32_t
RdmaIntHeader::GetSerializedSize() const
{
    return 2 + MAX_HOPS * HOP_BYTES;
}

void
RdmaIntHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteU8(m_nHops);
    start.WriteU8(0);
    for (const Hop& hop : m_hops)
    {
        start.WriteHtonU32(hop.timeNs);
        start.WriteHtonU32(hop.txBytes);
        uint32_t queueUnits = hop.queueBytes / QUEUE_UNIT_BYTES;
        uint32_t rateUnits = static_cast<uint32_t>(hop.rateBps / RATE_UNIT_BPS);
        start.WriteHtonU32((queueUnits << 12) | rateUnits);
    }
}

uint32_t
RdmaIntHeader::Deserialize(Buffer::Iterator start)
{
    m_nHops = std::min<uint8_t>(start.ReadU8(), MAX_HOPS);
    start.ReadU8();
    for (Hop& hop : m_hops)
    {
        hop.timeNs = start.ReadNtohU32();
        hop.txBytes = start.ReadNtohU32();
        uint32_t word = start.ReadNtohU32();
        hop.queueBytes = (word >> 12) * QUEUE_UNIT_BYTES;
        hop.rateBps = uint64_t(word & RATE_FIELD_MAX) * RATE_UNIT_BPS;
    }
    return GetSerializedSize();
}

void
RdmaIntHeader::Print(std::ostream& os) const
{
    os << "INT hops=" << uint32_t(m_nHops);
    for (uint32_t i = 0; i < m_nHops; ++i)
    {
        os << " [t=" << m_hops[i].timeNs << " tx=" << m_hops[i].txBytes
           << " q=" << m_hops[i].queueBytes << " B=" << m_hops[i].rateBps << "]";
    }
}

} // namespace ns3
