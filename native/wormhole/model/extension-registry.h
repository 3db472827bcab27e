/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The registry behind the FlowTracker's extension points (FlowSource,
 * RouteOracle, WorkloadOracle): the subclasses adapter modules registered,
 * and one instance of each for a new tracker.
 */
#ifndef WORMHOLE_EXTENSION_REGISTRY_H
#define WORMHOLE_EXTENSION_REGISTRY_H

#include "ns3/abort.h"
#include "ns3/object-factory.h"
#include "ns3/ptr.h"
#include "ns3/type-id.h"

#include <algorithm>
#include <vector>

namespace ns3
{

namespace wormhole
{
/**
 * @return the subclasses registered for the extension point @p base, in
 * registration order. One list per extension point, kept in this module's
 * library, so adapter modules registering from their static initializers and
 * the tracker reading the lists share them.
 */
std::vector<TypeId>& RegisteredExtensions(TypeId base);
} // namespace wormhole

/**
 * @brief Registration of an extension point's subclasses, shared by every
 * extension point: an extension point derives from
 * ExtensionRegistry<itself> and has Register and GetRegistered.
 *
 * An adapter module calls Register(MyExtension::GetTypeId()) from a static
 * initializer of its .cc, so that loading its library is all it takes; every
 * FlowTracker created afterwards makes one instance of each registered type
 * (CreateRegistered).
 */
template <typename Extension>
class ExtensionRegistry
{
  public:
    /** Make every tracker created from now on use extensions of type @p tid (once per type). */
    static void Register(TypeId tid)
    {
        NS_ABORT_MSG_UNLESS(tid.IsChildOf(Extension::GetTypeId()),
                            tid.GetName() << " is no " << Extension::GetTypeId().GetName());
        std::vector<TypeId>& types = wormhole::RegisteredExtensions(Extension::GetTypeId());
        if (std::find(types.begin(), types.end(), tid) == types.end())
        {
            types.push_back(tid);
        }
    }

    /** @return the registered types, in registration order. */
    static std::vector<TypeId> GetRegistered()
    {
        return wormhole::RegisteredExtensions(Extension::GetTypeId());
    }

    /** @return one instance of each registered type, in registration order. */
    static std::vector<Ptr<Extension>> CreateRegistered()
    {
        std::vector<Ptr<Extension>> extensions;
        for (const TypeId& tid : GetRegistered())
        {
            ObjectFactory factory;
            factory.SetTypeId(tid);
            extensions.push_back(factory.Create<Extension>());
        }
        return extensions;
    }
};

} // namespace ns3

#endif /* WORMHOLE_EXTENSION_REGISTRY_H */
