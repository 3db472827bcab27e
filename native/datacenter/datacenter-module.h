/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Declarations of the datacenter module, for cling and for C++ programs
 * (ns-3's build generates the same header from CMakeLists.txt).
 */
#ifndef DATACENTER_MODULE_H
#define DATACENTER_MODULE_H

#include "ns3/flow-hash-ecmp-routing-helper.h"
#include "ns3/flow-dag.h"
#include "ns3/flow-hash-ecmp-routing.h"
#include "ns3/ipv4-global-routing-access.h"

#endif /* DATACENTER_MODULE_H */
