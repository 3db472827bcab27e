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
 * whether this one may, from its parameters (and why, in ``source``).
 */
bool
OwnVariableSource(Ptr<const Object> object, RandomSource& source)
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
            source = {name + " marks or drops at random above MaxTh (Gentle)", true};
        }
        else if (BoolAttribute(object, "ARED") || BoolAttribute(object, "FengAdaptive"))
        {
            source = {name + " marks or drops at random (adaptive RED)", true};
        }
        else if (DoubleAttribute(object, "MinTh") < DoubleAttribute(object, "MaxTh"))
        {
            source = {name + " marks or drops at random between MinTh and MaxTh", true};
        }
        else
        {
            return false;
        }
        return true;
    }
    if (name == "ns3::Ipv4GlobalRouting" && BoolAttribute(object, "RandomEcmpRouting"))
    {
        source = {name + " routes each packet at random among equal-cost paths", false};
        return true;
    }
    static const std::set<std::string> dropsAtRandom{
        "ns3::PieQueueDisc", "ns3::FqPieQueueDisc", "ns3::CobaltQueueDisc", "ns3::FqCobaltQueueDisc"};
    if (dropsAtRandom.contains(name))
    {
        source = {name + " drops at random once its queue stands", true};
        return true;
    }
    return false;
}

bool
IsConstant(Ptr<const RandomVariableStream> variable)
{
    return DynamicCast<const ConstantRandomVariable>(variable) ||
           DynamicCast<const DeterministicRandomVariable>(variable);
}

void
Collect(Ptr<const Object> object, int depth, std::set<const Object*>& seen, std::vector<RandomSource>& out)
{
    if (!object || depth > MAX_DEPTH || !seen.insert(PeekPointer(object)).second)
    {
        return;
    }
    RandomSource own;
    if (OwnVariableSource(object, own))
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
                    out.push_back({tid.GetName() + "::" + info.name + " is a " +
                                       variable->GetInstanceTypeId().GetName(),
                                   false});
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

std::vector<RandomSource>
DescribeRandomSources(Ptr<const Object> object)
{
    std::vector<RandomSource> sources;
    std::set<const Object*> seen;
    Collect(object, 0, seen, sources);
    return sources;
}

} // namespace wormhole
} // namespace ns3
