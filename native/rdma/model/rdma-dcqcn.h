/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015, section 3).
 */
#ifndef RDMA_DCQCN_H
#define RDMA_DCQCN_H

#include "rdma-congestion-control.h"

#include "ns3/event-id.h"

#include <cstdint>

namespace ns3
{

/**
 * @brief DCQCN rate control of one queue pair.
 *
 * State: current rate Rc, target rate Rt, congestion estimate alpha.
 * - On a CNP: Rt = Rc (always with ClampTargetRate; otherwise only if a rate
 *   increase happened since the previous decrease, as Mellanox NICs and
 *   HPCC's ns-3 model do), Rc = max(MinRate, Rc (1 - alpha / 2)),
 *   alpha = (1 - g) alpha + g; the rate-increase timer, the byte counter and
 *   both stage counters restart.
 * - Alpha timer: alpha = (1 - g) alpha for every whole AlphaUpdateInterval
 *   without a CNP. It is evaluated when alpha is used (at the next CNP or
 *   GetAlpha()) from the time of the last CNP, which is exactly what a timer
 *   restarted at each CNP computes, without an event per interval.
 * - Rate increase: an event every RateIncreaseInterval (timer stage T) and
 *   every ByteCounter bytes sent (byte stage BC; 0 disables the byte counter
 *   and BC follows T) since the last decrease. Stages count the events before
 *   the current one. Fast recovery while max(T, BC) < F: Rc = (Rt + Rc) / 2.
 *   Hyper increase once min(T, BC) > F: Rt += RateHai, then Rc = (Rt + Rc) / 2.
 *   Additive increase otherwise: Rt += RateAi, then Rc = (Rt + Rc) / 2.
 * Rates stay within [MinRate, line rate]. Before its first CNP a flow sends
 * at line rate; the rate-increase timer stops once Rc and Rt are back at line
 * rate. Stored absolute time: the last CNP (ShiftTimes moves it).
 *
 * GetState() is (Rc, Rt, alpha) in bit/s, bit/s and [0, 1]; SetState()
 * takes them as right after a CNP (unless both rates are at line rate, which
 * no CNP has touched): alpha decays and the rate-increase timer and stages
 * restart from now.
 */
class RdmaDcqcn : public RdmaCongestionControl
{
  public:
    static TypeId GetTypeId();
    RdmaDcqcn();

    void Start(DataRate lineRate) override;
    void Stop() override;
    DataRate GetRate() const override;
    DataRate GetTargetRate() const override;
    double GetAlpha() const override;
    void NotifySent(uint32_t bytes) override;
    void NotifyCnp() override;
    void ShiftTimes(Time delta) override;
    std::vector<double> GetState() const override;
    void SetState(const std::vector<double>& state) override;

    /** @return rate decreases so far (one per CNP). */
    uint32_t GetNDecreases() const;
    /** @return rate-increase events so far (timer and byte counter). */
    uint32_t GetNIncreases() const;

  private:
    void DoDispose() override;
    /** @return alpha after the decays due since the last CNP. */
    double DecayedAlpha() const;
    void RateTimerExpired();
    /** One rate-increase event, judged on the stages of the events before it. */
    void Increase();
    void ScheduleRateTimer();

    // Attributes
    double m_g;
    double m_initialAlpha;
    Time m_alphaInterval;
    Time m_rateInterval;
    uint64_t m_byteCounter;
    uint32_t m_fastRecoverySteps;
    DataRate m_rateAi;
    DataRate m_rateHai;
    DataRate m_minRate;
    bool m_clampTargetRate;

    // State
    double m_lineRate{0};    //!< bit/s
    double m_currentRate{0}; //!< Rc, bit/s
    double m_targetRate{0};  //!< Rt, bit/s
    double m_alpha{1}; //!< alpha right after the last CNP
    bool m_cnpSeen{false};
    Time m_lastCnp;
    bool m_increasedSinceCnp{false};
    uint32_t m_timerStage{0};
    uint32_t m_byteStage{0};
    uint64_t m_bytesSinceStage{0};
    uint32_t m_decreases{0};
    uint32_t m_increases{0};
    EventId m_rateTimer;
};

} // namespace ns3

#endif /* RDMA_DCQCN_H */
