/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "onoff-flow.h"

#include "private-access.h"

#include "ns3/data-rate.h"
#include "ns3/onoff-application.h"
#include "ns3/pointer.h"
#include "ns3/random-variable-stream.h"
#include "ns3/socket.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(OnOffFlow);

TypeId
OnOffFlow::GetTypeId()
{
    static TypeId tid = TypeId("ns3::OnOffFlow")
                            .SetParent<ApplicationFlow>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<OnOffFlow>();
    return tid;
}

OnOffFlow::OnOffFlow() = default;

std::string
OnOffFlow::GetKind() const
{
    return "onoff" + ProtocolSuffix();
}

Ptr<OnOffApplication>
OnOffFlow::OnOff() const
{
    return StaticCast<OnOffApplication>(m_app);
}

Ptr<Socket>
OnOffFlow::GetSocket() const
{
    return OnOff()->GetSocket();
}

uint64_t&
OnOffFlow::SentCounter() const
{
    return wormhole::OnOffTotalBytes(OnOff());
}

double
OnOffFlow::GetAppRate() const
{
    DataRateValue rate;
    m_app->GetAttribute("DataRate", rate);
    return rate.Get().GetBitRate();
}

bool
OnOffFlow::IsConstantRate() const
{
    PointerValue off;
    m_app->GetAttribute("OffTime", off);
    auto constant = DynamicCast<ConstantRandomVariable>(off.Get<RandomVariableStream>());
    return constant && constant->GetConstant() == 0;
}

uint64_t
OnOffFlow::AppCreditable() const
{
    return m_size == 0 ? UNLIMITED : m_size - std::min(m_size, SentCounter());
}

bool
OnOffFlow::HasStopped() const
{
    // uid 0: no stop time was set (no stop event was ever scheduled)
    const EventId& stop = wormhole::ApplicationStopEvent(m_app);
    return stop.GetUid() != 0 && !stop.IsPending();
}

uint64_t
OnOffFlow::GetSendable() const
{
    return AppCreditable();
}

uint64_t
OnOffFlow::TakeFromSender(uint64_t bytes)
{
    UintegerValue packetSize;
    m_app->GetAttribute("PacketSize", packetSize);
    uint64_t taken = std::min(bytes, AppCreditable());
    taken -= packetSize.Get() > 0 ? taken % packetSize.Get() : 0;
    SentCounter() += taken;
    return taken;
}

uint64_t
OnOffFlow::GiveBackToSender(uint64_t bytes)
{
    uint64_t& sent = SentCounter();
    sent -= std::min(sent, bytes);
    return bytes;
}

} // namespace ns3
