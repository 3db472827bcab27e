/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The egress queue of a switch port carrying RoCEv2: control packets first,
 * data through an ECN-marking child queue disc, paused by PFC.
 */
#ifndef RDMA_EGRESS_QUEUE_DISC_H
#define RDMA_EGRESS_QUEUE_DISC_H

#include "ns3/data-rate.h"
#include "ns3/queue-disc.h"

#include <cstdint>

namespace ns3
{

class RdmaPfcPort;
class RdmaPfcSwitch;

/**
 * @brief Two strict-priority classes: 0 for control, 1 for data.
 *
 * Packets whose IPv4 DSCP is ControlDscp (RoCE ACKs, NAKs and CNPs) go to
 * class 0, everything else to class 1, whose child queue disc (RED configured
 * as DCQCN's marker by RdmaSwitchHelper) marks CE. Class 0 is always served
 * first. Class 1 is not served while the port's RdmaPfcPort is paused, and
 * the port's resume restarts the queue disc. With an RdmaPfcSwitch set, a
 * data packet whose ingress port has used up its PFC headroom is dropped
 * here (and counted by the switch).
 *
 * With Telemetry on, every RoCEv2 data packet that carries an INT header
 * (BTH telemetry flag, sent by HPCC queue pairs) gets this port's record as
 * it leaves the queue disc: time, bytes this port has sent, bytes still
 * queued, line rate.
 */
class RdmaEgressQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId();
    RdmaEgressQueueDisc();

    /** Pause class 1 while @p port is paused; restart on its resume. */
    void SetPfcPort(Ptr<RdmaPfcPort> port);
    /** Ask @p buffer to admit every data packet (PFC headroom accounting). */
    void SetPfcSwitch(Ptr<RdmaPfcSwitch> buffer);

  private:
    void DoDispose() override;
    bool DoEnqueue(Ptr<QueueDiscItem> item) override;
    Ptr<QueueDiscItem> DoDequeue() override;
    Ptr<const QueueDiscItem> DoPeek() override;
    bool CheckConfig() override;
    void InitializeParams() override;
    bool IsControl(Ptr<const QueueDiscItem> item) const;
    bool DataPaused() const;
    /** Append this port's INT record if @p item is a data packet that carries INT. */
    void Stamp(Ptr<QueueDiscItem> item);

    uint8_t m_controlDscp;
    bool m_telemetry;
    DataRate m_lineRate; //!< of the device, read at the first stamp
    Ptr<RdmaPfcPort> m_pfcPort;
    Ptr<RdmaPfcSwitch> m_pfcSwitch;
    uint64_t m_txBytes{0}; //!< bytes dequeued towards the device (INT txBytes)
};

} // namespace ns3

#endif /* RDMA_EGRESS_QUEUE_DISC_H */
