/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-dcqcn.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaDcqcn");
NS_OBJECT_ENSURE_REGISTERED(RdmaDcqcn);

namespace
{
/** Rc within this fraction of the line rate counts as back at line rate. */
constexpr double LINE_RATE_TOLERANCE = 1e-6;
} // namespace

TypeId
RdmaDcqcn::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaDcqcn")
            .SetParent<RdmaCongestionControl>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaDcqcn>()
            .AddAttribute("Gain",
                          "g, the EWMA gain of alpha. Default 1/256: DCQCN paper (SIGCOMM'15) "
                          "and SimAI.conf EWMA_GAIN 0.00390625.",
                          DoubleValue(1.0 / 256),
                          MakeDoubleAccessor(&RdmaDcqcn::m_g),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("InitialAlpha",
                          "alpha at the first CNP of a flow. Default 1: Mellanox "
                          "initial_alpha_value 1023/1024.",
                          DoubleValue(1.0),
                          MakeDoubleAccessor(&RdmaDcqcn::m_initialAlpha),
                          MakeDoubleChecker<double>(0, 1))
            .AddAttribute("AlphaUpdateInterval",
                          "K, the alpha timer: alpha decays by (1 - g) after each interval "
                          "without a CNP. Default 55 us: DCQCN paper (SimAI.conf "
                          "ALPHA_RESUME_INTERVAL uses 1 us).",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&RdmaDcqcn::m_alphaInterval),
                          MakeTimeChecker(TimeStep(1)))
            .AddAttribute("RateIncreaseInterval",
                          "T, the rate-increase timer. Default 55 us: DCQCN paper (which "
                          "shortened QCN's 1.5 ms; SimAI.conf uses RP_TIMER 900 us).",
                          TimeValue(MicroSeconds(55)),
                          MakeTimeAccessor(&RdmaDcqcn::m_rateInterval),
                          MakeTimeChecker(TimeStep(1)))
            .AddAttribute("ByteCounter",
                          "B, bytes sent per byte-counter rate-increase event; 0 turns the byte "
                          "counter off (rate increases on the timer alone, as in HPCC's and "
                          "SimAI's ns-3). Default 10 MB (10 MiB): DCQCN paper.",
                          UintegerValue(10 * 1024 * 1024),
                          MakeUintegerAccessor(&RdmaDcqcn::m_byteCounter),
                          MakeUintegerChecker<uint64_t>())
            .AddAttribute("FastRecoverySteps",
                          "F, rate-increase events of fast recovery before additive increase. "
                          "Default 5: DCQCN paper (SimAI.conf FAST_RECOVERY_TIMES uses 1).",
                          UintegerValue(5),
                          MakeUintegerAccessor(&RdmaDcqcn::m_fastRecoverySteps),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("RateAi",
                          "R_AI, the additive increase of the target rate. Default 40 Mb/s: "
                          "DCQCN paper (SimAI.conf RATE_AI uses 50 Mb/s).",
                          DataRateValue(DataRate("40Mb/s")),
                          MakeDataRateAccessor(&RdmaDcqcn::m_rateAi),
                          MakeDataRateChecker())
            .AddAttribute("RateHai",
                          "R_HAI, added to the target rate at each hyper-increase event (as "
                          "Mellanox NICs and HPCC's ns-3 do). Default 100 Mb/s: SimAI.conf "
                          "RATE_HAI (HPCC's ns-3 default is 50 Mb/s).",
                          DataRateValue(DataRate("100Mb/s")),
                          MakeDataRateAccessor(&RdmaDcqcn::m_rateHai),
                          MakeDataRateChecker())
            .AddAttribute("MinRate",
                          "Lowest rate a decrease may reach. Default 100 Mb/s: SimAI.conf and "
                          "HPCC's ns-3 MIN_RATE.",
                          DataRateValue(DataRate("100Mb/s")),
                          MakeDataRateAccessor(&RdmaDcqcn::m_minRate),
                          MakeDataRateChecker())
            .AddAttribute("ClampTargetRate",
                          "Set Rt = Rc at every CNP, as the paper's pseudocode does. Off (the "
                          "default): only at the first CNP after a rate increase, so "
                          "back-to-back decreases keep the rate to recover to: Mellanox "
                          "clamp_tgt_rate 0, HPCC's ns-3 ClampTargetRate false, SimAI.conf "
                          "CLAMP_TARGET_RATE 0.",
                          BooleanValue(false),
                          MakeBooleanAccessor(&RdmaDcqcn::m_clampTargetRate),
                          MakeBooleanChecker());
    return tid;
}

RdmaDcqcn::RdmaDcqcn() = default;

void
RdmaDcqcn::Start(DataRate lineRate)
{
    m_lineRate = static_cast<double>(lineRate.GetBitRate());
    m_currentRate = m_lineRate;
    m_targetRate = m_lineRate;
    m_alpha = m_initialAlpha;
}

void
RdmaDcqcn::Stop()
{
    m_rateTimer.Cancel();
}

void
RdmaDcqcn::DoDispose()
{
    Stop();
    RdmaCongestionControl::DoDispose();
}

DataRate
RdmaDcqcn::GetRate() const
{
    return DataRate(static_cast<uint64_t>(m_currentRate));
}

DataRate
RdmaDcqcn::GetTargetRate() const
{
    return DataRate(static_cast<uint64_t>(m_targetRate));
}

double
RdmaDcqcn::GetAlpha() const
{
    return DecayedAlpha();
}

double
RdmaDcqcn::DecayedAlpha() const
{
    if (!m_cnpSeen)
    {
        return m_alpha;
    }
    int64_t intervals = (Simulator::Now() - m_lastCnp).GetTimeStep() / m_alphaInterval.GetTimeStep();
    return m_alpha * std::pow(1 - m_g, static_cast<double>(intervals));
}

uint32_t
RdmaDcqcn::GetNDecreases() const
{
    return m_decreases;
}

uint32_t
RdmaDcqcn::GetNIncreases() const
{
    return m_increases;
}

void
RdmaDcqcn::NotifyCnp()
{
    NS_LOG_FUNCTION(this);
    double alpha = DecayedAlpha();
    if (m_clampTargetRate || m_increasedSinceCnp || !m_cnpSeen)
    {
        m_targetRate = m_currentRate;
    }
    m_currentRate = std::max(static_cast<double>(m_minRate.GetBitRate()),
                             m_currentRate * (1 - alpha / 2));
    m_alpha = (1 - m_g) * alpha + m_g;
    m_cnpSeen = true;
    m_lastCnp = Simulator::Now();
    m_increasedSinceCnp = false;
    ++m_decreases;

    m_timerStage = 0;
    m_byteStage = 0;
    m_bytesSinceStage = 0;
    ScheduleRateTimer();
}

void
RdmaDcqcn::ShiftTimes(Time delta)
{
    m_lastCnp += delta;
}

std::vector<double>
RdmaDcqcn::GetState() const
{
    return {m_currentRate, m_targetRate, DecayedAlpha()};
}

void
RdmaDcqcn::SetState(const std::vector<double>& state)
{
    NS_ABORT_MSG_IF(state.size() != 3,
                    "RdmaDcqcn: a state is (rate, target rate, alpha), got " << state.size()
                                                                            << " numbers");
    double lowest = static_cast<double>(m_minRate.GetBitRate());
    m_currentRate = std::clamp(state[0], lowest, m_lineRate);
    m_targetRate = std::clamp(state[1], lowest, m_lineRate);
    m_alpha = state[2];
    // a flow at line rate in both rates has seen no CNP: its first one clamps Rt as for a new flow
    m_cnpSeen = m_currentRate < m_lineRate || m_targetRate < m_lineRate;
    m_lastCnp = Simulator::Now();
    m_increasedSinceCnp = false;
    m_timerStage = 0;
    m_byteStage = 0;
    m_bytesSinceStage = 0;
    m_rateTimer.Cancel();
    if (m_currentRate < m_lineRate || m_targetRate < m_lineRate)
    {
        ScheduleRateTimer();
    }
}

void
RdmaDcqcn::ScheduleRateTimer()
{
    m_rateTimer.Cancel();
    m_rateTimer = Simulator::Schedule(m_rateInterval, &RdmaDcqcn::RateTimerExpired, this);
}

void
RdmaDcqcn::RateTimerExpired()
{
    Increase();
    ++m_timerStage;
    if (m_currentRate < m_lineRate || m_targetRate < m_lineRate)
    {
        m_rateTimer = Simulator::Schedule(m_rateInterval, &RdmaDcqcn::RateTimerExpired, this);
    }
}

void
RdmaDcqcn::NotifySent(uint32_t bytes)
{
    if (m_byteCounter == 0 || (m_currentRate >= m_lineRate && m_targetRate >= m_lineRate))
    {
        return;
    }
    m_bytesSinceStage += bytes;
    while (m_bytesSinceStage >= m_byteCounter)
    {
        m_bytesSinceStage -= m_byteCounter;
        Increase();
        ++m_byteStage;
    }
}

void
RdmaDcqcn::Increase()
{
    ++m_increases;
    m_increasedSinceCnp = true;
    uint32_t byteStage = m_byteCounter == 0 ? m_timerStage : m_byteStage;
    uint32_t low = std::min(m_timerStage, byteStage);
    uint32_t high = std::max(m_timerStage, byteStage);
    if (high < m_fastRecoverySteps)
    {
        // fast recovery: Rt stays
    }
    else if (low > m_fastRecoverySteps)
    {
        m_targetRate += static_cast<double>(m_rateHai.GetBitRate());
    }
    else
    {
        m_targetRate += static_cast<double>(m_rateAi.GetBitRate());
    }
    m_targetRate = std::min(m_targetRate, m_lineRate);
    m_currentRate = std::min((m_targetRate + m_currentRate) / 2, m_lineRate);
    if (m_targetRate >= m_lineRate && m_lineRate - m_currentRate < m_lineRate * LINE_RATE_TOLERANCE)
    {
        m_currentRate = m_lineRate; // halving the gap never closes it exactly
    }
}

} // namespace ns3
