/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * ns-3's DefaultSimulatorImpl, unchanged, plus the Run() hooks: the baseline
 * every speed and accuracy claim is measured against.
 */
#ifndef WORMHOLE_BASELINE_SIMULATOR_IMPL_H
#define WORMHOLE_BASELINE_SIMULATOR_IMPL_H

#include "ns3/default-simulator-impl.h"

namespace ns3
{

/**
 * @brief Plain ns-3 event loop that lets an observer see Run() start and end.
 *
 * Nothing per event differs from DefaultSimulatorImpl, so its event counts,
 * results and speed are those of plain ns-3.
 */
class WormholeBaselineSimulatorImpl : public DefaultSimulatorImpl
{
  public:
    static TypeId GetTypeId();
    void Run() override;
};

} // namespace ns3

#endif /* WORMHOLE_BASELINE_SIMULATOR_IMPL_H */
