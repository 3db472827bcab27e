/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "workload-oracle.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(WorkloadOracle);

TypeId
WorkloadOracle::GetTypeId()
{
    static TypeId tid = TypeId("ns3::WorkloadOracle").SetParent<Object>().SetGroupName("Wormhole");
    return tid;
}

WorkloadOracle::~WorkloadOracle() = default;

} // namespace ns3
