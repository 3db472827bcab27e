/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-congestion-control.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaCongestionControl);

TypeId
RdmaCongestionControl::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::RdmaCongestionControl").SetParent<Object>().SetGroupName("Rdma");
    return tid;
}

void
RdmaCongestionControl::Stop()
{
}

DataRate
RdmaCongestionControl::GetTargetRate() const
{
    return GetRate();
}

double
RdmaCongestionControl::GetAlpha() const
{
    return 0.0;
}

uint64_t
RdmaCongestionControl::GetWindow() const
{
    return 0;
}

bool
RdmaCongestionControl::WantsTelemetry() const
{
    return false;
}

void
RdmaCongestionControl::NotifySent(uint32_t /* bytes */)
{
}

void
RdmaCongestionControl::NotifyCnp()
{
}

void
RdmaCongestionControl::NotifyAck(uint32_t /* nextPsn */,
                                 uint32_t /* sendNext */,
                                 const RdmaIntHeader* /* telemetry */)
{
}

void
RdmaCongestionControl::ShiftTimes(Time /* delta */)
{
}

std::vector<double>
RdmaCongestionControl::GetState() const
{
    return {};
}

void
RdmaCongestionControl::SetState(const std::vector<double>& /* state */)
{
}

} // namespace ns3
