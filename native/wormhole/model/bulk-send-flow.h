/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A BulkSendApplication's flow (over TCP, or UDP) and its PacketSink.
 */
#ifndef WORMHOLE_BULK_SEND_FLOW_H
#define WORMHOLE_BULK_SEND_FLOW_H

#include "application-flow.h"
#include "tcp-flow-state.h"

#include "ns3/tcp-socket-state.h"

namespace ns3
{

class BulkSendApplication;
class TcpSocketBase;

/**
 * @brief A BulkSend flow: kinds "bulk-tcp" and "bulk-udp".
 *
 * A credit comes first out of the tail of the TCP socket's never-sent
 * buffer, then out of the bytes the application has yet to write, always
 * leaving it at least one (and the write it holds back), so that it closes
 * its socket only after a real write: a skip-back can then hand the bytes
 * back, and the flow ends with real packets. Over TCP the flow can be held
 * (connected, its socket taking no data) and its sender state is TCP's
 * (TcpFlowState, as a vector in TcpStateVector's order).
 */
class BulkSendFlow : public ApplicationFlow
{
  public:
    static TypeId GetTypeId();
    BulkSendFlow();

    std::string GetKind() const override;
    std::string GetCongestionOps() const override;
    uint64_t GetSendable() const override;
    /**
     * Over TCP, the bytes the application wrote less those its socket has not
     * sent yet: each byte on the network once, credits included. With
     * GetDelivered() it tells a window that fills a queue (slow start, a queue
     * no mark holds) while the receiver sees a steady rate. 0 over UDP.
     */
    uint64_t GetSent() const override;
    bool IsQuiet() const override;
    /**
     * Over TCP, the times its sender entered CWR (an ECN echo), Recovery (a
     * fast retransmit) or Loss (a timeout) since it started: each a signal
     * that the network holds its window. 0 over UDP.
     */
    uint64_t GetCongestionNotifications() const override;
    /** Over TCP, the sender's congestion window (0 before it connects, and over UDP). */
    uint64_t GetCongestionWindow() const override;
    /** The socket exists: learn its port, and count its congestion signals from now on. */
    void NotifyStarted() override;
    bool CanBeHeld() const override;
    void StartHeld() override;
    bool IsHeld() const override;
    void ResumeHeld(const std::vector<double>& state) override;
    std::vector<double> GetCongestionState() const override;
    bool SetCongestionState(const std::vector<double>& state) override;
    /**
     * A skip paused the flow: the clocks of a congestion control that keeps
     * absolute times move with it (Cubic's epoch, so that its cubic function
     * resumes at the point it had reached; ACK-clocked controls keep none).
     */
    void ShiftTimes(Time delta) override;

    /** @return the TCP sender's state (cwnd 0 over UDP or before it connects). */
    TcpFlowState GetTcpState() const;
    /** @return the sender's TCP socket, nullptr over UDP or before the application started. */
    Ptr<TcpSocketBase> GetTcpSocket() const;

  protected:
    Ptr<Socket> GetSocket() const override;
    uint64_t& SentCounter() const override;
    uint64_t TakeFromSender(uint64_t bytes) override;
    uint64_t GiveBackToSender(uint64_t bytes) override;
    uint64_t AppCreditable() const override;
    /**
     * The receiver's ACK, then its FIN: a BulkSend closes its socket with its
     * last segment, so the receiver closes too, and the sender ACKs that FIN.
     */
    void SendEndOfTransfer() override;

  private:
    Ptr<BulkSendApplication> Bulk() const;
    /** The TCP sender's congestion state changed (its CongState trace). */
    void OnCongestionState(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to);

    uint32_t m_heldBufferSize{0}; //!< send buffer size of a held flow's socket, 0 if not held
    bool m_congestionTraced{false}; //!< whether OnCongestionState follows its socket
    uint64_t m_congestionSignals{0}; //!< window reductions so far (GetCongestionNotifications)
};

} // namespace ns3

#endif /* WORMHOLE_BULK_SEND_FLOW_H */
