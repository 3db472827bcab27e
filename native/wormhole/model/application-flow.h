/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A flow made of a sending application and the PacketSink that receives it.
 */
#ifndef WORMHOLE_APPLICATION_FLOW_H
#define WORMHOLE_APPLICATION_FLOW_H

#include "tracked-flow.h"

#include "ns3/application.h"
#include "ns3/packet-sink.h"

namespace ns3
{

class Socket;
class TcpSocketBase;

/**
 * @brief What BulkSend and OnOff flows share: an application writing to a
 * socket, a PacketSink counting what arrives.
 *
 * The sink is shared by every flow to its port, so the tracker tells each
 * flow what the sink received from it (NotifyReceived). A credit is taken
 * from the sender (each application its own way, TakeFromSender) and added
 * to the sink's counter, so PacketSink::GetTotalRx() includes it.
 */
class ApplicationFlow : public TrackedFlow
{
  public:
    static TypeId GetTypeId();
    ~ApplicationFlow() override;

    /**
     * @return the flow of a sending application the tracker understands (a
     * BulkSendApplication or OnOffApplication sending to an IPv4 address),
     * or nullptr.
     */
    static Ptr<ApplicationFlow> Adapt(Ptr<Application> app);

    Ptr<Application> GetApplication() const;
    /** The sink that receives the flow, once known. */
    void SetSink(Ptr<PacketSink> sink);
    Ptr<PacketSink> GetSink() const;
    /** The flow's sink received @p bytes from it. */
    void NotifyReceived(uint32_t bytes);
    /** @return true once a sized flow's sink has every byte. */
    bool IsComplete() const;

    uint8_t GetProtocol() const override;
    /** TCP's ACKs come back between the same ports, reversed; UDP sends nothing back. */
    bool GetReversePorts(uint16_t& source, uint16_t& destination) const override;
    EventId GetStartEvent() const override;
    void NotifyStarted() override;
    /** A TCP sender whose RTT estimator is ns-3's default gets a skip-aware one (SkipAwareRttEstimator::ReplaceDefault). */
    void UseSkipAwareRtt() override;
    std::string GetRttEstimator() const override;
    void CompleteVirtually() override;
    uint64_t GetDelivered() const override;
    uint64_t GetReceiverTotal() const override;
    /** TCP only: measured at the sender socket, from its Tx and Rx traces. */
    bool TraceRtt(Callback<void, Time> sink) override;
    uint64_t GetCredited() const override;
    uint64_t Credit(uint64_t bytes) override;
    uint64_t Uncredit(uint64_t bytes) override;
    std::string GetFingerprint() const override;
    std::string GetPlannedCongestionOps() const override;

  protected:
    /** A flow's size when the application has no limit. */
    static constexpr uint64_t UNLIMITED = UINT64_MAX / 4;

    /** The congestion control the source node's TcpL4Protocol gives new sockets (TCP flows only). */
    TypeId PlannedCongestionOps() const;
    /** Read what the application is configured to do (called once, at discovery). */
    void Configure(Ptr<Application> app);
    void DoDispose() override;
    /** @return true if the application sends over TCP. */
    bool IsTcp() const;
    /** @return "-tcp" or "-udp", for GetKind(). */
    std::string ProtocolSuffix() const;

    /**
     * Put on the wire what the end of the real transfer puts there when its
     * last byte arrives: the receiver's ACK of the last segment. A held flow
     * sent no segment, so without it a replay would leave its links emptier
     * than a plain run does at that instant, and the next flow on them (the
     * next step, started by this completion) would start in other conditions.
     */
    virtual void SendEndOfTransfer();
    /** @return the sink's connected TCP socket this flow arrives on, nullptr if none (UDP, not accepted yet). */
    Ptr<TcpSocketBase> GetReceiverSocket() const;

    /** @return the socket the application sends on, nullptr before it starts. */
    virtual Ptr<Socket> GetSocket() const = 0;
    /** @return the application's count of bytes handed to its socket. */
    virtual uint64_t& SentCounter() const = 0;
    /** Take up to @p bytes from the sender for a credit. @return the bytes taken. */
    virtual uint64_t TakeFromSender(uint64_t bytes) = 0;
    /** Give @p bytes of a credit back to the sender. @return the bytes it took back. */
    virtual uint64_t GiveBackToSender(uint64_t bytes) = 0;
    /** @return bytes the application has yet to write that a credit may take. */
    virtual uint64_t AppCreditable() const = 0;

    Ptr<Application> m_app;
    Ptr<PacketSink> m_sink;
    bool m_tcp{false};
    uint64_t m_received{0};
    uint64_t m_credited{0};
};

} // namespace ns3

#endif /* WORMHOLE_APPLICATION_FLOW_H */
