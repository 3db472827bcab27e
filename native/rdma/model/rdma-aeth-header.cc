/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-aeth-header.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaAethHeader);

namespace
{
constexpr uint8_t SYNDROME_ACK = 0x1F;
constexpr uint8_t SYNDROME_NAK_SEQUENCE = 0x60;
constexpr uint32_t MSN_MASK = 0xFFFFFF;
} // namespace

TypeId
RdmaAethHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaAethHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<RdmaAethHeader>();
    return tid;
}

TypeId
RdmaAethHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

RdmaAethHeader::RdmaAethHeader()
    : m_syndrome(SYNDROME_ACK),
      m_msn(0)
{
}

void
RdmaAethHeader::SetNak(bool nak)
{
    m_syndrome = nak ? SYNDROME_NAK_SEQUENCE : SYNDROME_ACK;
}

bool
RdmaAethHeader::IsNak() const
{
    return m_syndrome == SYNDROME_NAK_SEQUENCE;
}

void
RdmaAethHeader::SetMsn(uint32_t msn)
{
    m_msn = msn & MSN_MASK;
}

uint32_t
RdmaAethHeader::GetMsn() const
{
    return m_msn;
}

uint32_t
RdmaAethHeader::GetSerializedSize() const
{
    return 4;
}

void
RdmaAethHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteHtonU32((uint32_t(m_syndrome) << 24) | m_msn);
}

uint32_t
RdmaAethHeader::Deserialize(Buffer::Iterator start)
{
    uint32_t word = start.ReadNtohU32();
    m_syndrome = word >> 24;
    m_msn = word & MSN_MASK;
    return 4;
}

void
RdmaAethHeader::Print(std::ostream& os) const
{
    os << (IsNak() ? "NAK" : "ACK") << " msn=" << m_msn;
}

} // namespace ns3
