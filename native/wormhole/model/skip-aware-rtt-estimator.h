/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * RttMeanDeviation that does not count the time a flow spent fast-forwarded.
 */
#ifndef SKIP_AWARE_RTT_ESTIMATOR_H
#define SKIP_AWARE_RTT_ESTIMATOR_H

#include "ns3/rtt-estimator.h"

namespace ns3
{

/**
 * @brief Mean-deviation RTT estimator whose samples exclude skipped time.
 *
 * A segment in flight when its partition is fast-forwarded is acknowledged
 * dt later than it would have been, so its RTT sample would be inflated by
 * dt and the RTO with it. Before passing a sample on, this estimator subtracts
 * the part of the sample's interval during which the flow's partition was
 * paused (WormholeSimulatorImpl::PausedWithin). Without skips, or under
 * another simulator implementation, it behaves exactly as RttMeanDeviation.
 */
class SkipAwareRttEstimator : public RttMeanDeviation
{
  public:
    static TypeId GetTypeId();

    SkipAwareRttEstimator();
    SkipAwareRttEstimator(const SkipAwareRttEstimator& other);

    void Measurement(Time measure) override;
    Ptr<RttEstimator> Copy() const override;

    /** @return how many samples had skipped time removed. */
    uint64_t GetCorrectedSamples() const;

  private:
    uint64_t m_correctedSamples;
};

} // namespace ns3

#endif /* SKIP_AWARE_RTT_ESTIMATOR_H */
