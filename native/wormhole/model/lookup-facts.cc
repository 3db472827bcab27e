/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "lookup-facts.h"

#include "flow-tracker.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("LookupFacts");

NS_OBJECT_ENSURE_REGISTERED(LookupFacts);

TypeId
LookupFacts::GetTypeId()
{
    static TypeId tid = TypeId("ns3::LookupFacts")
                            .SetParent<Object>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<LookupFacts>();
    return tid;
}

LookupFacts::LookupFacts() = default;

LookupFacts::~LookupFacts() = default;

void
LookupFacts::SetTracker(const FlowTracker* tracker)
{
    m_tracker = tracker;
}

FlowFacts
LookupFacts::Read(const int64_t* flows, size_t size, bool routes, bool identities) const
{
    NS_LOG_FUNCTION(this << size << routes << identities);
    NS_ABORT_MSG_IF(!m_tracker, "LookupFacts::Read: no tracker set");
    FlowFacts facts;
    facts.numbers.reserve(size * (FIELDS + (routes ? 12 : 0)));
    for (const int64_t* at = flows; at < flows + size; ++at)
    {
        const auto flow = static_cast<uint32_t>(*at);
        if (identities)
        {
            const std::string kind = m_tracker->GetKind(flow);
            const std::string fingerprint = m_tracker->GetFlowFingerprint(flow);
            const std::string ops = m_tracker->GetPlannedCongestionOps(flow);
            facts.numbers.push_back(m_tracker->IsPaced(flow) ? 1 : 0);
            facts.numbers.push_back(static_cast<int64_t>(kind.size()));
            facts.numbers.push_back(static_cast<int64_t>(fingerprint.size()));
            facts.numbers.push_back(static_cast<int64_t>(ops.size()));
            facts.text += kind;
            facts.text += fingerprint;
            facts.text += ops;
        }
        else
        {
            facts.numbers.insert(facts.numbers.end(), {0, 0, 0, 0});
        }
        if (!routes)
        {
            facts.numbers.insert(facts.numbers.end(), {0, 0});
            continue;
        }
        // GetPlannedRoute's layout: the data path's length, the data path, the reverse path
        const std::vector<uint64_t> route = m_tracker->GetPlannedRoute(flow);
        const uint64_t hops = route.front();
        facts.numbers.push_back(static_cast<int64_t>(hops));
        facts.numbers.push_back(static_cast<int64_t>(route.size() - 1 - hops));
        facts.numbers.insert(facts.numbers.end(), route.begin() + 1, route.end());
    }
    return facts;
}

} // namespace ns3
