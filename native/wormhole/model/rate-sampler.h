/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The FlowTracker's sampling: what each sampled flow delivered, sent, paced
 * and met, once per sampling period, for the controller to judge steadiness.
 */
#ifndef WORMHOLE_RATE_SAMPLER_H
#define WORMHOLE_RATE_SAMPLER_H

#include "flow-registry.h"
#include "tcp-flow-state.h"

#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

namespace ns3
{

/**
 * @brief Samples every sampled flow's progress each sampling period, in a
 * housekeeping event of the WormholeSimulatorImpl (none in a baseline run).
 *
 * Per sample and flow: delivered bytes, bytes its sender put on the network,
 * its pacing rate, the congestion signals it met and its congestion window;
 * each flow keeps the last SampleDepth of them. Sampling pauses by itself
 * while no sampled flow is active and sending. A flow can also keep
 * snapshots (progress and sender state at each sample), which survive skips.
 */
class RateSampler : public Object
{
  public:
    static TypeId GetTypeId();

    /** Sample the flows of @p registry. */
    void SetRegistry(Ptr<FlowRegistry> registry);
    /** How many samples (and snapshots) each flow keeps. */
    void SetSampleDepth(uint32_t depth);
    /** @return how many samples (and snapshots) each flow keeps. */
    uint32_t GetSampleDepth() const;
    /** Called with a flow whose sampling window begins (sampled from now on, or cleared). */
    void SetWindowBeginsCallback(Callback<void, uint32_t> onWindowBegins);

    /**
     * Sample every `period` and call `onWindow` every `samplesPerWindow`
     * samples.
     */
    void Configure(Time period, uint32_t samplesPerWindow, Callback<void> onWindow);
    /**
     * Whether a sample calls `onWindow` (the default) or is only taken: a
     * caller that has nothing to decide until its next call of its own
     * saves the call, and learns how many samples passed from GetSampleCount.
     */
    void SetWindowsReported(bool reported);
    /** @return the samples taken so far, reported or not. */
    uint64_t GetSampleCount() const;
    /** Include or exclude a flow from sampling; excluding clears its samples. */
    void SetSampled(uint32_t flow, bool sampled);
    /** Forget the samples of these flows (a partition's, when it forms): its window starts now. */
    void ClearSamples(const std::vector<uint32_t>& flows);
    /** @return the delivered-bytes samples of a flow, oldest first. */
    std::vector<uint64_t> GetSamples(uint32_t flow) const;
    /**
     * @return the bytes the flow's sender had put on the network (0 if it
     * cannot tell: only paced flows do) at the same instants as GetSamples.
     */
    std::vector<uint64_t> GetSentSamples(uint32_t flow) const;
    /**
     * @return the flow's sending rate (bytes/s on the wire its congestion
     * control paced it at, 0 if not paced) at the same instants as GetSamples.
     */
    std::vector<double> GetSendingRateSamples(uint32_t flow) const;
    /**
     * @return the congestion signals its sender had reacted to (CNPs, TCP's
     * window reductions: TrackedFlow::GetCongestionNotifications), at the
     * same instants as GetSamples.
     */
    std::vector<uint64_t> GetNotificationSamples(uint32_t flow) const;
    /**
     * @return the flow's congestion window (TCP's cwnd, 0 for a flow without
     * one), at the same instants as GetSamples.
     */
    std::vector<uint64_t> GetWindowSamples(uint32_t flow) const;
    /**
     * @return the flows whose delivered bytes moved between two samples since
     * the last call (each once), and forget them: a partition none of whose
     * flows is among them delivered nothing since, and is judged alike.
     */
    std::vector<uint32_t> TakeProgressedFlows();
    /** Keep (or stop keeping, dropping the kept ones) snapshots of the flow at each sample. */
    void SetSnapshotting(uint32_t flow, bool on);
    /** @return the kept snapshots of a flow, oldest first. */
    std::vector<FlowSnapshot> GetSnapshots(uint32_t flow) const;
    /** Start sampling if it is paused and some sampled flow is active and sending. */
    void ScheduleSample();

  private:
    /** What the sampler keeps of a flow. */
    struct FlowSamples
    {
        bool sampled{false};
        std::deque<uint64_t> delivered;
        std::deque<uint64_t> sent;
        std::deque<double> rate;
        std::deque<uint64_t> notifications;
        std::deque<uint64_t> window;
        bool snapshotting{false};
        bool progressed{false}; //!< listed in m_progressed
        std::deque<FlowSnapshot> snapshots;

        /** Forget the rate samples (not the snapshots). */
        void Clear();
    };

    /** @return what the sampler keeps of a flow of the registry. */
    FlowSamples& Of(uint32_t flow);
    /** @return what the sampler keeps of a flow of the registry (nothing yet: none). */
    const FlowSamples& Of(uint32_t flow) const;
    /** Take one sample of every sampled active flow. */
    void Sample();

    Ptr<FlowRegistry> m_registry;
    //! by flow number, made as each flow is first asked about: a paper-scale run registers
    //! 99,200 flows and samples a few hundred (six deques a flow, moved at every growth of a
    //! vector of them, made SetSnapshotting cost milliseconds)
    std::vector<std::unique_ptr<FlowSamples>> m_flows;
    std::vector<uint32_t> m_sampledFlows; //!< flows SetSampled(true) was last called for
    std::vector<uint32_t> m_progressed;   //!< flows that progressed since TakeProgressedFlows
    Time m_period;
    uint32_t m_samplesPerWindow{0};
    uint32_t m_depth{512};
    uint64_t m_count{0}; //!< samples taken
    bool m_windowsReported{true}; //!< whether a window's last sample calls m_onWindow
    EventId m_sampleEvent;
    Callback<void> m_onWindow;
    Callback<void, uint32_t> m_onWindowBegins;
};

} // namespace ns3

#endif /* WORMHOLE_RATE_SAMPLER_H */
