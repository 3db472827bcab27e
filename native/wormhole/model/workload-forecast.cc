/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "workload-forecast.h"

#include "flow-tracker.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/nstime.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <utility>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("WorkloadForecast");

NS_OBJECT_ENSURE_REGISTERED(WorkloadForecast);

TypeId
WorkloadForecast::GetTypeId()
{
    static TypeId tid = TypeId("ns3::WorkloadForecast")
                            .SetParent<Object>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<WorkloadForecast>();
    return tid;
}

WorkloadForecast::WorkloadForecast() = default;

WorkloadForecast::~WorkloadForecast() = default;

void
WorkloadForecast::SetTracker(const FlowTracker* tracker)
{
    m_tracker = tracker;
}

size_t
WorkloadForecast::RouteKeyHash::operator()(const RouteKey& key) const
{
    const auto& [src, dst, srcPort, dstPort] = key;
    uint64_t nodes = (static_cast<uint64_t>(src) << 32) | dst;
    uint64_t ports = (static_cast<uint64_t>(srcPort) << 16) | dstPort;
    return std::hash<uint64_t>()(nodes) ^ (std::hash<uint64_t>()(ports) * 0x9E3779B97F4A7C15ULL);
}

uint32_t
WorkloadForecast::RouteNumber(const UpcomingFlow& flow)
{
    RouteKey key{flow.src->GetId(), flow.dst->GetId(), flow.srcPort, flow.dstPort};
    auto [it, fresh] = m_routeNumbers.try_emplace(key, m_routes.size());
    if (fresh)
    {
        std::vector<uint64_t> route =
            m_tracker->GetRouteBetween(flow.src, flow.dst, flow.srcPort, flow.dstPort, true);
        std::sort(route.begin(), route.end());
        route.erase(std::unique(route.begin(), route.end()), route.end());
        m_routes.push_back(std::move(route));
    }
    return it->second;
}

const std::vector<uint64_t>&
WorkloadForecast::Route(const UpcomingFlow& flow)
{
    return m_routes[RouteNumber(flow)];
}

std::vector<int64_t>
WorkloadForecast::GetDue(int64_t horizonNs,
                         const std::vector<uint32_t>& ending,
                         const std::vector<int64_t>& endsNs,
                         uint32_t knownRoutes)
{
    NS_LOG_FUNCTION(this << horizonNs << ending.size() << knownRoutes);
    NS_ABORT_MSG_IF(!m_tracker, "WorkloadForecast::GetDue: no tracker set");
    std::vector<int64_t> rows;
    for (const UpcomingFlow& flow :
         m_tracker->GetUpcomingFlows(NanoSeconds(horizonNs), ending, endsNs))
    {
        rows.push_back(flow.start);
        rows.push_back(flow.src->GetId());
        rows.push_back(flow.dst->GetId());
        rows.push_back(RouteNumber(flow));
    }
    std::vector<int64_t> due;
    const size_t known = std::min<size_t>(knownRoutes, m_routes.size());
    due.push_back(static_cast<int64_t>(m_routes.size() - known));
    for (size_t number = known; number < m_routes.size(); ++number)
    {
        due.push_back(static_cast<int64_t>(m_routes[number].size()));
        due.insert(due.end(), m_routes[number].begin(), m_routes[number].end());
    }
    due.insert(due.end(), rows.begin(), rows.end());
    return due;
}

std::vector<uint64_t>
WorkloadForecast::GetRoutes(const std::vector<UpcomingFlow>& flows,
                            const std::vector<uint32_t>& indices)
{
    NS_ABORT_MSG_IF(!m_tracker, "WorkloadForecast::GetRoutes: no tracker set");
    std::vector<uint64_t> routes;
    for (uint32_t index : indices)
    {
        const std::vector<uint64_t>& route = Route(flows.at(index));
        routes.push_back(route.size());
        routes.insert(routes.end(), route.begin(), route.end());
    }
    return routes;
}

namespace
{
/** @return whether the sorted @p route loads one of @p links. */
bool
Loads(const std::vector<uint64_t>& route, const std::set<uint64_t>& links)
{
    return std::any_of(route.begin(), route.end(), [&](uint64_t link) {
        return links.count(link) > 0;
    });
}
} // namespace

std::vector<int64_t>
WorkloadForecast::GetUnforeseeable(int64_t horizonNs,
                                   const std::vector<uint64_t>& links,
                                   const std::vector<uint32_t>& ending,
                                   const std::vector<int64_t>& endsNs,
                                   const std::vector<uint32_t>& own,
                                   int64_t beyondNs)
{
    NS_LOG_FUNCTION(this << horizonNs << links.size() << ending.size() << own.size() << beyondNs);
    NS_ABORT_MSG_IF(!m_tracker, "WorkloadForecast::GetUnforeseeable: no tracker set");
    NS_ABORT_MSG_IF(ending.size() != endsNs.size(),
                    "WorkloadForecast::GetUnforeseeable: " << ending.size() << " flows and "
                                                           << endsNs.size() << " ends");
    const Time horizon = NanoSeconds(horizonNs);
    const std::set<uint64_t> episode(links.begin(), links.end());
    // what the known ends release: foreseen, and joining the episode where it loads its links
    std::set<std::pair<uint32_t, int64_t>> foreseen; // (task, start)
    std::vector<UpcomingFlow> joiners;
    std::set<uint64_t> held(episode);
    for (const UpcomingFlow& flow : m_tracker->GetUpcomingFlows(horizon, ending, endsNs))
    {
        foreseen.emplace(flow.task, flow.start);
        const std::vector<uint64_t>& route = Route(flow);
        if (Loads(route, episode))
        {
            joiners.push_back(flow);
            held.insert(route.begin(), route.end());
        }
    }
    // every flow at the earliest: the same ends, the episode's own flows and its joiners beyond
    std::map<uint32_t, int64_t> ends; // by flow, as the oracle is asked
    for (size_t i = 0; i < ending.size(); ++i)
    {
        ends[ending[i]] = endsNs[i];
    }
    for (uint32_t flow : own)
    {
        ends[flow] = beyondNs;
    }
    std::vector<uint32_t> endingFlows;
    std::vector<int64_t> endingNs;
    endingFlows.reserve(ends.size());
    endingNs.reserve(ends.size());
    for (const auto& [flow, end] : ends)
    {
        endingFlows.push_back(flow);
        endingNs.push_back(end);
    }
    const std::vector<int64_t> joinersEnd(joiners.size(), beyondNs);
    std::vector<int64_t> found;
    for (const UpcomingFlow& flow :
         m_tracker->GetUpcomingFlows(horizon, endingFlows, endingNs, joiners, joinersEnd, true))
    {
        if (foreseen.count({flow.task, flow.start}))
        {
            continue;
        }
        const std::vector<uint64_t>& route = Route(flow);
        std::vector<int64_t> reached;
        for (uint64_t link : route)
        {
            if (held.count(link))
            {
                reached.push_back(static_cast<int64_t>(link));
            }
        }
        if (!reached.empty())
        {
            found.push_back(flow.start);
            found.push_back(static_cast<int64_t>(reached.size()));
            found.insert(found.end(), reached.begin(), reached.end());
        }
    }
    return found;
}

} // namespace ns3
