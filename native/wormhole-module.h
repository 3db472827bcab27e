/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Declarations of the wormhole shim, for cling and for C++ programs.
 */
#ifndef WORMHOLE_MODULE_H
#define WORMHOLE_MODULE_H

#include "helper/flow-hash-ecmp-routing-helper.h"
#include "model/flow-dag.h"
#include "model/flow-hash-ecmp-routing.h"
#include "model/flow-tag.h"
#include "model/attribute-fingerprint.h"
#include "model/flow-tracker.h"
#include "model/private-access.h"
#include "model/run-observer.h"
#include "model/skip-aware-rtt-estimator.h"
#include "model/tcp-flow-state.h"
#include "model/wormhole-baseline-simulator-impl.h"
#include "model/wormhole-simulator-impl.h"

#endif /* WORMHOLE_MODULE_H */
