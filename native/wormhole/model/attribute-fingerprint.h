/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Every attribute of an ns-3 object as one canonical string: what a memo key
 * must contain so that a changed parameter never matches an old episode.
 */
#ifndef WORMHOLE_ATTRIBUTE_FINGERPRINT_H
#define WORMHOLE_ATTRIBUTE_FINGERPRINT_H

#include "ns3/ptr.h"
#include "ns3/type-id.h"

#include <string>

namespace ns3
{

class Object;

namespace wormhole
{

/**
 * @return "TypeName{name=value;...}" with every readable attribute of the
 * object's type and its parents, in TypeId order, except those that only
 * identify the object (addresses, ids) or its start and stop times. Attributes that hold
 * objects, containers or callbacks are named with the type of what they hold
 * (not its address), since only their kind shapes a run; a null object gives
 * "none".
 */
std::string DescribeAttributes(Ptr<const Object> object);

/**
 * @return the same description for the attribute values a new object of the
 * type would get (its defaults as configured with Config::SetDefault): what
 * describes an object before it exists, e.g. a socket an application will
 * create when it starts.
 */
std::string DescribeDefaults(TypeId tid);

} // namespace wormhole
} // namespace ns3

#endif /* WORMHOLE_ATTRIBUTE_FINGERPRINT_H */
