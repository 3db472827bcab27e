/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Declarations of the wormhole shim, for cling and for C++ programs.
 */
#ifndef WORMHOLE_MODULE_H
#define WORMHOLE_MODULE_H

#include "helper/flow-hash-ecmp-routing-helper.h"
#include "helper/rdma-flow-helper.h"
#include "helper/rdma-helper.h"
#include "helper/rdma-switch-helper.h"
#include "model/flow-dag.h"
#include "model/flow-hash-ecmp-routing.h"
#include "model/flow-tag.h"
#include "model/attribute-fingerprint.h"
#include "model/tracked-flow.h"
#include "model/application-flow.h"
#include "model/bulk-send-flow.h"
#include "model/onoff-flow.h"
#include "model/rdma-flow.h"
#include "model/flow-tracker.h"
#include "model/private-access.h"
#include "model/rdma-aeth-header.h"
#include "model/rdma-bth-header.h"
#include "model/rdma-congestion-control.h"
#include "model/rdma-dcqcn.h"
#include "model/rdma-egress-queue-disc.h"
#include "model/rdma-hpcc.h"
#include "model/rdma-int-header.h"
#include "model/rdma-nic.h"
#include "model/rdma-pfc-port.h"
#include "model/rdma-pfc-switch.h"
#include "model/rdma-queue-pair.h"
#include "model/rdma-receive-queue-pair.h"
#include "model/run-observer.h"
#include "model/skip-aware-rtt-estimator.h"
#include "model/tcp-flow-state.h"
#include "model/wormhole-baseline-simulator-impl.h"
#include "model/wormhole-simulator-impl.h"

#endif /* WORMHOLE_MODULE_H */
