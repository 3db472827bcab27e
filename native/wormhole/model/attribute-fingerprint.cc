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

/**
 * An attribute DescribeAttributes prints: what a TypeId registered for it, read once.
 */
struct ReadableAttribute
{
    /** How the attribute's value is printed. */
    enum Shown
    {
        VALUE,   //!< serialized
        POINTEE, //!< the type of the object a PointerValue holds
        KIND,    //!< the value's type name only (a callback, a container of objects)
    };

    std::string name;                       //!< the attribute's name
    Ptr<const AttributeAccessor> accessor;  //!< reads it from an object
    Ptr<const AttributeChecker> checker;    //!< makes and serializes its values
    Shown shown;                            //!< how it is printed
    std::string kind;                       //!< the value's type name (printed for KIND)
};

/**
 * The attributes of an object of type ``tid`` (its parents' included) that
 * DescribeAttributes prints, in its order. A TypeId's attributes are fixed once
 * it is registered, so they are read once per TypeId: TypeId::GetAttribute copies
 * an attribute's whole record (help text and values) at every call, and each
 * flow's fingerprint of a DCQCN queue pair describes three objects (17 us a
 * flow on moe-8x7b-64g-dcqcn, 99,201 flows).
 */
const std::vector<ReadableAttribute>&
ReadableAttributes(TypeId tid)
{
    static std::unordered_map<uint16_t, std::vector<ReadableAttribute>> known;
    auto [entry, added] = known.try_emplace(tid.GetUid());
    if (!added)
    {
        return entry->second;
    }
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
            ReadableAttribute::Shown shown = ReadableAttribute::VALUE;
            if (kind == "ns3::PointerValue")
            {
                shown = ReadableAttribute::POINTEE;
            }
            else if (kind.find("Callback") != std::string::npos ||
                     kind.find("ObjectPtrContainer") != std::string::npos)
            {
                shown = ReadableAttribute::KIND;
            }
            entry->second.push_back({info.name, info.accessor, info.checker, shown, kind});
        }
        if (t == t.GetParent())
        {
            break;
        }
    }
    return entry->second;
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
    for (const ReadableAttribute& attribute : ReadableAttributes(tid))
    {
        out << attribute.name << "=";
        switch (attribute.shown)
        {
        case ReadableAttribute::POINTEE: {
            PointerValue held;
            attribute.accessor->Get(PeekPointer(object), held);
            Ptr<Object> pointee = held.GetObject();
            out << (pointee ? pointee->GetInstanceTypeId().GetName() : "none");
            break;
        }
        case ReadableAttribute::KIND:
            out << attribute.kind;
            break;
        case ReadableAttribute::VALUE: {
            Ptr<AttributeValue> value = attribute.checker->Create();
            attribute.accessor->Get(PeekPointer(object), *value);
            out << value->SerializeToString(attribute.checker);
            break;
        }
        }
        out << ";";
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
