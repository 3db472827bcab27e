/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "workload-oracle.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(WorkloadOracle);

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
WorkloadOracle::GetTypeId()
{
    static TypeId tid = TypeId("ns3::WorkloadOracle").SetParent<Object>().SetGroupName("Wormhole");
    return tid;
}

WorkloadOracle::~WorkloadOracle() = default;

void
WorkloadOracle::Register(TypeId tid)
{
    auto& types = Registry();
    if (std::find(types.begin(), types.end(), tid) == types.end())
    {
        types.push_back(tid);
    }
}

std::vector<TypeId>
WorkloadOracle::GetRegistered()
{
    return Registry();
}

} // namespace ns3
