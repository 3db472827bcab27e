/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * HPCC's sender (Li et al., "HPCC: High Precision Congestion Control",
 * SIGCOMM 2019, Algorithm 1).
 */
#ifndef RDMA_HPCC_H
#define RDMA_HPCC_H

#include "rdma-congestion-control.h"
#include "rdma-int-header.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * @brief HPCC window and rate control of one queue pair.
 *
 * Data packets carry an INT header that each RdmaEgressQueueDisc with
 * Telemetry on stamps; the ACK echoes it. Per ACK, for every hop i the
 * sender computes the link's load from this and the previous record:
 * u_i = min(q, q_prev) / (B T) + txRate / B, where txRate is the bytes the
 * port sent between the two records over the time between them. The most
 * loaded hop gives u and tau (its record interval, at most T), and
 * U = (1 - tau / T) U + (tau / T) u. The window is
 * W = Wc / (U / eta) + W_AI when U >= eta or after MaxStage additive steps,
 * else W = Wc + W_AI; the reference window Wc takes W at most once per
 * round trip (when the ACK passes the PSN sent at the last update). The
 * queue pair keeps at most W bytes in flight and is paced at W / T, within
 * [MinRate, line rate]. W_AI = RateAi x T. Stored absolute times: the
 * previous INT records' timestamps (ShiftTimes moves them).
 *
 * GetState() is (W, Wc, U) in bytes, bytes and load; SetState() takes them
 * with no previous INT records (the next ACK's records are the first).
 */
class RdmaHpcc : public RdmaCongestionControl
{
  public:
    static TypeId GetTypeId();
    RdmaHpcc();

    void Start(DataRate lineRate) override;
    DataRate GetRate() const override;
    uint64_t GetWindow() const override;
    bool WantsTelemetry() const override;
    void NotifyAck(uint32_t nextPsn, uint32_t sendNext, const RdmaIntHeader* telemetry) override;
    void ShiftTimes(Time delta) override;
    std::vector<double> GetState() const override;
    void SetState(const std::vector<double>& state) override;

    /** @return U, the normalized inflight bytes of the most loaded hop (EWMA). */
    double GetUtilization() const;

  private:
    /** Update U from @p telemetry against the previous records. */
    double MeasureInflight(const RdmaIntHeader& telemetry);
    /** Set the window from @p utilization; move Wc too if @p updateReference. */
    void ComputeWindow(double utilization, bool updateReference);

    // Attributes
    double m_eta;
    uint32_t m_maxStage;
    DataRate m_rateAi;
    DataRate m_minRate;
    Time m_baseRtt;

    // State
    double m_lineRate{0};  //!< bit/s
    double m_window{0};    //!< W, bytes
    double m_reference{0}; //!< Wc, bytes
    double m_utilization{1};
    uint32_t m_stage{0};
    uint32_t m_lastUpdatePsn{0};
    bool m_updated{false};
    std::vector<RdmaIntHeader::Hop> m_previous;
};

} // namespace ns3

#endif /* RDMA_HPCC_H */
