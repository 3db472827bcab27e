/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "event-timeline.h"

namespace ns3
{

void
EventTimeline::Mark(uint64_t ts, uint64_t executed)
{
    if (m_step == 0)
    {
        m_step = std::max<int64_t>(1, MicroSeconds(1).GetTimeStep());
    }
    uint64_t instant = ts - ts % m_step;
    m_times.push_back(instant);
    m_counts.push_back(executed);
    if (m_times.size() > MAX_MARKS)
    {
        // keep the marks on the doubled step's multiples: each stays exact
        m_step *= 2;
        std::size_t kept = 0;
        for (std::size_t i = 0; i < m_times.size(); ++i)
        {
            if (m_times[i] % m_step == 0)
            {
                m_times[kept] = m_times[i];
                m_counts[kept] = m_counts[i];
                ++kept;
            }
        }
        m_times.resize(kept);
        m_counts.resize(kept);
    }
    m_next = instant - instant % m_step + m_step;
}

std::vector<Time>
EventTimeline::GetTimes() const
{
    std::vector<Time> times;
    times.reserve(m_times.size());
    for (uint64_t ts : m_times)
    {
        times.push_back(TimeStep(ts));
    }
    return times;
}

std::vector<uint64_t>
EventTimeline::GetCounts() const
{
    return m_counts;
}

} // namespace ns3
