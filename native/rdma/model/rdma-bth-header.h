/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The InfiniBand Base Transport Header that RoCEv2 carries in UDP (port 4791).
 */
#ifndef RDMA_BTH_HEADER_H
#define RDMA_BTH_HEADER_H

#include "ns3/header.h"

#include <cstdint>

namespace ns3
{

/**
 * @brief Base Transport Header (12 bytes, IBA spec vol. 1, 9.2).
 *
 * Layout on the wire: opcode (8) | SE, M, pad count, version (8) | P_Key (16)
 * | FECN, BECN, reserved (8) | destination QP (24) | AckReq, reserved (8) |
 * PSN (24). Only the fields the model uses are settable; the others are
 * written as their defaults (P_Key 0xFFFF, everything else zero), except
 * that a reserved bit flags HPCC telemetry (SetTelemetry).
 *
 * The PSN on the wire has 24 bits. Endpoints keep 32-bit PSNs and rebuild
 * them from the wire value with Unwrap(), so flows of more than 2^24 packets
 * keep working.
 */
class RdmaBthHeader : public Header
{
  public:
    /** Opcodes of the Reliable Connection transport that the model sends. */
    enum Opcode : uint8_t
    {
        RC_WRITE_FIRST = 0x06,  //!< first packet of a multi-packet RDMA WRITE
        RC_WRITE_MIDDLE = 0x07, //!< middle packet
        RC_WRITE_LAST = 0x08,   //!< last packet
        RC_WRITE_ONLY = 0x0A,   //!< single-packet message
        RC_ACKNOWLEDGE = 0x11,  //!< ACK or NAK, followed by an AETH
        CNP = 0x81,             //!< RoCEv2 congestion notification packet
    };

    /** Mask of the 24-bit PSN and QPN fields. */
    static constexpr uint32_t FIELD_MASK = 0xFFFFFF;
    /** Bytes of the invariant CRC that ends every RoCEv2 packet (sent as zeros). */
    static constexpr uint32_t ICRC_BYTES = 4;

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    RdmaBthHeader();

    void SetOpcode(Opcode opcode);
    Opcode GetOpcode() const;
    /** @return true for the four RDMA WRITE opcodes (packets that carry data). */
    bool IsData() const;
    /** @return true for RC_WRITE_LAST and RC_WRITE_ONLY. */
    bool IsLastOfMessage() const;

    /** Destination queue pair number (24 bits are sent). */
    void SetDestQp(uint32_t qpn);
    uint32_t GetDestQp() const;

    /** Ask the responder to acknowledge this packet at once. */
    void SetAckRequest(bool ackRequest);
    bool GetAckRequest() const;

    /**
     * An RdmaIntHeader follows this header (data packets) or the AETH (ACKs).
     * The model carries this in a reserved bit of the BTH's FECN/BECN byte.
     */
    void SetTelemetry(bool telemetry);
    bool HasTelemetry() const;

    /** Packet sequence number; the low 24 bits are sent. */
    void SetPsn(uint32_t psn);
    /** @return the 24-bit PSN as received. */
    uint32_t GetWirePsn() const;

    /**
     * The 32-bit PSN closest to @p reference whose low 24 bits are @p wirePsn
     * (serial-number arithmetic over 24 bits).
     */
    static uint32_t Unwrap(uint32_t wirePsn, uint32_t reference);

    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

  private:
    Opcode m_opcode;
    uint32_t m_destQp;
    bool m_ackRequest;
    bool m_telemetry;
    uint32_t m_psn;
};

} // namespace ns3

#endif /* RDMA_BTH_HEADER_H */
