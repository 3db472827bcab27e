/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The FlowTracker's flows: each one's number, tag, state and path.
 */
#ifndef WORMHOLE_FLOW_REGISTRY_H
#define WORMHOLE_FLOW_REGISTRY_H

#include "tracked-flow.h"

#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * @brief The flows a FlowTracker found, numbered in discovery order, and
 * what the tracker keeps of each whatever its kind.
 *
 * The tracker's parts (RouteWalker, RateSampler, ProgressCrediter,
 * StartGate) are handed a flow's RegisteredFlow by its number; what only
 * one part keeps of a flow (its samples, its start decision) stays in that
 * part. A number out of range is an error (std::out_of_range), as it is for
 * the Python caller that passed it.
 */
class FlowRegistry : public Object
{
  public:
    /** Lifecycle of a flow. */
    enum State
    {
        PENDING = 0,  //!< application not started sending yet
        ACTIVE = 1,   //!< sending; counted in its partition
        FINISHED = 2, //!< sink received every byte (sized flows only)
    };

    /** A flow and what the tracker keeps of it. */
    struct RegisteredFlow
    {
        Ptr<TrackedFlow> flow;              //!< what depends on the kind
        uint32_t tag{0};                    //!< its events' attribution tag
        State state{PENDING};               //!< where it is in its lifecycle
        Time finish{Seconds(-1)};           //!< when its last byte arrived
        std::vector<uint64_t> path;         //!< its data path's links, once it started
        std::vector<uint64_t> reversePath;  //!< its reverse (ACK) path's links, if any
    };

    static TypeId GetTypeId();

    /** Number a flow and keep it with its tag. @return its number. */
    uint32_t Add(Ptr<TrackedFlow> flow, uint32_t tag);
    /** @return how many flows there are. */
    uint32_t GetN() const;
    /** @return the flow a number names. */
    RegisteredFlow& Get(uint32_t flow);
    /** @return the flow a number names. */
    const RegisteredFlow& Get(uint32_t flow) const;

    /** The flow sent its first data along these paths: it is active. */
    void Activate(uint32_t flow, std::vector<uint64_t> path, std::vector<uint64_t> reversePath);
    /** The flow's receiver holds every byte (or a replay says so) now: it is finished. */
    void Finish(uint32_t flow);

  private:
    std::vector<RegisteredFlow> m_flows; //!< by number
};

} // namespace ns3

#endif /* WORMHOLE_FLOW_REGISTRY_H */
