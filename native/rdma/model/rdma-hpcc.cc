/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-hpcc.h"

#include "ns3/abort.h"
#include "ns3/double.h"
#include "ns3/log.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaHpcc");
NS_OBJECT_ENSURE_REGISTERED(RdmaHpcc);

TypeId
RdmaHpcc::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaHpcc")
            .SetParent<RdmaCongestionControl>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaHpcc>()
            .AddAttribute("TargetUtilization",
                          "eta, the utilization HPCC aims at. Default 0.95: HPCC paper and "
                          "SimAI.conf U_TARGET.",
                          DoubleValue(0.95),
                          MakeDoubleAccessor(&RdmaHpcc::m_eta),
                          MakeDoubleChecker<double>(0.01, 1))
            .AddAttribute("MaxStage",
                          "Additive-increase steps before a multiplicative adjustment even "
                          "below eta. Default 5: HPCC paper (maxStage) and HPCC's ns-3 "
                          "MiThresh.",
                          UintegerValue(5),
                          MakeUintegerAccessor(&RdmaHpcc::m_maxStage),
                          MakeUintegerChecker<uint32_t>())
            .AddAttribute("RateAi",
                          "Additive increase as a rate: W_AI = RateAi x BaseRtt. Default "
                          "50 Mb/s: SimAI.conf RATE_AI.",
                          DataRateValue(DataRate("50Mb/s")),
                          MakeDataRateAccessor(&RdmaHpcc::m_rateAi),
                          MakeDataRateChecker())
            .AddAttribute("MinRate",
                          "Lowest pacing rate. Default 100 Mb/s: SimAI.conf MIN_RATE.",
                          DataRateValue(DataRate("100Mb/s")),
                          MakeDataRateAccessor(&RdmaHpcc::m_minRate),
                          MakeDataRateChecker())
            .AddAttribute("BaseRtt",
                          "T, the base round-trip time of the network (HPCC uses the largest "
                          "one); the initial window is line rate x T.",
                          TimeValue(MicroSeconds(10)),
                          MakeTimeAccessor(&RdmaHpcc::m_baseRtt),
                          MakeTimeChecker(TimeStep(1)));
    return tid;
}

RdmaHpcc::RdmaHpcc() = default;

void
RdmaHpcc::Start(DataRate lineRate)
{
    m_lineRate = static_cast<double>(lineRate.GetBitRate());
    m_window = m_lineRate * m_baseRtt.GetSeconds() / 8;
    m_reference = m_window;
}

DataRate
RdmaHpcc::GetRate() const
{
    double rate = m_window * 8 / m_baseRtt.GetSeconds();
    rate = std::clamp(rate, static_cast<double>(m_minRate.GetBitRate()), m_lineRate);
    return DataRate(static_cast<uint64_t>(rate));
}

uint64_t
RdmaHpcc::GetWindow() const
{
    return std::max<uint64_t>(1, static_cast<uint64_t>(m_window));
}

bool
RdmaHpcc::WantsTelemetry() const
{
    return true;
}

double
RdmaHpcc::GetUtilization() const
{
    return m_utilization;
}

void
RdmaHpcc::ShiftTimes(Time delta)
{
    for (auto& hop : m_previous)
    {
        hop.timeNs += static_cast<uint32_t>(delta.GetNanoSeconds());
    }
}

std::vector<double>
RdmaHpcc::GetState() const
{
    return {m_window, m_reference, m_utilization};
}

void
RdmaHpcc::SetState(const std::vector<double>& state)
{
    NS_ABORT_MSG_IF(state.size() != 3,
                    "RdmaHpcc: a state is (window, reference window, utilization), got "
                        << state.size() << " numbers");
    m_window = state[0];
    m_reference = state[1];
    m_utilization = state[2];
    m_stage = 0;
    m_updated = false;
    m_previous.clear();
}

void
RdmaHpcc::NotifyAck(uint32_t nextPsn, uint32_t sendNext, const RdmaIntHeader* telemetry)
{
    if (!telemetry || telemetry->GetNHops() == 0)
    {
        return;
    }
    if (m_previous.size() == telemetry->GetNHops())
    {
        bool updateReference = !m_updated || static_cast<int32_t>(nextPsn - m_lastUpdatePsn) > 0;
        ComputeWindow(MeasureInflight(*telemetry), updateReference);
        if (updateReference)
        {
            m_updated = true;
            m_lastUpdatePsn = sendNext;
        }
    }
    m_previous.resize(telemetry->GetNHops());
    for (uint32_t i = 0; i < telemetry->GetNHops(); ++i)
    {
        m_previous[i] = telemetry->GetHop(i);
    }
}

double
RdmaHpcc::MeasureInflight(const RdmaIntHeader& telemetry)
{
    double t = m_baseRtt.GetSeconds();
    double u = 0;
    double tau = t;
    for (uint32_t i = 0; i < telemetry.GetNHops(); ++i)
    {
        RdmaIntHeader::Hop now = telemetry.GetHop(i);
        const RdmaIntHeader::Hop& before = m_previous[i];
        uint32_t interval = now.timeNs - before.timeNs;
        if (interval == 0 || now.rateBps == 0)
        {
            continue;
        }
        double seconds = interval * 1e-9;
        double bytesPerSecond = static_cast<double>(now.rateBps) / 8;
        double txRate = static_cast<uint32_t>(now.txBytes - before.txBytes) / seconds;
        double load = std::min(now.queueBytes, before.queueBytes) / (bytesPerSecond * t) +
                      txRate / bytesPerSecond;
        if (load > u)
        {
            u = load;
            tau = seconds;
        }
    }
    tau = std::min(tau, t);
    m_utilization = (1 - tau / t) * m_utilization + tau / t * u;
    return m_utilization;
}

void
RdmaHpcc::ComputeWindow(double utilization, bool updateReference)
{
    double increase = static_cast<double>(m_rateAi.GetBitRate()) * m_baseRtt.GetSeconds() / 8;
    double window;
    if (utilization >= m_eta || m_stage >= m_maxStage)
    {
        window = m_reference / (std::max(utilization, 1e-9) / m_eta) + increase;
        if (updateReference)
        {
            m_stage = 0;
        }
    }
    else
    {
        window = m_reference + increase;
        if (updateReference)
        {
            ++m_stage;
        }
    }
    double maxWindow = m_lineRate * m_baseRtt.GetSeconds() / 8;
    double minWindow = static_cast<double>(m_minRate.GetBitRate()) * m_baseRtt.GetSeconds() / 8;
    m_window = std::clamp(window, minWindow, maxWindow);
    if (updateReference)
    {
        m_reference = m_window;
    }
}

} // namespace ns3
