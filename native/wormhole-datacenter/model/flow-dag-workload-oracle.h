/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Lets the accelerator follow FlowDag workloads.
 */
#ifndef WORMHOLE_FLOW_DAG_WORKLOAD_ORACLE_H
#define WORMHOLE_FLOW_DAG_WORKLOAD_ORACLE_H

#include "ns3/workload-oracle.h"

#include <vector>

namespace ns3
{

class EventId;
class FlowDag;

/**
 * @brief The WorkloadOracle of FlowDags: the tracker discovers a flow right
 * after the release that created it, and a memo sees the flows every FlowDag
 * will start at times already known (FlowDag::GetUpcomingFlows).
 *
 * This module also classifies the graphs' own events: every workload event a
 * FlowDag schedules (releases, compute completions) is retagged
 * WormholeSimulatorImpl::WORKLOAD as soon as it is scheduled
 * (RetagWorkloadEvent, added as a FlowDag workload-event hook), so the
 * accelerator never moves it with a flow. Both registrations happen in this
 * module's static initializer.
 */
class FlowDagWorkloadOracle : public WorkloadOracle
{
  public:
    static TypeId GetTypeId();
    FlowDagWorkloadOracle();
    ~FlowDagWorkloadOracle() override;

    void FollowNewWorkloads(Callback<void> onRelease) override;
    std::vector<UpcomingFlow> GetUpcomingFlows(Time horizon,
                                               const std::vector<KnownFlowEnd>& ends,
                                               bool earliest = false) const override;

    /**
     * Under the WormholeSimulatorImpl, make @p event (a FlowDag's release or
     * compute completion) a workload event; under any other simulator, do nothing.
     */
    static void RetagWorkloadEvent(const EventId& event);

  private:
    void OnRelease(uint32_t task);

    std::vector<const FlowDag*> m_followed; //!< FlowDags whose releases we follow
    Callback<void> m_onRelease;
};

} // namespace ns3

#endif /* WORMHOLE_FLOW_DAG_WORKLOAD_ORACLE_H */
