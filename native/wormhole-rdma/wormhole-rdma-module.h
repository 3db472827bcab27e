/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Declarations of the wormhole-rdma module, for cling and for C++ programs
 * (ns-3's build generates the same header from CMakeLists.txt).
 */
#ifndef WORMHOLE_RDMA_MODULE_H
#define WORMHOLE_RDMA_MODULE_H

#include "ns3/rdma-flow-source.h"
#include "ns3/rdma-flow.h"

#endif /* WORMHOLE_RDMA_MODULE_H */
