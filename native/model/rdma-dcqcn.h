/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * DCQCN's reaction point (Zhu et al., "Congestion Control for Large-Scale
 * RDMA Deployments", SIGCOMM 2015, section 3).
 */
#ifndef WORMHOLE_RDMA_DCQCN_H
#define WORMHOLE_RDMA_DCQCN_H

#include "rdma-congestion-control.h"

#include "ns3/event-id.h"

#include <cstdint>

namespace ns3
{

/**
 * @brief DCQCN rate control of one queue pair.
 *
 * State: current rate Rc, target rate Rt, congestion estimate alpha.
 * - On a CNP: Rt = Rc, Rc = Rc (1 - alpha / 2), alpha = (1 - g) alpha + g;
 *   the rate-increase timer, byte counter and both stage counters restart.
 * - Alpha timer: every AlphaUpdateInterval without a CNP, alpha = (1 - g) alpha.
 * - Rate increase: an event every RateIncreaseInterval (timer stage T) and every
 *   ByteCounter bytes sent (byte stage BC) since the last decrease. Fast
 *   recovery while max(T, BC) < F: Rc = (Rt + Rc) / 2. Hyper increase once
 *   min(T, BC) > F: Rt += (min(T, BC) - F) * RateHai, then Rc = (Rt + Rc) / 2.
 *   Additive increase otherwise: Rt += RateAi, then Rc = (Rt + Rc) / 2.
 * Rates stay within [MinRate, line rate]. Before its first CNP a flow sends
 * at line rate and runs no timer; the rate-increase timer stops again once
 * Rc and Rt are back at line rate. Timers are ns-3 events, so this class
 * stores no absolute time.
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

    /** @return rate decreases so far (one per CNP). */
    uint32_t GetNDecreases() const;
    /** @return rate-increase events so far (timer and byte counter). */
    uint32_t GetNIncreases() const;

  private:
    void DoDispose() override;
    void AlphaTimerExpired();
    void RateTimerExpired();
    /** One rate-increase event (after the timer or byte stage was advanced). */
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

    // State
    double m_lineRate{0};    //!< bit/s
    double m_currentRate{0}; //!< Rc, bit/s
    double m_targetRate{0};  //!< Rt, bit/s
    double m_alpha{1};
    bool m_cnpSinceAlphaUpdate{false};
    uint32_t m_timerStage{0};
    uint32_t m_byteStage{0};
    uint64_t m_bytesSinceStage{0};
    uint32_t m_decreases{0};
    uint32_t m_increases{0};
    EventId m_alphaTimer;
    EventId m_rateTimer;
};

} // namespace ns3

#endif /* WORMHOLE_RDMA_DCQCN_H */
