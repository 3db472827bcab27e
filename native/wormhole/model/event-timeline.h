/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef WORMHOLE_EVENT_TIMELINE_H
#define WORMHOLE_EVENT_TIMELINE_H

#include "ns3/nstime.h"

#include <cstdint>
#include <vector>

namespace ns3
{

/**
 * @ingroup wormhole
 * @brief How many events a run had executed by each of a few hundred instants of simulated time.
 *
 * A run's event count alone does not say where an accelerated run spends its
 * events: in which phase of a training iteration, before or after which flows
 * met. The timeline marks, at every multiple of a step of simulated time that
 * an event crosses, the number of events executed before it. The step starts at
 * one microsecond and doubles (every other mark dropped) whenever the marks
 * would exceed MAX_MARKS, so any run keeps at most that many and each stays
 * exact: the events executed before that instant. A skip that jumps over several
 * steps leaves one mark, at the last step it jumps to.
 *
 * Per event it costs one comparison (Reach); WormholeSimulatorImpl calls it for
 * every event it counts.
 */
class EventTimeline
{
  public:
    /** The most marks kept; the step doubles to stay within it. */
    static constexpr std::size_t MAX_MARKS = 512;

    /**
     * An event at time step @p ts is about to run, with @p executed events run before it.
     */
    void Reach(uint64_t ts, uint64_t executed)
    {
        if (ts >= m_next)
        {
            Mark(ts, executed);
        }
    }

    /** @return the instants marked, oldest first. */
    std::vector<Time> GetTimes() const;
    /** @return the events executed before each instant of GetTimes. */
    std::vector<uint64_t> GetCounts() const;

  private:
    /** Record the mark Reach found due, thinning the marks if there are too many. */
    void Mark(uint64_t ts, uint64_t executed);

    uint64_t m_step{0};  //!< time steps between marks (0 until the first event)
    uint64_t m_next{0};  //!< the next multiple of m_step to mark
    std::vector<uint64_t> m_times;  //!< marked instants, in time steps
    std::vector<uint64_t> m_counts; //!< events executed before each
};

} // namespace ns3

#endif /* WORMHOLE_EVENT_TIMELINE_H */
