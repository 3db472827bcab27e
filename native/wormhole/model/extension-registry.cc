/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "extension-registry.h"

#include <map>

namespace ns3
{
namespace wormhole
{

std::vector<TypeId>&
RegisteredExtensions(TypeId base)
{
    // built on first use: adapter modules register from their static initializers
    static std::map<TypeId, std::vector<TypeId>> registered;
    return registered[base];
}

} // namespace wormhole
} // namespace ns3
