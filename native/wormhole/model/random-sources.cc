/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "random-sources.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/object.h"
#include "ns3/pointer.h"
#include "ns3/random-variable-stream.h"
#include "ns3/type-id.h"

#include <set>

namespace ns3
{
namespace wormhole
{
namespace
{

/** How deep attributes holding objects are followed (a device's error model's random variable is 2). */
constexpr int MAX_DEPTH = 4;

bool
BoolAttribute(Ptr<const Object> object, const std::string& name)
{
    BooleanValue value;
    return object->GetAttributeFailSafe(name, value) && value.Get();
}

double
DoubleAttribute(Ptr<const Object> object, const std::string& name)
{
    DoubleValue value;
    return object->GetAttributeFailSafe(name, value) ? value.Get() : 0.0;
}

/**
 * Models that draw through a variable of their own rather than an attribute:
 * why this one may, from its parameters; empty if it never does.
 */
std::string
OwnVariableSource(Ptr<const Object> object)
{
    TypeId tid = object->GetInstanceTypeId();
    std::string name = tid.GetName();
    if (name == "ns3::RedQueueDisc")
    {
        // RED draws in its probabilistic region only: between MinTh and MaxTh, and with
        // Gentle between MaxTh and twice it; as a step marker (MinTh = MaxTh, Gentle
        // off) it marks every packet above the threshold and never draws
        if (BoolAttribute(object, "Gentle"))
        {
            return name + " marks or drops at random above MaxTh (Gentle)";
        }
        if (BoolAttribute(object, "ARED") || BoolAttribute(object, "FengAdaptive"))
        {
            return name + " marks or drops at random (adaptive RED)";
        }
        if (DoubleAttribute(object, "MinTh") < DoubleAttribute(object, "MaxTh"))
        {
            return name + " marks or drops at random between MinTh and MaxTh";
        }
        return "";
    }
    if (name == "ns3::Ipv4GlobalRouting" && BoolAttribute(object, "RandomEcmpRouting"))
    {
        return name + " routes each packet at random among equal-cost paths";
    }
    static const std::set<std::string> alwaysRandom{
        "ns3::PieQueueDisc", "ns3::FqPieQueueDisc", "ns3::CobaltQueueDisc", "ns3::FqCobaltQueueDisc"};
    if (alwaysRandom.contains(name))
    {
        return name + " drops at random";
    }
    return "";
}

bool
IsConstant(Ptr<const RandomVariableStream> variable)
{
    return DynamicCast<const ConstantRandomVariable>(variable) ||
           DynamicCast<const DeterministicRandomVariable>(variable);
}

void
Collect(Ptr<const Object> object, int depth, std::set<const Object*>& seen, std::vector<std::string>& out)
{
    if (!object || depth > MAX_DEPTH || !seen.insert(PeekPointer(object)).second)
    {
        return;
    }
    std::string own = OwnVariableSource(object);
    if (!own.empty())
    {
        out.push_back(own);
    }
    TypeId tid = object->GetInstanceTypeId();
    for (TypeId t = tid;; t = t.GetParent())
    {
        for (std::size_t i = 0; i < t.GetAttributeN(); ++i)
        {
            TypeId::AttributeInformation info = t.GetAttribute(i);
            if (!(info.flags & TypeId::ATTR_GET) || !info.accessor->HasGetter() ||
                info.checker->GetValueTypeName() != "ns3::PointerValue")
            {
                continue;
            }
            PointerValue held;
            info.accessor->Get(PeekPointer(object), held);
            Ptr<Object> pointee = held.GetObject();
            if (auto variable = DynamicCast<RandomVariableStream>(pointee))
            {
                if (!IsConstant(variable))
                {
                    out.push_back(tid.GetName() + "::" + info.name + " is a " +
                                  variable->GetInstanceTypeId().GetName());
                }
            }
            else
            {
                Collect(pointee, depth + 1, seen, out);
            }
        }
        if (t == t.GetParent())
        {
            break;
        }
    }
}

} // namespace

std::vector<std::string>
DescribeRandomSources(Ptr<const Object> object)
{
    std::vector<std::string> sources;
    std::set<const Object*> seen;
    Collect(object, 0, seen, sources);
    return sources;
}

} // namespace wormhole
} // namespace ns3
