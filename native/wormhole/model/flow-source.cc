/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-source.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(FlowSource);

namespace
{
std::vector<TypeId>&
Registry()
{
    static std::vector<TypeId> types;
    return types;
}
} // namespace

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

void
FlowSource::Register(TypeId tid)
{
    auto& types = Registry();
    if (std::find(types.begin(), types.end(), tid) == types.end())
    {
        types.push_back(tid);
    }
}

std::vector<TypeId>
FlowSource::GetRegistered()
{
    return Registry();
}

} // namespace ns3
