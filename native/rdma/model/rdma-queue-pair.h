/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The sending side of a reliable-connected queue pair carrying one message.
 */
#ifndef RDMA_QUEUE_PAIR_H
#define RDMA_QUEUE_PAIR_H

#include "ns3/callback.h"
#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <deque>
#include <utility>
#include <vector>

namespace ns3
{

class Packet;
class RdmaNic;
class RdmaReceiveQueuePair;
class RdmaCongestionControl;
class RdmaIntHeader;

/**
 * @brief Sender state of one flow: an RDMA WRITE of GetSize() bytes.
 *
 * Packet n (PSN n) carries bytes [n * mtu, min((n + 1) * mtu, size)). The
 * sender keeps three PSNs: una (first not acknowledged), nxt (next to send)
 * and max (one past the highest ever sent). A NAK moves nxt back to the PSN
 * it names (go-back-N); the retransmission timer, restarted by every ACK that
 * advances una, moves nxt back to una.
 *
 * Accessors for the accelerator: GetBytesSent(), GetBytesAcked(),
 * GetDeliveredBytes() (at the receiver), GetRate(), GetTargetRate(),
 * GetAlpha(), GetSourcePort(), Credit() and ShiftTimes().
 */
class RdmaQueuePair : public Object
{
  public:
    static TypeId GetTypeId();
    RdmaQueuePair();

    /** What the NIC that owns the queue pair gives it. */
    struct Config
    {
        uint32_t qpn;            //!< this queue pair's number on its NIC
        Ipv4Address source;      //!< address of the sending NIC
        Ipv4Address destination; //!< address of the receiving NIC
        uint16_t sourcePort;     //!< UDP source port (ECMP entropy)
        uint64_t size;           //!< message bytes
        uint32_t mtu;            //!< payload bytes per packet
        uint32_t wireOverhead;   //!< bytes each packet gains below the BTH (UDP, IP, link)
        Time retransmitTimeout;  //!< go back to una when no ACK advances it for this long
    };

    /** Called once by RdmaNic::CreateQueuePair. */
    void Setup(Ptr<RdmaNic> nic,
               const Config& config,
               Ptr<RdmaCongestionControl> cc,
               Ptr<RdmaReceiveQueuePair> receiver);

    /** An identifier chosen by whoever creates the flow (RdmaFlowHelper numbers them). */
    void SetFlowId(uint32_t id);
    uint32_t GetFlowId() const;
    /** Called once, when the receiver holds the whole message. */
    void SetCompletionCallback(Callback<void, Ptr<RdmaQueuePair>> done);

    /** Begin sending (RdmaNic::StartQueuePair calls this). */
    void Start();

    uint32_t GetQpn() const;
    Ipv4Address GetSource() const;
    Ipv4Address GetDestination() const;
    /** @return the UDP source port of the flow's data packets (the path is a hash of it). */
    uint16_t GetSourcePort() const;
    uint64_t GetSize() const;
    uint32_t GetMtu() const;
    uint32_t GetNPackets() const;
    Ptr<RdmaNic> GetNic() const;
    Ptr<RdmaReceiveQueuePair> GetReceiver() const;
    Ptr<RdmaCongestionControl> GetCongestionControl() const;

    bool IsStarted() const;
    /** @return true once the receiver holds every byte (the flow's completion). */
    bool IsFinished() const;
    /** @return true once every packet is acknowledged; the sender then forgets the flow. */
    bool IsAcknowledged() const;
    Time GetStartTime() const;
    /** @return when the receiver got the last byte; the FCT is this minus GetStartTime(). */
    Time GetFinishTime() const;
    /** @return when the last ACK arrived. */
    Time GetAcknowledgedTime() const;

    /** @return distinct message bytes sent so far (retransmissions not counted), credit included. */
    uint64_t GetBytesSent() const;
    /** @return message bytes acknowledged so far, credit included. */
    uint64_t GetBytesAcked() const;
    /** @return message bytes the receiver got in order so far, credit included. */
    uint64_t GetDeliveredBytes() const;
    /** @return the pacing rate (DCQCN's current rate Rc). */
    DataRate GetRate() const;
    /** @return DCQCN's target rate Rt (the pacing rate for schemes without one). */
    DataRate GetTargetRate() const;
    /** @return DCQCN's alpha (0 for schemes without one). */
    double GetAlpha() const;

    /**
     * Advance both ends as if @p bytes more had been sent, delivered and
     * acknowledged, without sending them.
     *
     * Whole packets are taken from the part of the message never sent yet,
     * keeping the last packet (so the flow finishes with real packets):
     * PSNs [max, max + k) are marked delivered on both ends, where k =
     * min(bytes / mtu, packets left before the last one). The sender's max
     * PSN moves past them at once and its nxt skips them whenever it
     * reaches them; the receiver's expected PSN jumps over them when it
     * reaches them, so packets already in flight are still accepted in
     * order. Sent, acknowledged and delivered bytes grow by k * mtu at once.
     * Congestion-control state is left alone.
     * A flow may be credited before it starts (a memo replay resuming it
     * part-way): it then starts at the first PSN not credited.
     * @return the bytes credited (k * mtu), 0 once the last packet was first sent.
     */
    uint64_t Credit(uint64_t bytes);
    /**
     * Take back up to @p bytes of the last Credit() (a skip cut short), in
     * whole packets from the end of its range, while no packet beyond that
     * range was sent: both ends forget those PSNs were delivered, and the
     * sender sends them when it reaches them.
     * @return the bytes taken back.
     */
    uint64_t Uncredit(uint64_t bytes);
    /** @return the bytes credited so far, net of those taken back. */
    uint64_t GetCreditedBytes() const;
    /** @return the bytes Credit() could take now: whole packets never sent, but the last. */
    uint64_t GetCreditableBytes() const;

    /**
     * Make the next Start() resume a flow a memo replay held since @p start:
     * GetStartTime() stays @p start, and the congestion control starts from
     * @p state (RdmaCongestionControl::GetState's layout; empty: line rate).
     */
    void SetResumedFrom(Time start, const std::vector<double>& state);
    /** Remember the pending event that will start the queue pair (RdmaNic::ScheduleQueuePair). */
    void SetStartEvent(const EventId& start);
    /** @return the pending event that will start the queue pair; expired if none. */
    EventId GetStartEvent() const;
    /**
     * Finish a queue pair that never started as if every packet had been
     * delivered and acknowledged now, sending no data: both ends' counters
     * reach the size (the missing bytes count as credited), the receiver puts
     * the last packet's ACK on the wire as a plain run does (unless @p ack is
     * false: SendLastAck puts it there later, or nothing does), the NIC's
     * FlowFinish trace fires and the completion callback is called. What a
     * memo replay does with a flow whose recorded completion is due.
     * @param start the time the flow would have started (its FCT's origin)
     * @param ack whether the last packet's ACK goes on the wire now
     */
    void CompleteVirtually(Time start, bool ack = true);
    /**
     * Put on the wire the ACK of the last packet that CompleteVirtually left
     * off it, as the receiver would have sent it then.
     */
    void SendLastAck();

    /**
     * Add @p delta to every absolute time kept by both ends of the flow and
     * its congestion control: the pacing clock, the receiver's last CNP time,
     * telemetry timestamps. Start, finish and acknowledgement times are
     * history and stay. Pending ns-3 events are the simulator's to move.
     */
    void ShiftTimes(Time delta);

    /** @return data packets sent, retransmissions included. */
    uint64_t GetPacketsSent() const;
    uint64_t GetPacketsRetransmitted() const;
    uint32_t GetNTimeouts() const;
    uint32_t GetNNaksReceived() const;
    uint32_t GetNCnpsReceived() const;

    // --- used by the NIC -------------------------------------------------

    /** @return true if a packet may be sent now or later at the pacing rate (window permitting). */
    bool HasDataToSend() const;
    /** @return the earliest time the pacer lets the next packet go. */
    Time GetNextSendTime() const;
    /** Build the data packet for PSN nxt (BTH included), and advance. */
    Ptr<Packet> BuildNextPacket();
    /** An ACK (or a NAK) arrived. */
    void ReceiveAck(uint32_t wirePsn, bool nak, const RdmaIntHeader* telemetry);
    /** A CNP arrived. */
    void ReceiveCnp();
    /** The receiver holds the whole message. */
    void NotifyDelivered();

  private:
    void DoDispose() override;
    /** @return the first PSN at or after @p psn that is not credited. */
    uint32_t SkipCredited(uint32_t psn) const;
    uint64_t BytesBefore(uint32_t psn) const;
    void RetransmitTimeout();
    void RestartRetransmitTimer();

    /** PSNs [first, end) credited by Credit(). */
    struct PsnRange
    {
        uint32_t first;
        uint32_t end;
    };

    Ptr<RdmaNic> m_nic;
    Ptr<RdmaReceiveQueuePair> m_receiver;
    Ptr<RdmaCongestionControl> m_cc;
    Config m_config{};
    uint32_t m_nPackets{0};
    uint32_t m_flowId{0};
    Callback<void, Ptr<RdmaQueuePair>> m_done;

    bool m_started{false};
    bool m_finished{false};
    bool m_acknowledged{false};
    Time m_startTime;
    Time m_finishTime;
    Time m_ackTime;

    uint32_t m_sndUna{0};
    uint32_t m_sndNxt{0};
    uint32_t m_sndMax{0};
    std::deque<PsnRange> m_credited; //!< ranges not yet passed by una
    PsnRange m_lastCredit{0, 0};    //!< the range of the last Credit(), for Uncredit()
    uint64_t m_creditedBytes{0};
    Time m_resumedFrom{Seconds(-1)};    //!< start time of a resumed flow, negative if none
    std::vector<double> m_initialState; //!< congestion state to start from, empty: line rate
    EventId m_startEvent;

    Time m_nextSend;       //!< pacing: the next packet may leave at this time
    double m_paceCarry{0}; //!< seconds of pacing gap lost to Time's resolution
    EventId m_rtoEvent;

    /** Packet RTTs (AckRtt); the first transmissions not acknowledged yet, kept only while traced. */
    TracedCallback<Time> m_ackRtt;
    std::deque<std::pair<uint32_t, Time>> m_firstSent;

    uint64_t m_packetsSent{0};
    uint64_t m_packetsRetransmitted{0};
    uint32_t m_timeouts{0};
    uint32_t m_naks{0};
    uint32_t m_cnps{0};
};

} // namespace ns3

#endif /* RDMA_QUEUE_PAIR_H */
