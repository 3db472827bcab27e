/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Access to private members through explicit template instantiation:
 * [temp.explicit] exempts the names used in an explicit instantiation from
 * access checking, so a pointer-to-member of a private field can be captured
 * by a friend function defined in the instantiated class template.
 */
#include "ipv4-global-routing-access.h"

#include "ns3/ipv4-global-routing.h"
#include "ns3/ipv4-routing-table-entry.h"

namespace ns3
{
namespace datacenter
{
namespace
{

template <typename Member, typename Member::type Pointer>
struct Exposer
{
    friend typename Member::type MemberPointer(Member)
    {
        return Pointer;
    }
};

#define DATACENTER_EXPOSE(NAME, CLASS, FIELD, TYPE)                                                \
    struct NAME                                                                                    \
    {                                                                                              \
        using type = TYPE CLASS::*;                                                                \
        friend type MemberPointer(NAME);                                                           \
    };                                                                                             \
    template struct Exposer<NAME, &CLASS::FIELD>

DATACENTER_EXPOSE(GlobalHostRoutes, Ipv4GlobalRouting, m_hostRoutes, std::list<Ipv4RoutingTableEntry*>);
DATACENTER_EXPOSE(GlobalNetworkRoutes,
                  Ipv4GlobalRouting,
                  m_networkRoutes,
                  std::list<Ipv4RoutingTableEntry*>);
DATACENTER_EXPOSE(GlobalExternalRoutes,
                  Ipv4GlobalRouting,
                  m_ASexternalRoutes,
                  std::list<Ipv4RoutingTableEntry*>);

#undef DATACENTER_EXPOSE

} // namespace

GlobalRouteLists
GlobalRoutes(const Ipv4GlobalRouting& routing)
{
    return {routing.*MemberPointer(GlobalHostRoutes()),
            routing.*MemberPointer(GlobalNetworkRoutes()),
            routing.*MemberPointer(GlobalExternalRoutes())};
}

} // namespace datacenter
} // namespace ns3
