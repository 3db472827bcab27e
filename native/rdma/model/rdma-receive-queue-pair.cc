/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-receive-queue-pair.h"

#include "rdma-aeth-header.h"
#include "rdma-bth-header.h"
#include "rdma-nic.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaReceiveQueuePair");
NS_OBJECT_ENSURE_REGISTERED(RdmaReceiveQueuePair);

namespace
{
/** Reserved bytes after the BTH of a RoCEv2 CNP. */
constexpr uint32_t CNP_RESERVED_BYTES = 16;
} // namespace

TypeId
RdmaReceiveQueuePair::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaReceiveQueuePair")
                            .SetParent<Object>()
                            .SetGroupName("Rdma")
                            .AddConstructor<RdmaReceiveQueuePair>();
    return tid;
}

RdmaReceiveQueuePair::RdmaReceiveQueuePair() = default;

void
RdmaReceiveQueuePair::Setup(Ptr<RdmaNic> nic, const Config& config)
{
    m_nic = nic;
    m_config = config;
}

void
RdmaReceiveQueuePair::DoDispose()
{
    m_nic = nullptr;
    m_done = MakeNullCallback<void>();
    Object::DoDispose();
}

void
RdmaReceiveQueuePair::SetCompletionCallback(Callback<void> done)
{
    m_done = done;
}

void
RdmaReceiveQueuePair::ReceiveData(Ptr<Packet> packet,
                                  const RdmaBthHeader& bth,
                                  bool congestionExperienced)
{
    ++m_received;
    if (bth.HasTelemetry())
    {
        packet->RemoveHeader(m_telemetry);
        m_hasTelemetry = true;
    }
    if (congestionExperienced)
    {
        ++m_marked;
        Time now = Simulator::Now();
        if (!m_cnpSent || now - m_lastCnp >= m_config.cnpInterval)
        {
            m_cnpSent = true;
            m_lastCnp = now;
            SendCnp();
        }
    }

    uint32_t psn = RdmaBthHeader::Unwrap(bth.GetWirePsn(), m_expected);
    int32_t ahead = static_cast<int32_t>(psn - m_expected);
    if (ahead > 0)
    {
        ++m_outOfOrder;
        if (!m_nakSent)
        {
            m_nakSent = true;
            SendAck(true);
        }
        return;
    }
    ++m_sinceAck;
    if (ahead < 0)
    {
        ++m_duplicates;
    }
    else
    {
        m_delivered += packet->GetSize() - RdmaBthHeader::ICRC_BYTES;
        m_nakSent = false;
        Advance(psn);
    }
    bool completes = ahead == 0 && bth.IsLastOfMessage();
    if (completes || bth.GetAckRequest() || m_sinceAck >= m_config.ackInterval)
    {
        SendAck(false);
    }
    if (completes && !m_complete)
    {
        m_complete = true;
        m_completionTime = Simulator::Now();
        if (!m_done.IsNull())
        {
            m_done();
        }
    }
}

void
RdmaReceiveQueuePair::Advance(uint32_t psn)
{
    m_expected = psn + 1;
    while (!m_credited.empty() && m_credited.front().first == m_expected)
    {
        m_expected = m_credited.front().end;
        m_credited.pop_front();
    }
}

void
RdmaReceiveQueuePair::Credit(uint32_t first, uint32_t end, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << first << end << bytes);
    m_delivered += bytes;
    if (m_expected == first)
    {
        m_expected = end;
    }
    else
    {
        m_credited.push_back({first, end});
    }
}

void
RdmaReceiveQueuePair::Uncredit(uint32_t end, uint32_t kept, uint64_t bytes)
{
    NS_LOG_FUNCTION(this << end << kept << bytes);
    m_delivered -= bytes;
    if (m_expected == end)
    {
        m_expected = kept; // it had jumped over the range
    }
    else if (!m_credited.empty() && m_credited.back().end == end)
    {
        m_credited.back().end = kept;
        if (m_credited.back().first == kept)
        {
            m_credited.pop_back();
        }
    }
}

void
RdmaReceiveQueuePair::CompleteVirtually(uint32_t packets, uint64_t size, bool telemetry, bool ack)
{
    m_delivered = size;
    m_expected = packets;
    m_credited.clear();
    m_complete = true;
    m_completionTime = Simulator::Now();
    if (telemetry && !m_hasTelemetry)
    {
        m_telemetry = RdmaIntHeader(); // no hops: the finished sender reads nothing from it
        m_hasTelemetry = true;
    }
    // the last packet's arrival sends its ACK before the completion is told, as in ReceiveData
    if (ack)
    {
        SendAck(false);
    }
    if (!m_done.IsNull())
    {
        m_done();
    }
}

void
RdmaReceiveQueuePair::SendLastAck()
{
    NS_ABORT_MSG_IF(!m_complete, "RDMA receiver " << m_config.qpn << ": no last packet to acknowledge");
    SendAck(false);
}

void
RdmaReceiveQueuePair::ShiftTimes(Time delta)
{
    m_lastCnp += delta;
}

void
RdmaReceiveQueuePair::SendAck(bool nak)
{
    m_sinceAck = 0;
    RdmaBthHeader bth;
    bth.SetOpcode(RdmaBthHeader::RC_ACKNOWLEDGE);
    bth.SetDestQp(m_config.peerQpn);
    bth.SetPsn(nak ? m_expected : m_expected - 1);
    RdmaAethHeader aeth;
    aeth.SetNak(nak);
    aeth.SetMsn(m_complete ? 1 : 0);
    Ptr<Packet> packet = Create<Packet>(RdmaBthHeader::ICRC_BYTES);
    if (m_hasTelemetry)
    {
        bth.SetTelemetry(true);
        packet->AddHeader(m_telemetry);
    }
    packet->AddHeader(aeth);
    packet->AddHeader(bth);
    if (nak)
    {
        ++m_naks;
    }
    else
    {
        ++m_acks;
    }
    m_nic->SendControl(packet, m_config.peer, m_config.sourcePort);
}

void
RdmaReceiveQueuePair::SendCnp()
{
    ++m_cnps;
    RdmaBthHeader bth;
    bth.SetOpcode(RdmaBthHeader::CNP);
    bth.SetDestQp(m_config.peerQpn);
    Ptr<Packet> packet = Create<Packet>(CNP_RESERVED_BYTES + RdmaBthHeader::ICRC_BYTES);
    packet->AddHeader(bth);
    m_nic->SendControl(packet, m_config.peer, m_config.sourcePort);
}

uint32_t
RdmaReceiveQueuePair::GetQpn() const
{
    return m_config.qpn;
}

uint32_t
RdmaReceiveQueuePair::GetExpectedPsn() const
{
    return m_expected;
}

uint64_t
RdmaReceiveQueuePair::GetDeliveredBytes() const
{
    return m_delivered;
}

bool
RdmaReceiveQueuePair::IsComplete() const
{
    return m_complete;
}

Time
RdmaReceiveQueuePair::GetCompletionTime() const
{
    return m_completionTime;
}

uint64_t
RdmaReceiveQueuePair::GetPacketsReceived() const
{
    return m_received;
}

uint64_t
RdmaReceiveQueuePair::GetPacketsMarked() const
{
    return m_marked;
}

uint64_t
RdmaReceiveQueuePair::GetDuplicates() const
{
    return m_duplicates;
}

uint64_t
RdmaReceiveQueuePair::GetOutOfOrder() const
{
    return m_outOfOrder;
}

uint32_t
RdmaReceiveQueuePair::GetNAcksSent() const
{
    return m_acks;
}

uint32_t
RdmaReceiveQueuePair::GetNNaksSent() const
{
    return m_naks;
}

uint32_t
RdmaReceiveQueuePair::GetNCnpsSent() const
{
    return m_cnps;
}

} // namespace ns3
