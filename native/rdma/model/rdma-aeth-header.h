/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The ACK Extended Transport Header that follows the BTH of an ACK or NAK.
 */
#ifndef RDMA_AETH_HEADER_H
#define RDMA_AETH_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @brief ACK Extended Transport Header (4 bytes, IBA spec vol. 1, 9.3.5).
 *
 * Syndrome (8) | message sequence number (24). The model sends two
 * syndromes: a plain ACK (0x1F, "credits not tracked") and the NAK for a
 * PSN sequence error (0x60). The BTH of an ACK carries the last PSN the
 * responder received in order; the BTH of a NAK carries the PSN it expects.
 */
class RdmaAethHeader : public Header
{
  public:
    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    RdmaAethHeader();

    /** Make this a NAK (PSN sequence error) instead of an ACK. */
    void SetNak(bool nak);
    bool IsNak() const;

    /** Number of messages the responder has completed (24 bits are sent). */
    void SetMsn(uint32_t msn);
    uint32_t GetMsn() const;

    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

  private:
    uint8_t m_syndrome;
    uint32_t m_msn;
};

} // namespace ns3

#endif /* RDMA_AETH_HEADER_H */
