/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-flow.h"

#include "ns3/attribute-fingerprint.h"
#include "ns3/rdma-congestion-control.h"
#include "ns3/rdma-nic.h"
#include "ns3/rdma-queue-pair.h"

#include "ns3/abort.h"
#include "ns3/node.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(RdmaFlow);

namespace
{
constexpr uint8_t UDP_PROTOCOL = 17;
} // namespace

TypeId
RdmaFlow::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaFlow")
                            .SetParent<TrackedFlow>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<RdmaFlow>();
    return tid;
}

RdmaFlow::~RdmaFlow() = default;

RdmaFlow::RdmaFlow() = default;

void
RdmaFlow::DoDispose()
{
    m_qp = nullptr;
    TrackedFlow::DoDispose();
}

void
RdmaFlow::SetQueuePair(Ptr<RdmaQueuePair> qp)
{
    m_qp = qp;
    m_srcNode = qp->GetNic()->GetNode();
    m_srcAddress = qp->GetSource();
    m_dstAddress = qp->GetDestination();
    m_dstNode = wormhole::NodeOwning(m_dstAddress);
    m_srcPort = qp->GetSourcePort();
    m_dstPort = RdmaNic::ROCE_PORT;
    m_size = qp->GetSize();
    NS_ABORT_MSG_IF(!qp->IsStarted() && !qp->GetStartEvent().IsPending(),
                    "RdmaFlow: queue pair " << qp->GetQpn() << " has neither started nor a start event");
    m_start = qp->IsStarted() ? qp->GetStartTime()
                              : Simulator::Now() + Simulator::GetDelayLeft(qp->GetStartEvent());
}

Ptr<RdmaQueuePair>
RdmaFlow::GetQueuePair() const
{
    return m_qp;
}

bool
RdmaFlow::IsPaced() const
{
    return true;
}

std::string
RdmaFlow::GetKind() const
{
    // ns3::RdmaDcqcn -> rdma-dcqcn
    std::string name = m_qp->GetCongestionControl()->GetInstanceTypeId().GetName();
    name = name.substr(name.rfind(':') + 1);
    if (name.starts_with("Rdma"))
    {
        name = name.substr(4);
    }
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) {
        return static_cast<char>(std::tolower(c));
    });
    return "rdma-" + name;
}

uint8_t
RdmaFlow::GetProtocol() const
{
    return UDP_PROTOCOL;
}

bool
RdmaFlow::GetReversePorts(uint16_t& source, uint16_t& destination) const
{
    source = m_srcPort;
    destination = RdmaNic::ROCE_PORT;
    return true;
}

std::string
RdmaFlow::GetCongestionOps() const
{
    return m_qp->GetCongestionControl()->GetInstanceTypeId().GetName();
}

bool
RdmaFlow::TraceRtt(Callback<void, Time> sink)
{
    return m_qp->TraceConnectWithoutContext("AckRtt", sink);
}

EventId
RdmaFlow::GetStartEvent() const
{
    return m_qp->GetStartEvent();
}

bool
RdmaFlow::CanBeHeld() const
{
    return true;
}

void
RdmaFlow::StartHeld()
{
    m_held = true; // connected since it was created: it just does not start
}

bool
RdmaFlow::IsHeld() const
{
    return m_held;
}

void
RdmaFlow::ResumeHeld(const std::vector<double>& state)
{
    m_held = false;
    m_qp->SetResumedFrom(m_start, state);
    m_qp->GetNic()->StartQueuePair(m_qp);
}

void
RdmaFlow::CompleteVirtually()
{
    m_held = false;
    m_qp->CompleteVirtually(m_start, !m_owesEnd);
}

bool
RdmaFlow::OweEndOfTransfer()
{
    m_owesEnd = true;
    return true;
}

void
RdmaFlow::SendOwedEndOfTransfer()
{
    NS_ABORT_MSG_IF(!m_owesEnd, "RDMA flow " << m_qp->GetQpn() << " owes no last ACK");
    m_owesEnd = false;
    m_qp->SendLastAck();
}

uint64_t
RdmaFlow::GetDelivered() const
{
    return m_qp->GetDeliveredBytes();
}

uint64_t
RdmaFlow::GetReceiverTotal() const
{
    return m_qp->GetDeliveredBytes();
}

uint64_t
RdmaFlow::GetCredited() const
{
    return m_qp->GetCreditedBytes();
}

uint64_t
RdmaFlow::GetSendable() const
{
    return m_qp->GetCreditableBytes();
}

uint64_t
RdmaFlow::GetSent() const
{
    return m_qp->GetBytesSent();
}

double
RdmaFlow::GetSendingRate() const
{
    return m_qp->IsStarted() ? static_cast<double>(m_qp->GetRate().GetBitRate()) / 8 : 0;
}

uint64_t
RdmaFlow::GetCongestionNotifications() const
{
    return m_qp->GetNCnpsReceived();
}

uint64_t
RdmaFlow::Credit(uint64_t bytes)
{
    return m_qp->Credit(bytes);
}

uint64_t
RdmaFlow::Uncredit(uint64_t bytes)
{
    return m_qp->Uncredit(bytes);
}

void
RdmaFlow::ShiftTimes(Time delta)
{
    if (m_qp->IsStarted())
    {
        m_qp->ShiftTimes(delta);
    }
}

std::string
RdmaFlow::GetFingerprint() const
{
    std::ostringstream out;
    out << GetKind() << " size=" << m_size
        << " cc=" << wormhole::DescribeAttributes(m_qp->GetCongestionControl());
    for (Ptr<Node> host : {m_srcNode, m_dstNode})
    {
        Ptr<RdmaNic> nic = host ? host->GetObject<RdmaNic>() : nullptr;
        out << " nic=" << (nic ? wormhole::DescribeAttributes(nic) : std::string("none"));
    }
    return out.str();
}

std::vector<double>
RdmaFlow::GetCongestionState() const
{
    return m_qp->IsStarted() ? m_qp->GetCongestionControl()->GetState() : std::vector<double>{};
}

bool
RdmaFlow::SetCongestionState(const std::vector<double>& state)
{
    if (!m_qp->IsStarted() || m_qp->IsAcknowledged())
    {
        return false;
    }
    m_qp->GetCongestionControl()->SetState(state);
    return true;
}

} // namespace ns3
