/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Which models may draw random numbers as they work, known before they do.
 */
#ifndef WORMHOLE_RANDOM_SOURCES_H
#define WORMHOLE_RANDOM_SOURCES_H

#include "ns3/ptr.h"

#include <string>
#include <vector>

namespace ns3
{

class Object;

/** A model that may draw random numbers as packets cross it, and when. */
struct RandomSource
{
    std::string what;  //!< the model's type and what draws, for a trace row
    bool needsQueue;   //!< draws only once a queue stands (RED between its thresholds, PIE, COBALT)
};

namespace wormhole
{

/**
 * @return why an object, or an object it holds through its attributes, may
 * draw random numbers as packets cross it: one source per model, naming the
 * object's type and what draws; empty if nothing in it is known to.
 *
 * RandomDrawMonitor sees every draw as it happens; this says, before anything
 * runs, where draws may come: a shortcut that must be decided before an
 * episode has run (a twin mirroring an episode opened in the same instant)
 * has only this to go on. Two kinds of source are known:
 *
 * - an attribute holding a random variable that is not constant (an
 *   application's on and off times, an error model's variable), found
 *   through the attributes of any type;
 * - models that draw through a variable of their own, by their parameters:
 *   RED wherever its marking is probabilistic (Gentle, MinTh below MaxTh,
 *   adaptive RED), PIE and COBALT always, random ECMP. RED, PIE and COBALT
 *   draw only once a queue stands (needsQueue): where arrivals never exceed
 *   the port's rate, they never do.
 *
 * A model outside both (a user's own queue disc drawing through a private
 * variable) is not found here; the monitor still sees its draws when they come.
 */
std::vector<RandomSource> DescribeRandomSources(Ptr<const Object> object);

} // namespace wormhole
} // namespace ns3

#endif /* WORMHOLE_RANDOM_SOURCES_H */
