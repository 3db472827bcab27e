/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Declarations of the wormhole module, for cling and for C++ programs
 * (ns-3's build generates the same header from CMakeLists.txt).
 */
#ifndef WORMHOLE_MODULE_H
#define WORMHOLE_MODULE_H

#include "ns3/application-flow.h"
#include "ns3/attribute-fingerprint.h"
#include "ns3/bulk-send-flow.h"
#include "ns3/created-flows.h"
#include "ns3/event-timeline.h"
#include "ns3/extension-registry.h"
#include "ns3/flow-record.h"
#include "ns3/flow-registry.h"
#include "ns3/flow-rtt-monitor.h"
#include "ns3/flow-source.h"
#include "ns3/flow-tag.h"
#include "ns3/flow-tracker.h"
#include "ns3/link-properties.h"
#include "ns3/linkage-slots.h"
#include "ns3/lookup-facts.h"
#include "ns3/onoff-flow.h"
#include "ns3/port-queue-monitor.h"
#include "ns3/private-access.h"
#include "ns3/progress-crediter.h"
#include "ns3/program-location.h"
#include "ns3/random-draw-monitor.h"
#include "ns3/random-sources.h"
#include "ns3/rate-sampler.h"
#include "ns3/route-oracle.h"
#include "ns3/route-walker.h"
#include "ns3/run-observer.h"
#include "ns3/skip-aware-rtt-estimator.h"
#include "ns3/socket-flow-source.h"
#include "ns3/socket-flow.h"
#include "ns3/start-gate.h"
#include "ns3/tcp-flow-state.h"
#include "ns3/tracked-flow.h"
#include "ns3/upcoming-flow.h"
#include "ns3/workload-forecast.h"
#include "ns3/workload-oracle.h"
#include "ns3/wormhole-baseline-simulator-impl.h"
#include "ns3/wormhole-simulator-impl.h"

#endif /* WORMHOLE_MODULE_H */
