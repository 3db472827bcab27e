/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-source.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FlowSource);

TypeId
FlowSource::GetTypeId()
{
    static TypeId tid = TypeId("ns3::FlowSource").SetParent<Object>().SetGroupName("Wormhole");
    return tid;
}

FlowSource::~FlowSource() = default;

void
FlowSource::SetTracker(FlowTracker* tracker)
{
    m_tracker = tracker;
}

void
FlowSource::DoDispose()
{
    m_tracker = nullptr;
    Object::DoDispose();
}

} // namespace ns3
