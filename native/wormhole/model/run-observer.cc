/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "run-observer.h"

#include "ns3/simulator-impl.h"
#include "ns3/simulator.h"

#include <cstdint>

namespace ns3
{

namespace
{
Callback<void>&
RunStartCallback()
{
    static Callback<void> cb;
    return cb;
}

Callback<void>&
RunEndCallback()
{
    static Callback<void> cb;
    return cb;
}

Callback<void>&
BeforeRunCallback()
{
    static Callback<void> cb;
    return cb;
}

/** How many runs announced themselves (NotifyRunStart) in this process. */
uint64_t g_runsStarted = 0;

/** The implementation of each watched run that did not announce itself. */
std::vector<std::string> g_unobserved;
} // namespace

void
RunObserver::SetRunStartCallback(Callback<void> cb)
{
    RunStartCallback() = cb;
}

void
RunObserver::SetRunEndCallback(Callback<void> cb)
{
    RunEndCallback() = cb;
}

void
RunObserver::SetBeforeRunCallback(Callback<void> cb)
{
    BeforeRunCallback() = cb;
}

void
RunObserver::NotifyRunStart()
{
    ++g_runsStarted;
    if (!RunStartCallback().IsNull())
    {
        RunStartCallback()();
    }
}

void
RunObserver::NotifyRunEnd()
{
    if (!RunEndCallback().IsNull())
    {
        RunEndCallback()();
    }
}

void
RunObserver::RunWatched()
{
    uint64_t before = g_runsStarted;
    if (!BeforeRunCallback().IsNull())
    {
        BeforeRunCallback()();
    }
    Simulator::Run();
    if (g_runsStarted == before)
    {
        g_unobserved.push_back(Simulator::GetImplementation()->GetInstanceTypeId().GetName());
    }
}

std::vector<std::string>
RunObserver::GetUnobservedRuns()
{
    return g_unobserved;
}

} // namespace ns3

/**
 * What a C++ program's Simulator::Run() calls once the harness links it with
 * -Wl,--wrap=_ZN3ns39Simulator3RunEv (wormhole_ns3/runtime/cxx.py): its runs
 * are watched as a Python script's are.
 */
extern "C" void
__wrap__ZN3ns39Simulator3RunEv()
{
    ns3::RunObserver::RunWatched();
}
