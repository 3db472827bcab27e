/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "skip-aware-rtt-estimator.h"

#include "wormhole-simulator-impl.h"

#include "ns3/simulator.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(SkipAwareRttEstimator);

TypeId
SkipAwareRttEstimator::GetTypeId()
{
    static TypeId tid = TypeId("ns3::SkipAwareRttEstimator")
                            .SetParent<RttMeanDeviation>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<SkipAwareRttEstimator>();
    return tid;
}

SkipAwareRttEstimator::SkipAwareRttEstimator()
    : m_correctedSamples(0)
{
}

SkipAwareRttEstimator::SkipAwareRttEstimator(const SkipAwareRttEstimator& other)
    : RttMeanDeviation(other),
      m_correctedSamples(other.m_correctedSamples)
{
}

void
SkipAwareRttEstimator::Measurement(Time measure)
{
    auto impl = DynamicCast<WormholeSimulatorImpl>(Simulator::GetImplementation());
    if (impl)
    {
        Time now = Simulator::Now();
        Time paused = impl->PausedWithin(now - measure, now);
        if (paused.IsStrictlyPositive())
        {
            measure = std::max(measure - paused, TimeStep(1));
            ++m_correctedSamples;
        }
    }
    RttMeanDeviation::Measurement(measure);
}

Ptr<RttEstimator>
SkipAwareRttEstimator::Copy() const
{
    return CopyObject<SkipAwareRttEstimator>(this);
}

uint64_t
SkipAwareRttEstimator::GetCorrectedSamples() const
{
    return m_correctedSamples;
}

} // namespace ns3
