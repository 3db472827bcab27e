/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A flow a workload will start at a time already known.
 */
#ifndef WORMHOLE_UPCOMING_FLOW_H
#define WORMHOLE_UPCOMING_FLOW_H

#include "ns3/node.h"
#include "ns3/ptr.h"

#include <cstdint>

namespace ns3
{

/**
 * @brief A flow a workload will start at a time already known (see
 * WorkloadOracle::GetUpcomingFlows): what a memo needs to plan for it before
 * its applications exist.
 */
struct UpcomingFlow
{
    int64_t start{0}; //!< ns
    uint32_t task{0}; //!< the workload's own id of the flow
    Ptr<Node> src;
    Ptr<Node> dst;
    uint16_t srcPort{0};
    uint16_t dstPort{0};
    uint64_t bytes{0};
};

/**
 * @brief A flow, running or still to come, whose end is already known (a
 * memo scheduled its completion, or asks what replaying it would release):
 * an oracle follows what its end releases, as it follows the end of a
 * compute task (see WorkloadOracle::GetUpcomingFlows).
 */
struct KnownFlowEnd
{
    Ptr<Node> src;
    Ptr<Node> dst;
    uint16_t srcPort{0};
    int64_t end{0}; //!< ns
};

} // namespace ns3

#endif /* WORMHOLE_UPCOMING_FLOW_H */
