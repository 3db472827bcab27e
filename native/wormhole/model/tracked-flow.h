/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * One flow of a script as the accelerator sees it, whatever model makes it:
 * the interface every kind of flow (BulkSendFlow, OnOffFlow, RdmaFlow)
 * implements for the FlowTracker.
 */
#ifndef WORMHOLE_TRACKED_FLOW_H
#define WORMHOLE_TRACKED_FLOW_H

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

class Node;
class PacketSink;
class TcpSocketBase;

/**
 * @brief What the FlowTracker needs to know of, and do to, one flow.
 *
 * An adapter wraps the ns-3 objects that make a flow (a sending application
 * and the PacketSink that receives it, or an RDMA queue pair) and answers in
 * their terms: what the flow is and where it goes, how far it is, how it is
 * credited the bytes of a skip and takes them back, how its start is held
 * or completed by a memo replay, and what state its congestion control is
 * in. Everything that is the same for every kind (lifecycle, rate samples,
 * routes, attribution tags) is the tracker's.
 *
 * Endpoints: a flow's data packets go from (source address, source port) to
 * (destination address, destination port) with protocol GetProtocol(); the
 * packets its receiver sends back, if any (ACKs), use GetReversePorts().
 */
class TrackedFlow : public Object
{
  public:
    /**
     * Why a flow's sender forbids a skip whatever the network does: what a skip
     * could not reproduce of the script driving it. The Python's
     * core.flows.SenderBlocker names them, in this order.
     */
    enum SkipBlocker : uint8_t
    {
        SKIPPABLE = 0,                     //!< nothing the sender does forbids a skip
        WRITES_OUTSIDE_SEND_CALLBACKS = 1, //!< the script writes from events of its own (a timer)
        RECEIVER_NOT_PACKET_SINK = 2,      //!< no PacketSink counts what arrives: a credit reaches no one
    };

    static TypeId GetTypeId();
    TrackedFlow();
    ~TrackedFlow() override;

    // What the flow is
    /** @return "bulk-tcp", "onoff-udp", "rdma-dcqcn", ... */
    virtual std::string GetKind() const = 0;
    Ptr<Node> GetSrcNode() const;
    /** @return the node that owns the destination address, nullptr if none. */
    Ptr<Node> GetDstNode() const;
    /** @return the source address, any (0.0.0.0) until known. */
    Ipv4Address GetSrcAddress() const;
    Ipv4Address GetDstAddress() const;
    /** @return the source port, 0 until known (a socket gets one when it starts). */
    uint16_t GetSrcPort() const;
    uint16_t GetDstPort() const;
    /** @return the flow's size in bytes, 0 if unlimited. */
    uint64_t GetSize() const;
    /** @return when the flow starts (or started). */
    Time GetStartTime() const;
    /** @return the IP protocol number of the flow's packets. */
    virtual uint8_t GetProtocol() const = 0;
    /**
     * @param[out] source UDP/TCP source port of the packets the receiver sends back
     * @param[out] destination their destination port
     * @return false if the receiver sends nothing back
     */
    virtual bool GetReversePorts(uint16_t& source, uint16_t& destination) const;
    /** @return the configured sending rate in bit/s of a rate-limited application, 0 otherwise. */
    virtual double GetAppRate() const;
    /** @return the TypeId name of the flow's congestion control, "" if it has none. */
    virtual std::string GetCongestionOps() const;
    /**
     * @return the TypeId name of the congestion control the flow's sender socket
     * gets, known before the flow starts (its node's TcpL4Protocol SocketType); ""
     * if the flow has no congestion control.
     */
    virtual std::string GetPlannedCongestionOps() const;
    /** @return the TypeId name of the sender's RTT estimator (TCP), "" if it has none. */
    virtual std::string GetRttEstimator() const;
    /**
     * Call @p sink with every packet RTT the flow's sender sees: from a
     * packet's first transmission to the ACK that first covers it (a packet
     * sent again is not measured). Called once the flow sends.
     * @return false if this kind of flow cannot say.
     */
    virtual bool TraceRtt(Callback<void, Time> sink);
    /** @return true if the flow sends whenever its congestion control lets it (no off periods). */
    virtual bool IsConstantRate() const;
    /**
     * @return true if a rate-based congestion control paces the flow (RDMA's
     * DCQCN, HPCC): its rate is its state, and a queue pair resumed from a
     * recorded state is never exact. False for window-based and unpaced flows.
     */
    virtual bool IsPaced() const;

    // Starting it
    /** @return the pending event that starts the flow; an expired EventId if there is none. */
    virtual EventId GetStartEvent() const = 0;
    /** @return true if the flow can be started held (StartHeld). */
    virtual bool CanBeHeld() const;
    /**
     * Start the flow held: connected, but sending no data until ResumeHeld.
     * What a memo replay does with a flow whose completion it will inject.
     */
    virtual void StartHeld();
    /** @return true while the flow is held. */
    virtual bool IsHeld() const;
    /**
     * Let a held flow send, its congestion control in the given state
     * (GetCongestionState's layout; empty: as it is).
     */
    virtual void ResumeHeld(const std::vector<double>& state);
    /** The flow sent its first data: learn what only the start reveals (a socket's port). */
    virtual void NotifyStarted();
    /**
     * The flow started under the accelerator: give its sender's clocks what a
     * skip needs (a TCP sender's RTT estimator must leave skipped time out).
     */
    virtual void UseSkipAwareRtt();
    /**
     * Complete a sized flow that never sent anything as if its last byte had
     * just arrived: its receiver's counters reach the size and whatever
     * watches its completion (a trace, a callback) sees it end.
     */
    virtual void CompleteVirtually() = 0;
    /**
     * Let the next CompleteVirtually leave the end of the transfer (what the
     * receiver puts on the wire as the last byte arrives) off the wire, owed
     * until SendOwedEndOfTransfer. @return false if the flow cannot (the
     * default: its end of transfer goes with its completion).
     */
    virtual bool OweEndOfTransfer();
    /** Put on the wire the end of the transfer a virtual completion owed. */
    virtual void SendOwedEndOfTransfer();

    // How far it is
    /** @return bytes the receiver has, received or credited. */
    virtual uint64_t GetDelivered() const = 0;
    /** @return what the receiver's own counter says (PacketSink::GetTotalRx(), ...). */
    virtual uint64_t GetReceiverTotal() const = 0;
    /** @return bytes credited by skips (and virtual completion), net of those taken back. */
    virtual uint64_t GetCredited() const = 0;
    /** @return bytes the sender could still give up to a credit. */
    virtual uint64_t GetSendable() const = 0;
    /**
     * @return bytes the sender has put on the network so far, each once,
     * credit included: with GetDelivered(), what is in flight. 0 if the flow
     * cannot tell (only paced flows do).
     */
    virtual uint64_t GetSent() const;
    /**
     * @return the bytes per second on the wire (headers included) the flow's
     * congestion control paces it at now; 0 for a flow that is not paced
     * (TCP's window, UDP).
     */
    virtual double GetSendingRate() const;
    /**
     * @return the congestion signals its sender has reacted to so far: DCQCN's
     * CNPs, TCP's window reductions (an ECN echo, a fast retransmit, a
     * timeout). What holds a flow's rate or window down; 0 if it gets none
     * (or cannot tell).
     */
    virtual uint64_t GetCongestionNotifications() const;
    /**
     * @return the bytes its congestion control lets it have in flight now
     * (TCP's congestion window); 0 for a flow without a window (paced, UDP).
     */
    virtual uint64_t GetCongestionWindow() const;
    /**
     * @return true if none of the flow's packets is in the network, so it
     * waits on its own hosts' timers only (false if that cannot be told).
     */
    virtual bool IsQuiet() const;
    /**
     * @return true once the flow's sender has stopped for good (an application
     * past its stop time): it sends nothing more, so it keeps no sampler going.
     */
    virtual bool HasStopped() const;

    // Skipping it
    /**
     * Credit bytes the flow would have delivered while its events were moved:
     * the receiver has them, the sender gives them up. Every flow keeps some
     * bytes to send for real, so that it ends with real packets.
     * @return the bytes credited (less than asked if the sender has too few).
     */
    virtual uint64_t Credit(uint64_t bytes) = 0;
    /**
     * Take back bytes of the last credit (a skip cut short): the receiver
     * loses them and the sender has them to send again.
     * @return the bytes taken back.
     */
    virtual uint64_t Uncredit(uint64_t bytes) = 0;
    /**
     * The flow's pending events were moved by @p delta: move the absolute
     * times its objects keep too (pacing clocks, timestamps of past events).
     */
    virtual void ShiftTimes(Time delta);
    /**
     * @return what the flow's sender does that a skip could not reproduce, as
     * far as it has been seen (SKIPPABLE for the applications the tracker
     * knows: a skip stands in for them whole).
     */
    virtual SkipBlocker GetSkipBlocker();

    // What a memo needs
    /**
     * @return every attribute that shapes how the flow behaves, as one
     * canonical string, the same before the flow starts as after.
     */
    virtual std::string GetFingerprint() const = 0;
    /** @return the state of the flow's congestion control as numbers; empty if it has none (yet). */
    virtual std::vector<double> GetCongestionState() const;
    /** Put the congestion control in a state GetCongestionState gave. @return false if it cannot. */
    virtual bool SetCongestionState(const std::vector<double>& state);

  protected:
    void DoDispose() override;

    Ptr<Node> m_srcNode;
    Ptr<Node> m_dstNode;
    Ipv4Address m_srcAddress;
    Ipv4Address m_dstAddress;
    uint16_t m_srcPort{0};
    uint16_t m_dstPort{0};
    uint64_t m_size{0};
    Time m_start;
};

namespace wormhole
{
/** @return the node one of whose interfaces has the address, nullptr if none. */
Ptr<Node> NodeOwning(Ipv4Address address);
/**
 * @return the TCP socket @p sink accepted from (@p address, @p port), nullptr
 * if it has none (not connected yet, or @p sink is nullptr).
 */
Ptr<TcpSocketBase> AcceptedSocketFrom(Ptr<PacketSink> sink, Ipv4Address address, uint16_t port);
} // namespace wormhole

} // namespace ns3

#endif /* WORMHOLE_TRACKED_FLOW_H */
