/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "attribute-fingerprint.h"

#include "ns3/object.h"
#include "ns3/pointer.h"
#include "ns3/type-id.h"

#include <set>
#include <sstream>
#include <unordered_map>
#include <vector>

namespace ns3
{
namespace wormhole
{
namespace
{
/**
 * Attributes that name an object rather than configure it (addresses,
 * channel ids), or that are set per object for timing the controller keys
 * separately (start offsets): left out, so equal setups on other hosts match.
 */
bool
IsIdentity(const std::string& name)
{
    static const std::set<std::string> identities{
        "Remote", "Local", "Address", "Id", "StartTime", "StopTime", "LastSet"};
    return identities.contains(name);
}
} // namespace

std::string
DescribeAttributes(Ptr<const Object> object)
{
    if (!object)
    {
        return "none";
    }
    std::ostringstream out;
    TypeId tid = object->GetInstanceTypeId();
    out << tid.GetName() << "{";
    for (TypeId t = tid;; t = t.GetParent())
    {
        for (std::size_t i = 0; i < t.GetAttributeN(); ++i)
        {
            TypeId::AttributeInformation info = t.GetAttribute(i);
            if (!(info.flags & TypeId::ATTR_GET) || !info.accessor->HasGetter() ||
                IsIdentity(info.name))
            {
                continue;
            }
            std::string kind = info.checker->GetValueTypeName();
            out << info.name << "=";
            if (kind == "ns3::PointerValue")
            {
                PointerValue held;
                info.accessor->Get(PeekPointer(object), held);
                Ptr<Object> pointee = held.GetObject();
                out << (pointee ? pointee->GetInstanceTypeId().GetName() : "none");
            }
            else if (kind.find("Callback") != std::string::npos ||
                     kind.find("ObjectPtrContainer") != std::string::npos)
            {
                out << kind;
            }
            else
            {
                Ptr<AttributeValue> value = info.checker->Create();
                info.accessor->Get(PeekPointer(object), *value);
                out << value->SerializeToString(info.checker);
            }
            out << ";";
        }
        if (t == t.GetParent())
        {
            break;
        }
    }
    out << "}";
    return out.str();
}

std::string
DescribeDefaults(TypeId tid)
{
    // Config::SetDefault replaces an attribute's initial value with a new object: while the
    // objects are the same, so is the description (each flow's fingerprint asks for the
    // socket's and the congestion control's, 40 values to print, once per flow)
    struct Described
    {
        std::vector<Ptr<const AttributeValue>> values;
        std::string text;
    };

    static std::unordered_map<uint16_t, Described> described;
    std::vector<Ptr<const AttributeValue>> values;
    for (TypeId t = tid;; t = t.GetParent())
    {
        for (std::size_t i = 0; i < t.GetAttributeN(); ++i)
        {
            values.push_back(t.GetAttribute(i).initialValue);
        }
        if (t == t.GetParent())
        {
            break;
        }
    }
    Described& known = described[tid.GetUid()];
    if (!known.text.empty() && known.values == values)
    {
        return known.text;
    }
    std::ostringstream out;
    out << tid.GetName() << "{";
    for (TypeId t = tid;; t = t.GetParent())
    {
        for (std::size_t i = 0; i < t.GetAttributeN(); ++i)
        {
            TypeId::AttributeInformation info = t.GetAttribute(i);
            if (!(info.flags & TypeId::ATTR_CONSTRUCT) || IsIdentity(info.name) ||
                !info.initialValue)
            {
                continue;
            }
            std::string kind = info.checker->GetValueTypeName();
            out << info.name << "=";
            if (kind == "ns3::PointerValue" || kind.find("Callback") != std::string::npos ||
                kind.find("ObjectPtrContainer") != std::string::npos)
            {
                out << kind;
            }
            else
            {
                out << info.initialValue->SerializeToString(info.checker);
            }
            out << ";";
        }
        if (t == t.GetParent())
        {
            break;
        }
    }
    out << "}";
    known = Described{std::move(values), out.str()};
    return known.text;
}

} // namespace wormhole
} // namespace ns3
