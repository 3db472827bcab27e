/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A TCP connection the script drives itself: a socket it created, connected
 * and writes to (from its own application, a test, or the raw socket API),
 * and the PacketSink that receives it.
 */
#ifndef WORMHOLE_SOCKET_FLOW_H
#define WORMHOLE_SOCKET_FLOW_H

#include "tracked-flow.h"

#include "ns3/callback.h"
#include "ns3/packet-sink.h"
#include "ns3/sequence-number.h"
#include "ns3/tcp-socket-state.h"

namespace ns3
{

class Packet;
class Socket;
class TcpHeader;
class TcpSocketBase;

/**
 * @brief A flow of kind "socket-tcp": a TCP socket that no application the
 * tracker knows (BulkSend, OnOff) owns, followed from its SYN.
 *
 * Whoever writes to the socket, the flow is measured at it: it starts with
 * its first data segment, its size is known once it sends its FIN (the
 * script closed it), and it ends when its receiver has every byte before
 * that FIN. Its progress is what the PacketSink at its destination received
 * from it (or, with no sink, what its receiver acknowledged).
 *
 * A skip can only stand in for what the script already handed over: it
 * credits bytes the socket holds and never sent (the tail of its send
 * buffer), never bytes the script has yet to write. The room that frees is
 * announced to the script's send callback when the skip ends (one call,
 * where plain ns-3 makes one per ACK), so the script writes what it would
 * have written by then. That is sound only while the script writes from the
 * socket's own send and data-sent callbacks (the effect of a write from any
 * other event, a timer of its own, cannot be reproduced): every write after
 * the first data segment is checked to come from them (GetSkipBlocker).
 */
class SocketFlow : public TrackedFlow
{
  public:
    static TypeId GetTypeId();
    SocketFlow();
    ~SocketFlow() override;

    /**
     * Follow a socket that just connected (its endpoints are known): learn its
     * endpoints, its receiver, and follow its segments.
     */
    void SetSocket(Ptr<TcpSocketBase> socket);
    /** @return the socket the flow is sent on. */
    Ptr<TcpSocketBase> GetSocket() const;
    /**
     * Who is told of the flow's lifecycle (the FlowSource that found it, for
     * the tracker): @p sending at each data segment it sends, @p finished once
     * its receiver has every byte.
     */
    void SetLifecycle(Callback<void> sending, Callback<void> finished);
    /** The attribution tag of the flow's events: the end of a skip is announced in it. */
    void SetTag(uint32_t tag);

    std::string GetKind() const override;
    uint8_t GetProtocol() const override;
    /** ACKs come back between the same ports, reversed. */
    bool GetReversePorts(uint16_t& source, uint16_t& destination) const override;
    std::string GetCongestionOps() const override;
    /** Its socket's own: the flow is found once its socket connects. */
    std::string GetPlannedCongestionOps() const override;
    std::string GetRttEstimator() const override;
    /** None: the script's own event connected it. */
    EventId GetStartEvent() const override;
    /** The first data segment left: the script's writes are followed from now on. */
    void NotifyStarted() override;
    void UseSkipAwareRtt() override;
    /** Never called: a socket flow is not memoized (it has no start the memo could hold). */
    void CompleteVirtually() override;
    uint64_t GetDelivered() const override;
    uint64_t GetReceiverTotal() const override;
    uint64_t GetCredited() const override;
    /** The never-sent bytes of its send buffer but one: the script handed them over already. */
    uint64_t GetSendable() const override;
    /** The bytes written less those never sent, credits included (BulkSendFlow::GetSent). */
    uint64_t GetSent() const override;
    /** Its sender's entries into CWR, Recovery or Loss since it started (BulkSendFlow's). */
    uint64_t GetCongestionNotifications() const override;
    uint64_t GetCongestionWindow() const override;
    bool IsQuiet() const override;
    /**
     * Take up to @p bytes from the tail of the socket's never-sent bytes, keeping
     * one, for its receiver; and announce the room freed to the script when the
     * skip ends (an event in the flow's tag, which the skip moves).
     */
    uint64_t Credit(uint64_t bytes) override;
    /** Put bytes of the last credit back in the socket's send buffer, and take them from its receiver. */
    uint64_t Uncredit(uint64_t bytes) override;
    /** Cubic's clocks move with a skip, as a BulkSend flow's (BulkSendFlow::ShiftTimes). */
    void ShiftTimes(Time delta) override;
    std::string GetFingerprint() const override;
    std::vector<double> GetCongestionState() const override;
    /**
     * @return why a skip could not leave the script as plain ns-3 would
     * (WRITES_OUTSIDE_SEND_CALLBACKS once the script wrote from another event
     * after its first data segment; RECEIVER_NOT_PACKET_SINK while no sink
     * counts what arrives), SKIPPABLE if none.
     */
    SkipBlocker GetSkipBlocker() override;

  protected:
    void DoDispose() override;

  private:
    /** The socket sent a segment (its Tx trace): the first data starts the flow, a FIN sizes it. */
    void OnTx(Ptr<const Packet> packet, const TcpHeader& header, Ptr<const TcpSocketBase> socket);
    /** The socket received a segment (its Rx trace, followed without a sink): an ACK may end the flow. */
    void OnRx(Ptr<const Packet> packet, const TcpHeader& header, Ptr<const TcpSocketBase> socket);
    /** The sink received bytes, from this flow or another. */
    void OnSinkRx(Ptr<const Packet> packet, const Address& from, const Address& local);
    void OnCongestionState(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to);
    /** The script's send callback, called through the flow: its writes there are its own. */
    void OnSendRoom(Ptr<Socket> socket, uint32_t available);
    /** The script's data-sent callback, called through the flow. */
    void OnDataSent(Ptr<Socket> socket, uint32_t sent);
    /** Put the flow between the socket and the script's callbacks (again, if the script set new ones). */
    void WrapCallbacks();
    /** Whether the send buffer grew since the flow last saw the script write: if so, from elsewhere. */
    void CheckWrites();
    /** A skip ended: tell the script of the room in its send buffer, as ACKs would have. */
    void AnnounceRoom();
    /** End the flow if it is sized and its receiver has every byte. */
    void CheckFinished();
    /** @return the sequence number after the last byte written to the socket. */
    SequenceNumber32 Tail() const;
    /** @return the bytes written to the socket since its first data segment, credits not included. */
    uint64_t WrittenOnWire() const;
    /** @return the sink's accepted socket this flow arrives on, nullptr if none. */
    Ptr<TcpSocketBase> GetReceiverSocket() const;

    Ptr<TcpSocketBase> m_socket;
    Ptr<PacketSink> m_sink;
    Callback<void> m_sending;
    Callback<void> m_finished;
    uint32_t m_tag{0};
    bool m_started{false};               //!< its first data segment left
    bool m_closed{false};                //!< it sent its FIN: m_size is known
    bool m_done{false};                  //!< its receiver has every byte
    SequenceNumber32 m_firstSequence{0}; //!< its first data byte
    SequenceNumber32 m_lastTail{0};      //!< Tail() when the script was last seen writing
    uint64_t m_received{0};              //!< bytes the sink received from it
    uint64_t m_credited{0};
    uint64_t m_congestionSignals{0};
    bool m_roomAnnounced{false};         //!< an AnnounceRoom is pending
    SkipBlocker m_writesBlocker{SKIPPABLE};
    Callback<void, Ptr<Socket>, uint32_t> m_scriptSend;     //!< the script's send callback
    Callback<void, Ptr<Socket>, uint32_t> m_scriptDataSent; //!< the script's data-sent callback
    Callback<void, Ptr<Socket>, uint32_t> m_sendWrapper;    //!< what the socket calls instead
    Callback<void, Ptr<Socket>, uint32_t> m_dataSentWrapper;
};

} // namespace ns3

#endif /* WORMHOLE_SOCKET_FLOW_H */
