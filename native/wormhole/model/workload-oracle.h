/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Extension point of the FlowTracker: a workload model (a dependency graph of
 * flows) that creates flows while the simulation runs and knows some of them
 * in advance.
 */
#ifndef WORMHOLE_WORKLOAD_ORACLE_H
#define WORMHOLE_WORKLOAD_ORACLE_H

#include "extension-registry.h"
#include "upcoming-flow.h"

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/type-id.h"

#include <vector>

namespace ns3
{

/**
 * @brief Reports the releases and the upcoming flows of a kind of workload.
 *
 * A workload that creates a flow's applications while the simulation runs
 * tells the tracker right after each release, so the tracker discovers the
 * flow before it sends anything (FollowNewWorkloads); a workload that knows
 * when future flows start lets a memo plan for them (GetUpcomingFlows). The
 * adapter module of such a workload registers a WorkloadOracle subclass,
 * like a FlowSource: Register(MyOracle::GetTypeId()) from a static initializer.
 */
class WorkloadOracle : public Object, public ExtensionRegistry<WorkloadOracle>
{
  public:
    static TypeId GetTypeId();
    ~WorkloadOracle() override;

    /**
     * Follow the workloads that exist now and are not followed yet: after
     * each of their releases, call @p onRelease. Called on every
     * FlowTracker::Discover, after the nodes are scanned.
     */
    virtual void FollowNewWorkloads(Callback<void> onRelease) = 0;

    /**
     * @return the flows every workload will start within @p horizon, at times
     * already known, counting the running flows in @p ends as ending then.
     * With @p earliest, also every flow that may start within @p horizon, at
     * the earliest it may: a running flow whose end is not in @p ends taken to
     * end now, a flow to come to end as it starts (a lower bound of when
     * anything the run cannot foresee yet may start).
     */
    virtual std::vector<UpcomingFlow> GetUpcomingFlows(Time horizon,
                                                       const std::vector<KnownFlowEnd>& ends,
                                                       bool earliest = false) const = 0;
};

} // namespace ns3

#endif /* WORMHOLE_WORKLOAD_ORACLE_H */
