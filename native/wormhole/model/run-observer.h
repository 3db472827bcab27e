/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Hooks called when Simulator::Run() starts and returns, whatever simulator
 * implementation is selected, so the accelerator (or its observe-only
 * baseline twin) can attach to a script it did not write.
 */
#ifndef WORMHOLE_RUN_OBSERVER_H
#define WORMHOLE_RUN_OBSERVER_H

#include "ns3/callback.h"

#include <string>
#include <vector>

namespace ns3
{

/**
 * @brief Process-wide hooks around Simulator::Run().
 *
 * Both Wormhole simulator implementations call NotifyRunStart() before their
 * first event and NotifyRunEnd() when Run() returns. Any other implementation
 * (one the script selected itself) announces nothing: a Run() made through
 * RunWatched() is then kept in GetUnobservedRuns(), so that a run that was not
 * accelerated is never reported as if it had been.
 */
class RunObserver
{
  public:
    static void SetRunStartCallback(Callback<void> cb);
    static void SetRunEndCallback(Callback<void> cb);
    /**
     * Called by RunWatched() right before Simulator::Run(): what the harness
     * does once per simulation (find its implementation, bind what it calls)
     * is then done outside the timed Run().
     */
    static void SetBeforeRunCallback(Callback<void> cb);
    static void NotifyRunStart();
    static void NotifyRunEnd();
    /**
     * Simulator::Run(), after the before-run callback; if the implementation did
     * not call NotifyRunStart(), keep the TypeId name of the implementation that
     * ran. The harness routes a script's Simulator::Run() calls here.
     */
    static void RunWatched();
    /** @return the implementation of each RunWatched() that announced nothing, in order. */
    static std::vector<std::string> GetUnobservedRuns();
};

} // namespace ns3

#endif /* WORMHOLE_RUN_OBSERVER_H */
