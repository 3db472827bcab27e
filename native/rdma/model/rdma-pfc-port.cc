/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-pfc-port.h"

#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaPfcPort");
NS_OBJECT_ENSURE_REGISTERED(RdmaPfcPort);

TypeId
RdmaPfcPort::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaPfcPort")
            .SetParent<Object>()
            .SetGroupName("Rdma")
            .AddConstructor<RdmaPfcPort>()
            .AddTraceSource("Pause",
                            "The port was paused (true) or resumed (false).",
                            MakeTraceSourceAccessor(&RdmaPfcPort::m_pauseTrace),
                            "ns3::TracedValueCallback::Bool");
    return tid;
}

RdmaPfcPort::RdmaPfcPort() = default;

void
RdmaPfcPort::DoDispose()
{
    m_resume = MakeNullCallback<void>();
    Object::DoDispose();
}

void
RdmaPfcPort::ReceivePause()
{
    if (m_paused)
    {
        return;
    }
    NS_LOG_FUNCTION(this);
    m_paused = true;
    ++m_pauses;
    m_pausedSince = Simulator::Now();
    m_pauseTrace(true);
}

void
RdmaPfcPort::ReceiveResume()
{
    if (!m_paused)
    {
        return;
    }
    NS_LOG_FUNCTION(this);
    m_paused = false;
    m_pausedTotal += Simulator::Now() - m_pausedSince;
    m_pauseTrace(false);
    if (!m_resume.IsNull())
    {
        m_resume();
    }
}

bool
RdmaPfcPort::IsPaused() const
{
    return m_paused;
}

void
RdmaPfcPort::SetResumeCallback(Callback<void> resume)
{
    m_resume = resume;
}

uint32_t
RdmaPfcPort::GetNPauses() const
{
    return m_pauses;
}

Time
RdmaPfcPort::GetPausedTime() const
{
    return m_pausedTotal + (m_paused ? Simulator::Now() - m_pausedSince : Time(0));
}

} // namespace ns3
