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

class TcpSocketBase;

/**
 * @brief Mean-deviation RTT estimator whose samples exclude skipped time.
 *
 * A segment in flight when its partition is fast-forwarded is acknowledged
 * dt later than it would have been, so its RTT sample would be inflated by
 * dt and the RTO with it. Before passing a sample on, this estimator subtracts
 * the part of the sample's interval during which the flow's partition was
 * paused (WormholeSimulatorImpl::PausedWithin). Without skips, or under
 * another simulator implementation, it behaves exactly as RttMeanDeviation.
 *
 * The tracker gives one to every TCP flow it follows when the flow starts
 * sending (ReplaceDefault), in place of ns-3's default estimator: nothing
 * global is configured, so a script's Config::Reset() (which ns-3's test
 * cases call) cannot take it away, and an estimator the script chose itself
 * is left as it is (the flow is then not skipped).
 */
class SkipAwareRttEstimator : public RttMeanDeviation
{
  public:
    static TypeId GetTypeId();

    SkipAwareRttEstimator();
    SkipAwareRttEstimator(const SkipAwareRttEstimator& other);

    /**
     * If the socket's estimator is ns-3's default (exactly RttMeanDeviation, not a subclass),
     * replace it with a SkipAwareRttEstimator holding the same attributes and
     * state (estimate, variation, samples).
     * @return true if the socket's estimator is skip-aware afterwards.
     */
    static bool ReplaceDefault(Ptr<TcpSocketBase> socket);

    TypeId GetInstanceTypeId() const override;
    void Measurement(Time measure) override;
    Ptr<RttEstimator> Copy() const override;

    /** @return how many samples had skipped time removed. */
    uint64_t GetCorrectedSamples() const;

  private:
    uint64_t m_correctedSamples;
};

} // namespace ns3

#endif /* SKIP_AWARE_RTT_ESTIMATOR_H */
