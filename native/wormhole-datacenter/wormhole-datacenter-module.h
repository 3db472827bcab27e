/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Declarations of the wormhole-datacenter module, for cling and for C++ programs
 * (ns-3's build generates the same header from CMakeLists.txt).
 */
#ifndef WORMHOLE_DATACENTER_MODULE_H
#define WORMHOLE_DATACENTER_MODULE_H

#include "ns3/flow-dag-workload-oracle.h"
#include "ns3/flow-hash-ecmp-route-oracle.h"

#endif /* WORMHOLE_DATACENTER_MODULE_H */
