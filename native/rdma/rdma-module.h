/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Declarations of the rdma module, for cling and for C++ programs
 * (ns-3's build generates the same header from CMakeLists.txt).
 */
#ifndef RDMA_MODULE_H
#define RDMA_MODULE_H

#include "ns3/rdma-flow-helper.h"
#include "ns3/rdma-helper.h"
#include "ns3/rdma-switch-helper.h"
#include "ns3/rdma-aeth-header.h"
#include "ns3/rdma-bth-header.h"
#include "ns3/rdma-congestion-control.h"
#include "ns3/rdma-dcqcn.h"
#include "ns3/rdma-egress-queue-disc.h"
#include "ns3/rdma-hpcc.h"
#include "ns3/rdma-int-header.h"
#include "ns3/rdma-nic.h"
#include "ns3/rdma-pfc-port.h"
#include "ns3/rdma-pfc-switch.h"
#include "ns3/rdma-queue-pair.h"
#include "ns3/rdma-receive-queue-pair.h"

#endif /* RDMA_MODULE_H */
