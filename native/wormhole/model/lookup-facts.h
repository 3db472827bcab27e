/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * What a memo lookup reads of the flows it meets: each flow's route, kind,
 * pacing and attributes, for a batch of flows in one crossing.
 */
#ifndef WORMHOLE_LOOKUP_FACTS_H
#define WORMHOLE_LOOKUP_FACTS_H

#include "ns3/object.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

class FlowTracker;

/**
 * @brief A batch of flows' facts as LookupFacts::Read hands them across the
 * Python boundary: numbers in one vector, texts in one string.
 */
struct FlowFacts
{
    std::vector<int64_t> numbers; //!< LookupFacts::FIELDS numbers a flow, then its links
    std::string text;             //!< each flow's kind, fingerprint and planned congestion control, in turn
};

/**
 * @brief Reads, for a batch of flows, what a memo lookup asks of each flow
 * that never changes once it is asked (FlowTracker::GetPlannedRoute,
 * IsPaced, GetKind, GetFlowFingerprint, GetPlannedCongestionOps: the same
 * values), in one call.
 *
 * A lookup of the flows starting at one instant asks each one's route, kind
 * and attributes: one crossing of the Python boundary for the batch, rather
 * than four for each flow. Flows to come that a lookup only needs the links
 * of are read without their identity (a route walk, no attribute walk), as
 * they are first met before they start.
 */
class LookupFacts : public Object
{
  public:
    /**
     * Numbers a flow, before its links: whether it is paced (0 or 1), the
     * byte lengths of its kind, its fingerprint and its planned congestion
     * control in FlowFacts::text (0 each without identities), its data
     * path's number of links, its reverse path's (0 each without routes).
     * Then the data path's links and the reverse path's, in hop order.
     */
    static constexpr uint32_t FIELDS = 6;

    static TypeId GetTypeId();
    LookupFacts();
    ~LookupFacts() override;

    /** Read the flows of @p tracker (which owns this reader). */
    void SetTracker(const FlowTracker* tracker);

    /**
     * @return the facts of the @p size flows at @p flows, in that order:
     * with @p routes, their planned routes; with @p identities, whether each
     * is paced, its kind, its fingerprint and its planned congestion control.
     */
    FlowFacts Read(const int64_t* flows, size_t size, bool routes, bool identities) const;

  private:
    const FlowTracker* m_tracker{nullptr}; //!< whose flows are read
};

} // namespace ns3

#endif /* WORMHOLE_LOOKUP_FACTS_H */
