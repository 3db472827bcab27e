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

namespace ns3
{

/**
 * @brief Process-wide hooks around Simulator::Run().
 *
 * Both Wormhole simulator implementations call NotifyRunStart() before their
 * first event and NotifyRunEnd() when Run() returns.
 */
class RunObserver
{
  public:
    static void SetRunStartCallback(Callback<void> cb);
    static void SetRunEndCallback(Callback<void> cb);
    static void NotifyRunStart();
    static void NotifyRunEnd();
};

} // namespace ns3

#endif /* WORMHOLE_RUN_OBSERVER_H */
