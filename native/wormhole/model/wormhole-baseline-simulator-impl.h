/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * ns-3's DefaultSimulatorImpl, unchanged, plus the Run() hooks: the baseline
 * every speed and accuracy claim is measured against.
 */
#ifndef WORMHOLE_BASELINE_SIMULATOR_IMPL_H
#define WORMHOLE_BASELINE_SIMULATOR_IMPL_H

#include "ns3/callback.h"
#include "ns3/default-simulator-impl.h"

namespace ns3
{

/**
 * @brief Plain ns-3 event loop that lets an observer see Run() start and end,
 * and the nodes that get new work while it runs.
 *
 * Nothing per event differs from DefaultSimulatorImpl, so its event counts,
 * event uids, results and speed are those of plain ns-3. The one addition:
 * an event scheduled on a node with no delay (how ns-3 hands a node new
 * work, such as `Node::AddApplication` initializing an application created
 * in a user's callback) is wrapped, with no event of its own, so that once it
 * has run the observer hears which node it entered and can look for new
 * flows there, as the accelerated run does.
 */
class WormholeBaselineSimulatorImpl : public DefaultSimulatorImpl
{
  public:
    static TypeId GetTypeId();
    void Run() override;
    void ScheduleWithContext(uint32_t context, const Time& delay, EventImpl* event) override;

    /**
     * Call `hook` with the node's id after each event that entered a node
     * (scheduled on it with no delay) has run. A null callback stops it.
     */
    void SetNodeEnteredHook(Callback<void, uint32_t> hook);

  private:
    Callback<void, uint32_t> m_nodeEntered; //!< the observer of entered nodes, if any
};

} // namespace ns3

#endif /* WORMHOLE_BASELINE_SIMULATOR_IMPL_H */
