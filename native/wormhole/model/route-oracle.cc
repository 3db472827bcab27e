/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "route-oracle.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RouteOracle);

TypeId
RouteOracle::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RouteOracle").SetParent<Object>().SetGroupName("Wormhole");
    return tid;
}

RouteOracle::~RouteOracle() = default;

} // namespace ns3
