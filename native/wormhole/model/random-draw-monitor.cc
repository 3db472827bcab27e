/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "random-draw-monitor.h"

#include "linkage-slots.h"

#include "ns3/log.h"
#include "ns3/rng-stream.h"

#include <dlfcn.h>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RandomDrawMonitor");

NS_OBJECT_ENSURE_REGISTERED(RandomDrawMonitor);

namespace
{

/** The mangled name of RngStream::RandU01, as libraries import it. */
constexpr const char* RAND_U01 = "_ZN3ns39RngStream7RandU01Ev";

/** The monitor the interposed function reports to (never freed: draws may come during exit). */
RandomDrawMonitor* g_monitor = nullptr;

/** RandU01's ABI: a non-virtual member function is a free function taking the object first. */
using RandU01Function = double (*)(RngStream*);

/**
 * The real RandU01, found by name where ns-3's core library defines it: this
 * library never calls it through a linkage slot of its own, so no patch can
 * make the interposed function call itself.
 */
RandU01Function g_real = nullptr;

/** What a library's RandU01 slot is pointed at. */
double
InterposedRandU01(RngStream* stream)
{
    double value = g_real(stream);
    g_monitor->NotifyDraw(stream, value);
    return value;
}

} // namespace

TypeId
RandomDrawMonitor::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RandomDrawMonitor")
            .SetParent<Object>()
            .SetGroupName("Wormhole")
            .AddTraceSource("Draw",
                            "A random number was drawn (RngStream::RandU01), by any model.",
                            MakeTraceSourceAccessor(&RandomDrawMonitor::m_drawTrace),
                            "ns3::RandomDrawMonitor::DrawCallback");
    return tid;
}

RandomDrawMonitor::RandomDrawMonitor()
{
    NS_LOG_FUNCTION(this);
}

Ptr<RandomDrawMonitor>
RandomDrawMonitor::Get()
{
    if (g_monitor == nullptr)
    {
        Ptr<RandomDrawMonitor> monitor = CreateObject<RandomDrawMonitor>();
        monitor->Ref(); // the process keeps it: the interposed slots report to it until exit
        g_monitor = PeekPointer(monitor);
    }
    return g_monitor;
}

bool
RandomDrawMonitor::Install()
{
    NS_LOG_FUNCTION(this);
    NS_ASSERT_MSG(this == g_monitor, "install the process's monitor, RandomDrawMonitor::Get()");
    if (g_real == nullptr)
    {
        g_real = reinterpret_cast<RandU01Function>(dlsym(RTLD_DEFAULT, RAND_U01));
        if (g_real == nullptr)
        {
            return IsActive();
        }
    }
    m_interposed = wormhole::InterposeOnFunction(RAND_U01, reinterpret_cast<void*>(&InterposedRandU01));
    NS_LOG_INFO("interposed on RngStream::RandU01 in " << m_interposed << " libraries");
    return IsActive();
}

bool
RandomDrawMonitor::IsActive() const
{
    return m_interposed > 0;
}

uint32_t
RandomDrawMonitor::GetInterposedLibraries() const
{
    return m_interposed;
}

uint64_t
RandomDrawMonitor::GetDrawCount() const
{
    return m_draws;
}

void
RandomDrawMonitor::NotifyDraw(const RngStream* stream, double value)
{
    ++m_draws;
    m_drawTrace(stream, value);
}

} // namespace ns3
