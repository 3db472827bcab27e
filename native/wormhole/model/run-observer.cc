/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "run-observer.h"

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
RunObserver::NotifyRunStart()
{
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

} // namespace ns3
