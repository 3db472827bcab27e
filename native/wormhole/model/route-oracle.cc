/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "route-oracle.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RouteOracle);

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
RouteOracle::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RouteOracle").SetParent<Object>().SetGroupName("Wormhole");
    return tid;
}

RouteOracle::~RouteOracle() = default;

void
RouteOracle::Register(TypeId tid)
{
    auto& types = Registry();
    if (std::find(types.begin(), types.end(), tid) == types.end())
    {
        types.push_back(tid);
    }
}

std::vector<TypeId>
RouteOracle::GetRegistered()
{
    return Registry();
}

} // namespace ns3
