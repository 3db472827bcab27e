/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * In-band network telemetry records that switches append to HPCC data
 * packets and receivers echo back in ACKs.
 */
#ifndef RDMA_INT_HEADER_H
#define RDMA_INT_HEADER_H

#include "ns3/data-rate.h"
#include "ns3/header.h"
#include "ns3/nstime.h"

#include <array>
#include <cstdint>

namespace ns3
{

/**
 * @brief INT metadata of up to MAX_HOPS egress ports (HPCC, SIGCOMM 2019).
 *
 * Fixed size, as in HPCC's own ns-3 model, so stamping a packet never changes
 * its length: a hop count byte, a reserved byte, then MAX_HOPS records of 12
 * bytes: the egress time (ns, 32 bits, wrapping), the bytes the port has
 * sent (32 bits, wrapping), its queue (20 bits in 32-byte units, saturating)
 * and its line rate (12 bits in Gb/s). Wrapping fields are only ever
 * subtracted from the same hop's previous record. A packet crossing more
 * than MAX_HOPS stamping ports keeps the first MAX_HOPS records.
 */
class RdmaIntHeader : public Header
{
  public:
    /** Records the header has room for (a 3-tier fat-tree path has 5 switches). */
    static constexpr uint32_t MAX_HOPS = 5;

    /** One egress port's record, decoded. */
    struct Hop
    {
        uint32_t timeNs;     //!< egress time modulo 2^32 ns
        uint32_t txBytes;    //!< bytes the port had sent, modulo 2^32
        uint32_t queueBytes; //!< bytes queued at the port (32-byte resolution)
        uint64_t rateBps;    //!< line rate of the port (1 Gb/s resolution)
    };

    static TypeId GetTypeId();
    TypeId GetInstanceTypeId() const override;
    RdmaIntHeader();

    /** Append a record; does nothing once MAX_HOPS records are held. */
    void PushHop(Time now, uint64_t txBytes, uint64_t queueBytes, DataRate rate);
    uint32_t GetNHops() const;
    Hop GetHop(uint32_t i) const;

    uint32_t GetSerializedSize() const override;
    void Serialize(Buffer::Iterator start) const override;
    uint32_t Deserialize(Buffer::Iterator start) override;
    void Print(std::ostream& os) const override;

  private:
    uint8_t m_nHops;
    std::array<Hop, MAX_HOPS> m_hops;
};

} // namespace ns3

#endif /* RDMA_INT_HEADER_H */
