/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The responding side of a reliable-connected queue pair: in-order delivery,
 * ACK coalescing, NAK on a sequence error, and DCQCN's notification point.
 */
#ifndef RDMA_RECEIVE_QUEUE_PAIR_H
#define RDMA_RECEIVE_QUEUE_PAIR_H

#include "ns3/callback.h"
#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include "rdma-int-header.h"

#include <cstdint>
#include <deque>

namespace ns3
{

class Packet;
class RdmaNic;
class RdmaBthHeader;

/**
 * @brief Receiver state of one flow.
 *
 * Accepts data packets only in PSN order (go-back-N). A packet with the
 * expected PSN is delivered; an ACK naming it goes back when AckInterval
 * packets arrived since the last ACK, when the packet asks for one, or at
 * the end of the message. A packet beyond the expected PSN is dropped and
 * answered with one NAK per expected PSN; a duplicate is dropped and counts
 * towards the next ACK. A packet that arrives with CE set triggers a CNP to
 * the sender unless one was sent less than CnpInterval ago (DCQCN's NP).
 * The INT records of a data packet that carries them (HPCC) ride back on the
 * next ACK or NAK.
 */
class RdmaReceiveQueuePair : public Object
{
  public:
    static TypeId GetTypeId();
    RdmaReceiveQueuePair();

    /** What the receiving NIC gives it. */
    struct Config
    {
        uint32_t qpn;          //!< this queue pair's number on the receiving NIC
        uint32_t peerQpn;      //!< the sender's queue pair number
        Ipv4Address local;     //!< address of the receiving NIC
        Ipv4Address peer;      //!< address of the sending NIC
        uint16_t sourcePort;   //!< the flow's UDP source port, reused for ACKs and CNPs
        uint32_t ackInterval;  //!< packets per coalesced ACK
        Time cnpInterval;      //!< at most one CNP per this interval
    };

    /** Called once by RdmaNic::CreateQueuePair on the receiving NIC. */
    void Setup(Ptr<RdmaNic> nic, const Config& config);
    /** Called once, when the last byte of the message arrives in order. */
    void SetCompletionCallback(Callback<void> done);

    /** A data packet for this queue pair arrived (BTH removed, ICRC still at its end). */
    void ReceiveData(Ptr<Packet> packet, const RdmaBthHeader& bth, bool congestionExperienced);

    /**
     * Mark PSNs [first, end) delivered without receiving them (see
     * RdmaQueuePair::Credit). @p bytes are added to the delivered bytes now.
     */
    void Credit(uint32_t first, uint32_t end, uint64_t bytes);
    /**
     * Forget that PSNs [kept, end) of the last credit, which ended at @p end,
     * were delivered (see RdmaQueuePair::Uncredit); @p bytes leave the
     * delivered bytes.
     */
    void Uncredit(uint32_t end, uint32_t kept, uint64_t bytes);
    /**
     * Hold all @p packets of a message of @p size bytes, as if the last one
     * had just arrived: send the ACK its arrival sends (carrying an INT header
     * with no hops if @p telemetry, the size of the one a plain run echoes;
     * only if @p ack, else SendLastAck sends it later), then call the
     * completion callback (see RdmaQueuePair::CompleteVirtually).
     */
    void CompleteVirtually(uint32_t packets, uint64_t size, bool telemetry, bool ack);
    /** Send the ACK of the last packet that CompleteVirtually did not send. */
    void SendLastAck();
    /** Add @p delta to the stored time of the last CNP. */
    void ShiftTimes(Time delta);

    uint32_t GetQpn() const;
    /** @return the next PSN the receiver accepts. */
    uint32_t GetExpectedPsn() const;
    /** @return message bytes received in order, credit included. */
    uint64_t GetDeliveredBytes() const;
    bool IsComplete() const;
    Time GetCompletionTime() const;

    uint64_t GetPacketsReceived() const;
    uint64_t GetPacketsMarked() const;
    uint64_t GetDuplicates() const;
    uint64_t GetOutOfOrder() const;
    uint32_t GetNAcksSent() const;
    uint32_t GetNNaksSent() const;
    uint32_t GetNCnpsSent() const;

  private:
    void DoDispose() override;
    void SendAck(bool nak);
    void SendCnp();
    /** Advance the expected PSN past @p psn, jumping over credited ranges. */
    void Advance(uint32_t psn);

    struct PsnRange
    {
        uint32_t first;
        uint32_t end;
    };

    Ptr<RdmaNic> m_nic;
    Config m_config{};
    Callback<void> m_done;

    uint32_t m_expected{0};
    std::deque<PsnRange> m_credited; //!< ranges the expected PSN has not reached yet
    uint64_t m_delivered{0};
    uint32_t m_sinceAck{0};
    bool m_nakSent{false};
    bool m_complete{false};
    Time m_completionTime;
    bool m_cnpSent{false};
    Time m_lastCnp;
    bool m_hasTelemetry{false};
    RdmaIntHeader m_telemetry; //!< INT of the last data packet, for the next ACK

    uint64_t m_received{0};
    uint64_t m_marked{0};
    uint64_t m_duplicates{0};
    uint64_t m_outOfOrder{0};
    uint32_t m_acks{0};
    uint32_t m_naks{0};
    uint32_t m_cnps{0};
};

} // namespace ns3

#endif /* RDMA_RECEIVE_QUEUE_PAIR_H */
