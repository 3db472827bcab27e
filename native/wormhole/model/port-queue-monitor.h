/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * How long every point-to-point port held each number of packets: the queue
 * occupancy a run is compared on, besides its flows' completion times.
 */
#ifndef WORMHOLE_PORT_QUEUE_MONITOR_H
#define WORMHOLE_PORT_QUEUE_MONITOR_H

#include "ns3/object.h"

#include <cstdint>
#include <map>
#include <vector>

namespace ns3
{

/** One port's time-weighted queue occupancy: how long it held each number of packets. */
struct PortQueueRecord
{
    uint64_t link{0};                //!< the port's link id: node << 16 | device index
    std::vector<uint32_t> packets;   //!< occupancies held, ascending
    std::vector<int64_t> durations;  //!< ns each was held, over the port's active span
};

/**
 * @brief Time-weighted occupancy of every point-to-point port's queue.
 *
 * A port's backlog is its queue disc's packets (if the node's traffic control
 * layer has one on the device) plus its device queue's, followed through their
 * PacketsInQueue traces. Each occupancy is weighted by how long it lasted,
 * over the port's active span: from its first enqueue to the time the records
 * are read. Observing only, the same in a plain run and an accelerated one: a
 * skip leaves queues as they are, so their length lasts the skip; a replayed
 * episode sends no packets, so its ports stay empty, and the comparison shows it.
 */
class PortQueueMonitor : public Object
{
  public:
    static TypeId GetTypeId();

    /** Follow every point-to-point port of every node that exists now. */
    void Install();
    /** @return every port that ever held a packet, by link id, with its occupancy up to now. */
    std::vector<PortQueueRecord> GetRecords() const;

  private:
    struct Port
    {
        uint64_t link{0};
        uint32_t inQueueDisc{0};
        uint32_t inDevice{0};
        int64_t since{-1}; //!< when the current occupancy began; -1 before the first enqueue
        std::map<uint32_t, int64_t> held;
    };

    void OnChange(uint32_t port, bool queueDisc, uint32_t packets);

    std::vector<Port> m_ports;
};

} // namespace ns3

#endif /* WORMHOLE_PORT_QUEUE_MONITOR_H */
