/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "wormhole-baseline-simulator-impl.h"

#include "run-observer.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(WormholeBaselineSimulatorImpl);

TypeId
WormholeBaselineSimulatorImpl::GetTypeId()
{
    static TypeId tid = TypeId("ns3::WormholeBaselineSimulatorImpl")
                            .SetParent<DefaultSimulatorImpl>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<WormholeBaselineSimulatorImpl>();
    return tid;
}

void
WormholeBaselineSimulatorImpl::Run()
{
    RunObserver::NotifyRunStart();
    DefaultSimulatorImpl::Run();
    RunObserver::NotifyRunEnd();
}

} // namespace ns3
