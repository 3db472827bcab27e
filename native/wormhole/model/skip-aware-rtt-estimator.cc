/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "skip-aware-rtt-estimator.h"

#include "private-access.h"
#include "wormhole-simulator-impl.h"

#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/tcp-socket-base.h"

#include <typeinfo>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(SkipAwareRttEstimator);

TypeId
SkipAwareRttEstimator::GetTypeId()
{
    static TypeId tid = TypeId("ns3::SkipAwareRttEstimator")
                            .SetParent<RttMeanDeviation>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<SkipAwareRttEstimator>();
    return tid;
}

SkipAwareRttEstimator::SkipAwareRttEstimator()
    : m_correctedSamples(0)
{
}

SkipAwareRttEstimator::SkipAwareRttEstimator(const SkipAwareRttEstimator& other)
    : RttMeanDeviation(other),
      m_correctedSamples(other.m_correctedSamples)
{
}

bool
SkipAwareRttEstimator::ReplaceDefault(Ptr<TcpSocketBase> socket)
{
    Ptr<RttEstimator> current = wormhole::TcpRttEstimatorOf(socket);
    if (!current || DynamicCast<SkipAwareRttEstimator>(current))
    {
        return current != nullptr;
    }
    if (typeid(*current) != typeid(RttMeanDeviation))
    {
        return false; // the script's own estimator: left as it is
    }
    Ptr<SkipAwareRttEstimator> aware = CreateObject<SkipAwareRttEstimator>();
    for (TypeId tid = RttMeanDeviation::GetTypeId(); tid != Object::GetTypeId(); tid = tid.GetParent())
    {
        for (uint32_t i = 0; i < tid.GetAttributeN(); ++i)
        {
            TypeId::AttributeInformation info = tid.GetAttribute(i);
            if ((info.flags & TypeId::ATTR_GET) && (info.flags & TypeId::ATTR_SET))
            {
                StringValue value;
                current->GetAttribute(info.name, value);
                aware->SetAttribute(info.name, value);
            }
        }
    }
    aware->m_estimatedRtt = current->GetEstimate();
    aware->m_estimatedVariation = current->GetVariation();
    aware->m_nSamples = current->GetNSamples();
    socket->SetRtt(aware);
    return true;
}

TypeId
SkipAwareRttEstimator::GetInstanceTypeId() const
{
    return GetTypeId();
}

void
SkipAwareRttEstimator::Measurement(Time measure)
{
    // every ACK measures: the simulator is looked up once, not cast per call
    if (WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating())
    {
        Time now = impl->Now();
        Time paused = impl->PausedWithin(now - measure, now);
        if (paused.IsStrictlyPositive())
        {
            measure = std::max(measure - paused, TimeStep(1));
            ++m_correctedSamples;
        }
    }
    RttMeanDeviation::Measurement(measure);
}

Ptr<RttEstimator>
SkipAwareRttEstimator::Copy() const
{
    return CopyObject<SkipAwareRttEstimator>(this);
}

uint64_t
SkipAwareRttEstimator::GetCorrectedSamples() const
{
    return m_correctedSamples;
}

} // namespace ns3
