/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * What the accelerator reads of a link (an egress port, node << 16 | device
 * index, as a flow's path lists it): its rate, delay, queue, what shapes it
 * and what may draw random numbers on it.
 */
#ifndef WORMHOLE_LINK_PROPERTIES_H
#define WORMHOLE_LINK_PROPERTIES_H

#include "random-sources.h"

#include "ns3/net-device.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{
namespace wormhole
{

/**
 * @return the egress device a link id names.
 * @throws std::out_of_range if there is no such node or device (as a flow the
 * registry does not have: the Python binds a getter by calling it before any exists).
 */
Ptr<NetDevice> LinkDevice(uint64_t link);
/** @return the rate in bit/s of a link (its device's or its channel's DataRate), 0 if unknown. */
double LinkRate(uint64_t link);
/** @return the propagation delay of a link (its channel's Delay), zero if unknown. */
Time LinkDelay(uint64_t link);
/**
 * @return the packets queued at a link's egress port: its root queue disc
 * (if traffic control is installed) plus the device's own queue.
 */
uint32_t LinkQueuedPackets(uint64_t link);
/**
 * @return true if a packet sent on the link now would go at once: nothing
 * queued at its egress port and its point-to-point device not transmitting.
 */
bool LinkIdle(uint64_t link);
/**
 * @return every attribute that shapes a link: device, its transmit queue,
 * channel and root queue disc (and a classful disc's children), as one
 * canonical string.
 */
std::string LinkFingerprint(uint64_t link);
/** @return true if nothing on the link drops packets at random (no receive error model). */
bool IsLosslessLink(uint64_t link);
/**
 * @return why a packet crossing the link may make a model draw random
 * numbers (DescribeRandomSources of its node's routing, its queue discs,
 * device, transmit queue and the devices it sends to), sorted, each once.
 */
std::vector<RandomSource> LinkRandomSources(uint64_t link);
/**
 * @return how long @p bytes take alone on an idle path, as HPCC's fct.txt
 * reports it: the path's base RTT (the data path's and the reverse path's
 * propagation delays, the data path's twice if there is no reverse path, plus
 * one MTU-sized packet's transmission at every hop of the data path) plus the
 * bytes at the path's slowest link; zero if the path or a link's rate is
 * unknown.
 */
Time StandaloneTime(const std::vector<uint64_t>& path,
                    const std::vector<uint64_t>& reversePath,
                    uint64_t bytes);

} // namespace wormhole
} // namespace ns3

#endif /* WORMHOLE_LINK_PROPERTIES_H */
