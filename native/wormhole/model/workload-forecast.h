/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * What the workloads may bring onto an episode's links: a memo lookup's
 * questions to the workload oracles, answered in C++ with each flow's route
 * walked once.
 */
#ifndef WORMHOLE_WORKLOAD_FORECAST_H
#define WORMHOLE_WORKLOAD_FORECAST_H

#include "upcoming-flow.h"

#include "ns3/object.h"

#include <cstdint>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace ns3
{

class FlowTracker;

/**
 * @brief Answers a memo lookup's questions about flows to come, over the
 * tracker's workload oracles (FlowTracker::GetUpcomingFlows) and routes
 * (FlowTracker::GetRouteBetween).
 *
 * A lookup asks hundreds of flows to come per question, and most of them load
 * none of the episode's links: the flows are filtered here, and only those
 * that matter cross into Python. The route of a flow to come depends on its
 * nodes and ports only (the routing tables do not change while the workload
 * runs): each is walked the first time a question meets it, and kept.
 */
class WorkloadForecast : public Object
{
  public:
    static TypeId GetTypeId();
    WorkloadForecast();
    ~WorkloadForecast() override;

    /** Ask @p tracker's workload oracles, over its routes (the tracker owns this forecast). */
    void SetTracker(const FlowTracker* tracker);

    /**
     * The flows that may start within @p horizonNs onto an episode on @p
     * links, or onto the links of the flows that join it, and that no known
     * end releases: what a replay of grouped paced flows must not meet (they
     * are never resumed exactly).
     *
     * First, what the known ends release (the tracked flows @p ending end at
     * @p endsNs, sorted by flow): each such flow is foreseen, and those
     * loading @p links join the episode, whose links then include theirs.
     * Then every flow that may start within the horizon at the earliest it
     * may (FlowTracker::GetUpcomingFlows with earliest), the same ends given
     * but for the flows of @p own, which end at @p beyondNs, as each joiner
     * does: a flow that is not foreseen (the same task at the same start)
     * and loads one of the episode's links may come sooner than any lookup
     * can tell.
     *
     * @return flat, for each such flow in the oracle's order: its earliest
     * start (ns), how many of the episode's links it loads, those links in
     * increasing order. One crossing for both of a lookup's questions.
     */
    std::vector<int64_t> GetUnforeseeable(int64_t horizonNs,
                                          const std::vector<uint64_t>& links,
                                          const std::vector<uint32_t>& ending,
                                          const std::vector<int64_t>& endsNs,
                                          const std::vector<uint32_t>& own,
                                          int64_t beyondNs);

    /**
     * The flows the workloads will start within @p horizonNs at times already
     * known, the tracked flows @p ending taken to end at @p endsNs
     * (FlowTracker::GetUpcomingFlows), each with its route named by a number:
     * routes are numbered in the order they are first walked, and the caller
     * keeps the first @p knownRoutes of them.
     *
     * @return flat: how many routes the caller does not know yet, each of
     * them (its number of links, then its links, in increasing order: the
     * routes numbered @p knownRoutes on), then for each flow in the oracle's
     * order its start (ns), source and destination node ids and its route's
     * number. One crossing a question, and only the routes new to the caller.
     */
    std::vector<int64_t> GetDue(int64_t horizonNs,
                                const std::vector<uint32_t>& ending,
                                const std::vector<int64_t>& endsNs,
                                uint32_t knownRoutes);

    /**
     * @return the routes of the flows of @p flows at @p indices, each the
     * links (data path, then reverse path) a flow between its nodes and ports
     * loads, in increasing order and once each, flat: each flow's number of
     * links, then its links.
     */
    std::vector<uint64_t> GetRoutes(const std::vector<UpcomingFlow>& flows,
                                    const std::vector<uint32_t>& indices);

  private:
    /** A flow to come's nodes and ports: what its route depends on. */
    using RouteKey = std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>;

    /** Hash of a RouteKey. */
    struct RouteKeyHash
    {
        size_t operator()(const RouteKey& key) const;
    };

    /** @return the links @p flow loads, in increasing order, walked once per RouteKey. */
    const std::vector<uint64_t>& Route(const UpcomingFlow& flow);
    /** @return the number of @p flow's route (GetDue), walked once per RouteKey. */
    uint32_t RouteNumber(const UpcomingFlow& flow);

    const FlowTracker* m_tracker{nullptr}; //!< whose oracles and routes are asked
    //! the number of each route walked so far, by RouteKey
    std::unordered_map<RouteKey, uint32_t, RouteKeyHash> m_routeNumbers;
    std::vector<std::vector<uint64_t>> m_routes; //!< the routes walked so far, by number
};

} // namespace ns3

#endif /* WORMHOLE_WORKLOAD_FORECAST_H */
