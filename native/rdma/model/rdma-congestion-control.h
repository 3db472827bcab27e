/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * What a queue pair's congestion control tells its NIC: a sending rate and,
 * for window-based schemes, a limit on bytes in flight.
 */
#ifndef RDMA_CONGESTION_CONTROL_H
#define RDMA_CONGESTION_CONTROL_H

#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class RdmaIntHeader;

/**
 * @brief Sender-side congestion control of one queue pair (a reaction point).
 *
 * One instance per queue pair, created from the NIC's CongestionControl
 * TypeId. The queue pair reports what it sends and what comes back; the NIC
 * paces the queue pair at GetRate() and keeps at most GetWindow() bytes in
 * flight when the window is not zero.
 */
class RdmaCongestionControl : public Object
{
  public:
    static TypeId GetTypeId();

    /** Start controlling a flow whose NIC sends at @p lineRate. */
    virtual void Start(DataRate lineRate) = 0;
    /** The flow is over: cancel timers. */
    virtual void Stop();

    /** @return the rate the queue pair is paced at. */
    virtual DataRate GetRate() const = 0;
    /** @return the rate the scheme is recovering towards (DCQCN's Rt); GetRate() if none. */
    virtual DataRate GetTargetRate() const;
    /** @return the congestion estimate (DCQCN's alpha); 0 if the scheme has none. */
    virtual double GetAlpha() const;
    /** @return the bytes allowed in flight, 0 for a purely rate-based scheme. */
    virtual uint64_t GetWindow() const;
    /** @return true if data packets must carry an INT header for switches to stamp. */
    virtual bool WantsTelemetry() const;

    /** @p bytes (on the wire) left the NIC for this queue pair. */
    virtual void NotifySent(uint32_t bytes);
    /** A congestion notification packet arrived for this queue pair. */
    virtual void NotifyCnp();
    /**
     * An ACK arrived that acknowledges everything before @p nextPsn, while
     * the queue pair's next PSN to send is @p sendNext.
     * @param telemetry the INT records the ACK echoes, nullptr if it has none
     */
    virtual void NotifyAck(uint32_t nextPsn, uint32_t sendNext, const RdmaIntHeader* telemetry);
    /**
     * Add @p delta to every absolute time the scheme stores (not to its
     * pending ns-3 events, which the simulator moves).
     */
    virtual void ShiftTimes(Time delta);

    /**
     * @return the scheme's state as numbers, in the scheme's own order (what
     * a memo records of a flow): empty for a scheme that keeps none.
     */
    virtual std::vector<double> GetState() const;
    /**
     * Continue from a state GetState() gave, as if the event that produced
     * it had just happened (timers restart now). Called after Start().
     */
    virtual void SetState(const std::vector<double>& state);
};

} // namespace ns3

#endif /* RDMA_CONGESTION_CONTROL_H */
