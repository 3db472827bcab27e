/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * An RDMA queue pair's flow (RoCEv2 with DCQCN, HPCC, ...), as the
 * accelerator sees it.
 */
#ifndef WORMHOLE_RDMA_FLOW_H
#define WORMHOLE_RDMA_FLOW_H

#include "ns3/tracked-flow.h"

namespace ns3
{

class RdmaQueuePair;

/**
 * @brief One RDMA WRITE on its queue pair: kind "rdma-" and the congestion
 * control's name ("rdma-dcqcn", "rdma-hpcc").
 *
 * Data packets are UDP from the queue pair's source port to port 4791; ACKs,
 * NAKs and CNPs come back from the same source port to 4791, so both
 * directions follow the flow's own ECMP path. Delivered bytes are the
 * receiver's in-order bytes. A credit is whole packets never sent yet,
 * keeping the last one (RdmaQueuePair::Credit), on both ends at once; a
 * skip shifts the pacing clock, CNP times and telemetry timestamps
 * (RdmaQueuePair::ShiftTimes). The congestion state is the congestion
 * control's own (RdmaCongestionControl::GetState: DCQCN's rate, target rate
 * and alpha). A held queue pair is one that has not started: its two ends
 * exist and are connected from creation, so it sends nothing until resumed.
 */
class RdmaFlow : public TrackedFlow
{
  public:
    static TypeId GetTypeId();
    RdmaFlow();
    ~RdmaFlow() override;

    /** Watch @p qp, which has started or has a pending start event (called once). */
    void SetQueuePair(Ptr<RdmaQueuePair> qp);
    Ptr<RdmaQueuePair> GetQueuePair() const;

    std::string GetKind() const override;
    uint8_t GetProtocol() const override;
    bool GetReversePorts(uint16_t& source, uint16_t& destination) const override;
    std::string GetCongestionOps() const override;
    /** True: every RDMA congestion control paces its queue pair (a rate, not a window). */
    bool IsPaced() const override;
    /** From the queue pair's AckRtt trace. */
    bool TraceRtt(Callback<void, Time> sink) override;
    EventId GetStartEvent() const override;
    bool CanBeHeld() const override;
    void StartHeld() override;
    bool IsHeld() const override;
    void ResumeHeld(const std::vector<double>& state) override;
    void CompleteVirtually() override;
    /** True: the receiver's last ACK waits for SendOwedEndOfTransfer. */
    bool OweEndOfTransfer() override;
    void SendOwedEndOfTransfer() override;
    uint64_t GetDelivered() const override;
    uint64_t GetReceiverTotal() const override;
    uint64_t GetCredited() const override;
    uint64_t GetSendable() const override;
    uint64_t GetSent() const override;
    double GetSendingRate() const override;
    uint64_t GetCongestionNotifications() const override;
    uint64_t Credit(uint64_t bytes) override;
    uint64_t Uncredit(uint64_t bytes) override;
    void ShiftTimes(Time delta) override;
    std::string GetFingerprint() const override;
    std::vector<double> GetCongestionState() const override;
    bool SetCongestionState(const std::vector<double>& state) override;

  private:
    void DoDispose() override;

    Ptr<RdmaQueuePair> m_qp;
    bool m_held{false};
    bool m_owesEnd{false}; //!< the next virtual completion leaves its last ACK owed
};

} // namespace ns3

#endif /* WORMHOLE_RDMA_FLOW_H */
