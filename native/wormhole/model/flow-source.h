/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Extension point of the FlowTracker: finds the flows of one kind of model
 * (e.g. the queue pairs of an RDMA NIC) that the tracker itself does not know.
 */
#ifndef WORMHOLE_FLOW_SOURCE_H
#define WORMHOLE_FLOW_SOURCE_H

#include "extension-registry.h"

#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/type-id.h"

#include <vector>

namespace ns3
{

class FlowTracker;
class Node;

/**
 * @brief Finds flows of a kind of model the accelerator does not depend on.
 *
 * The FlowTracker finds applications (BulkSend, OnOff) itself; a model with
 * flows of its own (an RDMA NIC's queue pairs) has an adapter module that
 * registers a FlowSource subclass, so that the accelerator never includes
 * the model. Every tracker creates one instance of each registered source
 * (in registration order) and, in FlowTracker::Discover, asks it about each
 * node right after that node's applications, so flows are numbered the same
 * way in every run. The source adds what it finds with FlowTracker::AddFlow
 * and reports starts and finishes with FlowTracker::NotifyFlowStarted and
 * NotifyFlowFinished.
 *
 * Registration: the adapter's .cc calls Register(MySource::GetTypeId()) from
 * a static initializer, so loading its library (with cppyy, or linking it
 * into a program) is all it takes.
 */
class FlowSource : public Object, public ExtensionRegistry<FlowSource>
{
  public:
    static TypeId GetTypeId();
    ~FlowSource() override;

    /** Give the source the tracker it feeds (called once, by the tracker that owns it). */
    void SetTracker(FlowTracker* tracker);

    /**
     * Add the flows of @p node not seen yet to the tracker, in a stable order
     * (called on every FlowTracker::Discover, for every node).
     */
    virtual void DiscoverFlows(Ptr<Node> node) = 0;

  protected:
    void DoDispose() override;

    FlowTracker* m_tracker{nullptr}; //!< the owner: it outlives its sources
};

} // namespace ns3

#endif /* WORMHOLE_FLOW_SOURCE_H */
