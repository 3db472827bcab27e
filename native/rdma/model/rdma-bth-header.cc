/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-bth-header.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaBthHeader);

namespace
{
constexpr uint16_t DEFAULT_PKEY = 0xFFFF;
constexpr uint8_t ACK_REQUEST_BIT = 0x80;
/** A reserved bit of the byte that holds FECN (0x80) and BECN (0x40). */
constexpr uint32_t TELEMETRY_BIT = 0x20;
constexpr uint32_t SERIALIZED_SIZE = 12;
} // namespace

TypeId
RdmaBthHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaBthHeader")
                            .SetParent<Header>()
                            .SetGroupName("Rdma")
                            .AddConstructor<RdmaBthHeader>();
    return tid;
}

TypeId
RdmaBthHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

RdmaBthHeader::RdmaBthHeader()
    : m_opcode(RC_WRITE_ONLY),
      m_destQp(0),
      m_ackRequest(false),
      m_telemetry(false),
      m_psn(0)
{
}

void
RdmaBthHeader::SetOpcode(Opcode opcode)
{
    m_opcode = opcode;
}

RdmaBthHeader::Opcode
RdmaBthHeader::GetOpcode() const
{
    return m_opcode;
}

bool
RdmaBthHeader::IsData() const
{
    return m_opcode == RC_WRITE_FIRST || m_opcode == RC_WRITE_MIDDLE ||
           m_opcode == RC_WRITE_LAST || m_opcode == RC_WRITE_ONLY;
}

bool
RdmaBthHeader::IsLastOfMessage() const
{
    return m_opcode == RC_WRITE_LAST || m_opcode == RC_WRITE_ONLY;
}

void
RdmaBthHeader::SetDestQp(uint32_t qpn)
{
    m_destQp = qpn & FIELD_MASK;
}

uint32_t
RdmaBthHeader::GetDestQp() const
{
    return m_destQp;
}

void
RdmaBthHeader::SetAckRequest(bool ackRequest)
{
    m_ackRequest = ackRequest;
}

bool
RdmaBthHeader::GetAckRequest() const
{
    return m_ackRequest;
}

void
RdmaBthHeader::SetTelemetry(bool telemetry)
{
    m_telemetry = telemetry;
}

bool
RdmaBthHeader::HasTelemetry() const
{
    return m_telemetry;
}

void
RdmaBthHeader::SetPsn(uint32_t psn)
{
    m_psn = psn & FIELD_MASK;
}

uint32_t
RdmaBthHeader::GetWirePsn() const
{
    return m_psn;
}

uint32_t
RdmaBthHeader::Unwrap(uint32_t wirePsn, uint32_t reference)
{
    // Signed 24-bit distance from the reference's low bits to the wire value.
    int32_t delta = static_cast<int32_t>(((wirePsn - reference) & FIELD_MASK) << 8) >> 8;
    return reference + static_cast<uint32_t>(delta);
}

uint32_t
RdmaBthHeader::GetSerializedSize() const
{
    return SERIALIZED_SIZE;
}

void
RdmaBthHeader::Serialize(Buffer::Iterator start) const
{
    start.WriteU8(m_opcode);
    start.WriteU8(0);
    start.WriteHtonU16(DEFAULT_PKEY);
    start.WriteHtonU32((m_telemetry ? TELEMETRY_BIT << 24 : 0) | m_destQp);
    start.WriteHtonU32((m_ackRequest ? uint32_t(ACK_REQUEST_BIT) << 24 : 0) | m_psn);
}

uint32_t
RdmaBthHeader::Deserialize(Buffer::Iterator start)
{
    m_opcode = static_cast<Opcode>(start.ReadU8());
    start.ReadU8();
    start.ReadNtohU16();
    uint32_t qpWord = start.ReadNtohU32();
    m_telemetry = (qpWord >> 24) & TELEMETRY_BIT;
    m_destQp = qpWord & FIELD_MASK;
    uint32_t word = start.ReadNtohU32();
    m_ackRequest = (word >> 24) & ACK_REQUEST_BIT;
    m_psn = word & FIELD_MASK;
    return SERIALIZED_SIZE;
}

void
RdmaBthHeader::Print(std::ostream& os) const
{
    os << "opcode=0x" << std::hex << uint32_t(m_opcode) << std::dec << " dqp=" << m_destQp
       << " psn=" << m_psn << (m_ackRequest ? " A" : "") << (m_telemetry ? " INT" : "");
}

} // namespace ns3
