/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "rdma-queue-pair.h"

#include "rdma-bth-header.h"
#include "rdma-congestion-control.h"
#include "rdma-int-header.h"
#include "rdma-nic.h"
#include "rdma-receive-queue-pair.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("RdmaQueuePair");
NS_OBJECT_ENSURE_REGISTERED(RdmaQueuePair);

TypeId
RdmaQueuePair::GetTypeId()
{
    static TypeId tid = TypeId("ns3::RdmaQueuePair")
                            .SetParent<Object>()
                            .SetGroupName("Rdma")
                            .AddConstructor<RdmaQueuePair>()
                            .AddTraceSource("AckRtt",
                                            "An ACK covered packets never acknowledged before: the time "
                                            "since the last of them was first sent (a packet RTT).",
                                            MakeTraceSourceAccessor(&RdmaQueuePair::m_ackRtt),
                                            "ns3::Time::TracedCallback");
    return tid;
}

RdmaQueuePair::RdmaQueuePair() = default;

void
RdmaQueuePair::Setup(Ptr<RdmaNic> nic,
                     const Config& config,
                     Ptr<RdmaCongestionControl> cc,
                     Ptr<RdmaReceiveQueuePair> receiver)
{
    NS_ABORT_MSG_IF(config.size == 0, "an RDMA flow needs at least one byte");
    NS_ABORT_MSG_IF(config.mtu == 0, "an RDMA MTU of 0 bytes");
    m_nic = nic;
    m_config = config;
    m_cc = cc;
    m_receiver = receiver;
    m_nPackets = static_cast<uint32_t>((config.size + config.mtu - 1) / config.mtu);
}

void
RdmaQueuePair::DoDispose()
{
    m_rtoEvent.Cancel();
    if (m_cc)
    {
        m_cc->Stop();
    }
    m_nic = nullptr;
    m_receiver = nullptr;
    m_cc = nullptr;
    m_done = MakeNullCallback<void, Ptr<RdmaQueuePair>>();
    Object::DoDispose();
}

void
RdmaQueuePair::SetFlowId(uint32_t id)
{
    m_flowId = id;
}

uint32_t
RdmaQueuePair::GetFlowId() const
{
    return m_flowId;
}

void
RdmaQueuePair::SetCompletionCallback(Callback<void, Ptr<RdmaQueuePair>> done)
{
    m_done = done;
}

void
RdmaQueuePair::Start()
{
    NS_ABORT_MSG_IF(m_started, "RDMA flow " << m_flowId << " started twice");
    m_started = true;
    m_startTime = m_resumedFrom.IsStrictlyNegative() ? Simulator::Now() : m_resumedFrom;
    m_nextSend = Simulator::Now();
    m_cc->Start(m_nic->GetLineRate());
    if (!m_initialState.empty())
    {
        m_cc->SetState(m_initialState);
    }
}

void
RdmaQueuePair::SetResumedFrom(Time start, const std::vector<double>& state)
{
    m_resumedFrom = start;
    m_initialState = state;
}

void
RdmaQueuePair::SetStartEvent(const EventId& start)
{
    m_startEvent = start;
}

EventId
RdmaQueuePair::GetStartEvent() const
{
    return m_startEvent;
}

void
RdmaQueuePair::CompleteVirtually(Time start, bool ack)
{
    NS_ABORT_MSG_IF(m_started,
                    "RDMA flow " << m_flowId << " has started: it cannot complete virtually");
    m_started = true;
    m_startTime = start;
    m_creditedBytes += m_config.size - GetDeliveredBytes();
    m_sndUna = m_sndNxt = m_sndMax = m_nPackets;
    m_credited.clear();
    m_lastCredit = {0, 0};
    m_acknowledged = true;
    m_ackTime = Simulator::Now();
    m_receiver->CompleteVirtually(m_nPackets, m_config.size, m_cc->WantsTelemetry(), ack);
}

void
RdmaQueuePair::SendLastAck()
{
    m_receiver->SendLastAck();
}

uint32_t
RdmaQueuePair::GetQpn() const
{
    return m_config.qpn;
}

Ipv4Address
RdmaQueuePair::GetSource() const
{
    return m_config.source;
}

Ipv4Address
RdmaQueuePair::GetDestination() const
{
    return m_config.destination;
}

uint16_t
RdmaQueuePair::GetSourcePort() const
{
    return m_config.sourcePort;
}

uint64_t
RdmaQueuePair::GetSize() const
{
    return m_config.size;
}

uint32_t
RdmaQueuePair::GetMtu() const
{
    return m_config.mtu;
}

uint32_t
RdmaQueuePair::GetNPackets() const
{
    return m_nPackets;
}

Ptr<RdmaNic>
RdmaQueuePair::GetNic() const
{
    return m_nic;
}

Ptr<RdmaReceiveQueuePair>
RdmaQueuePair::GetReceiver() const
{
    return m_receiver;
}

Ptr<RdmaCongestionControl>
RdmaQueuePair::GetCongestionControl() const
{
    return m_cc;
}

bool
RdmaQueuePair::IsStarted() const
{
    return m_started;
}

bool
RdmaQueuePair::IsFinished() const
{
    return m_finished;
}

bool
RdmaQueuePair::IsAcknowledged() const
{
    return m_acknowledged;
}

Time
RdmaQueuePair::GetStartTime() const
{
    return m_startTime;
}

Time
RdmaQueuePair::GetFinishTime() const
{
    return m_finishTime;
}

Time
RdmaQueuePair::GetAcknowledgedTime() const
{
    return m_ackTime;
}

uint64_t
RdmaQueuePair::BytesBefore(uint32_t psn) const
{
    return std::min<uint64_t>(uint64_t(psn) * m_config.mtu, m_config.size);
}

uint64_t
RdmaQueuePair::GetBytesSent() const
{
    return BytesBefore(m_sndMax);
}

uint64_t
RdmaQueuePair::GetBytesAcked() const
{
    // Ranges still held lie beyond una; they count as acknowledged already.
    uint64_t ahead = 0;
    for (const PsnRange& range : m_credited)
    {
        ahead += uint64_t(range.end - range.first) * m_config.mtu;
    }
    return BytesBefore(m_sndUna) + ahead;
}

uint64_t
RdmaQueuePair::GetDeliveredBytes() const
{
    return m_receiver ? m_receiver->GetDeliveredBytes() : 0;
}

DataRate
RdmaQueuePair::GetRate() const
{
    return m_cc->GetRate();
}

DataRate
RdmaQueuePair::GetTargetRate() const
{
    return m_cc->GetTargetRate();
}

double
RdmaQueuePair::GetAlpha() const
{
    return m_cc->GetAlpha();
}

uint64_t
RdmaQueuePair::GetCreditedBytes() const
{
    return m_creditedBytes;
}

uint64_t
RdmaQueuePair::GetPacketsSent() const
{
    return m_packetsSent;
}

uint64_t
RdmaQueuePair::GetPacketsRetransmitted() const
{
    return m_packetsRetransmitted;
}

uint32_t
RdmaQueuePair::GetNTimeouts() const
{
    return m_timeouts;
}

uint32_t
RdmaQueuePair::GetNNaksReceived() const
{
    return m_naks;
}

uint32_t
RdmaQueuePair::GetNCnpsReceived() const
{
    return m_cnps;
}

uint32_t
RdmaQueuePair::SkipCredited(uint32_t psn) const
{
    for (const PsnRange& range : m_credited)
    {
        if (psn >= range.first && psn < range.end)
        {
            psn = range.end;
        }
    }
    return psn;
}

uint64_t
RdmaQueuePair::GetCreditableBytes() const
{
    return m_sndMax + 1 >= m_nPackets ? 0 : uint64_t(m_nPackets - 1 - m_sndMax) * m_config.mtu;
}

uint64_t
RdmaQueuePair::Credit(uint64_t bytes)
{
    if (m_sndMax + 1 >= m_nPackets)
    {
        return 0;
    }
    uint64_t packets = std::min<uint64_t>(bytes / m_config.mtu, m_nPackets - 1 - m_sndMax);
    if (packets == 0)
    {
        return 0;
    }
    PsnRange range{m_sndMax, m_sndMax + static_cast<uint32_t>(packets)};
    NS_LOG_FUNCTION(this << range.first << range.end);
    if (m_sndNxt == range.first)
    {
        m_sndNxt = range.end;
    }
    if (m_sndUna == range.first)
    {
        m_sndUna = range.end; // nothing was outstanding
    }
    else
    {
        m_credited.push_back(range);
    }
    m_sndMax = range.end;
    m_lastCredit = range;
    uint64_t credited = packets * m_config.mtu;
    m_creditedBytes += credited;
    m_receiver->Credit(range.first, range.end, credited);
    return credited;
}

uint64_t
RdmaQueuePair::Uncredit(uint64_t bytes)
{
    PsnRange& last = m_lastCredit;
    if (last.first == last.end || m_sndMax != last.end)
    {
        return 0; // no credit, or packets beyond it went out
    }
    uint32_t packets =
        static_cast<uint32_t>(std::min<uint64_t>(bytes / m_config.mtu, last.end - last.first));
    if (packets == 0)
    {
        return 0;
    }
    uint32_t end = last.end;
    uint32_t kept = end - packets;
    NS_LOG_FUNCTION(this << last.first << kept << end);
    // PSNs that jumped over the range now stop where it ends
    if (m_sndNxt == end)
    {
        m_sndNxt = kept;
    }
    if (m_sndUna == end)
    {
        m_sndUna = kept;
    }
    if (!m_credited.empty() && m_credited.back().end == end)
    {
        m_credited.back().end = kept;
        if (m_credited.back().first == kept)
        {
            m_credited.pop_back();
        }
    }
    m_sndMax = kept;
    last.end = kept;
    uint64_t taken = uint64_t(packets) * m_config.mtu;
    m_creditedBytes -= taken;
    m_receiver->Uncredit(end, kept, taken);
    return taken;
}

void
RdmaQueuePair::ShiftTimes(Time delta)
{
    m_nextSend += delta;
    m_cc->ShiftTimes(delta);
    m_receiver->ShiftTimes(delta);
}

bool
RdmaQueuePair::HasDataToSend() const
{
    if (!m_started || m_acknowledged || m_sndNxt >= m_nPackets)
    {
        return false;
    }
    uint64_t window = m_cc->GetWindow();
    if (window == 0)
    {
        return true;
    }
    uint64_t inFlight = uint64_t(m_sndNxt - m_sndUna) * m_config.mtu;
    for (const PsnRange& range : m_credited)
    {
        if (range.first < m_sndNxt)
        {
            inFlight -= uint64_t(std::min(range.end, m_sndNxt) - range.first) * m_config.mtu;
        }
    }
    return inFlight < window;
}

Time
RdmaQueuePair::GetNextSendTime() const
{
    return m_nextSend;
}

Ptr<Packet>
RdmaQueuePair::BuildNextPacket()
{
    uint32_t psn = m_sndNxt;
    NS_ASSERT(psn < m_nPackets);
    uint32_t payload = static_cast<uint32_t>(BytesBefore(psn + 1) - BytesBefore(psn));
    Ptr<Packet> packet = Create<Packet>(payload + RdmaBthHeader::ICRC_BYTES);

    RdmaBthHeader bth;
    bool last = psn + 1 == m_nPackets;
    if (m_nPackets == 1)
    {
        bth.SetOpcode(RdmaBthHeader::RC_WRITE_ONLY);
    }
    else if (psn == 0)
    {
        bth.SetOpcode(RdmaBthHeader::RC_WRITE_FIRST);
    }
    else
    {
        bth.SetOpcode(last ? RdmaBthHeader::RC_WRITE_LAST : RdmaBthHeader::RC_WRITE_MIDDLE);
    }
    bth.SetDestQp(m_receiver->GetQpn());
    bth.SetPsn(psn);
    bth.SetAckRequest(last);
    if (m_cc->WantsTelemetry())
    {
        bth.SetTelemetry(true);
        packet->AddHeader(RdmaIntHeader());
    }
    packet->AddHeader(bth);

    ++m_packetsSent;
    if (psn < m_sndMax)
    {
        ++m_packetsRetransmitted;
    }
    else if (!m_ackRtt.IsEmpty())
    {
        m_firstSent.emplace_back(psn, Simulator::Now());
    }
    m_sndNxt = SkipCredited(psn + 1);
    m_sndMax = std::max(m_sndMax, m_sndNxt);

    uint32_t wireBytes = packet->GetSize() + m_config.wireOverhead;
    m_cc->NotifySent(wireBytes);
    double gap = wireBytes * 8.0 / static_cast<double>(m_cc->GetRate().GetBitRate()) + m_paceCarry;
    Time step = Seconds(gap);
    m_paceCarry = gap - step.GetSeconds();
    m_nextSend = Simulator::Now() + step;

    if (!m_rtoEvent.IsPending())
    {
        RestartRetransmitTimer();
    }
    return packet;
}

void
RdmaQueuePair::RestartRetransmitTimer()
{
    m_rtoEvent.Cancel();
    m_rtoEvent = Simulator::Schedule(m_config.retransmitTimeout,
                                     &RdmaQueuePair::RetransmitTimeout,
                                     this);
}

void
RdmaQueuePair::RetransmitTimeout()
{
    NS_LOG_FUNCTION(this << m_sndUna << m_sndNxt);
    ++m_timeouts;
    m_sndNxt = m_sndUna;
    m_firstSent.clear(); // what goes again is acknowledged by an ACK of either copy (Karn)
    RestartRetransmitTimer();
    m_nic->Kick();
}

void
RdmaQueuePair::ReceiveAck(uint32_t wirePsn, bool nak, const RdmaIntHeader* telemetry)
{
    if (m_acknowledged)
    {
        return;
    }
    uint32_t psn = RdmaBthHeader::Unwrap(wirePsn, m_sndUna);
    // An ACK names the last PSN received in order, a NAK the PSN expected next.
    uint32_t next = nak ? psn : psn + 1;
    if (static_cast<int32_t>(next - m_sndUna) < 0 || next > m_sndMax)
    {
        return; // stale, or beyond anything sent
    }
    NS_LOG_FUNCTION(this << next << nak);
    bool advanced = next > m_sndUna;
    Time firstSent = Time::Max();
    while (!m_firstSent.empty() && m_firstSent.front().first < next)
    {
        firstSent = m_firstSent.front().second; // the last packet this ACK newly covers
        m_firstSent.pop_front();
    }
    if (nak)
    {
        m_firstSent.clear(); // go-back-N: what follows is sent again (Karn)
    }
    if (firstSent != Time::Max())
    {
        m_ackRtt(Simulator::Now() - firstSent);
    }
    m_sndUna = SkipCredited(next);
    while (!m_credited.empty() && m_credited.front().end <= m_sndUna)
    {
        m_credited.pop_front();
    }
    if (nak)
    {
        ++m_naks;
        m_sndNxt = m_sndUna;
    }
    else if (m_sndNxt < m_sndUna)
    {
        m_sndNxt = m_sndUna;
    }
    m_cc->NotifyAck(m_sndUna, m_sndNxt, telemetry);

    if (m_sndUna >= m_nPackets)
    {
        m_acknowledged = true;
        m_ackTime = Simulator::Now();
        m_rtoEvent.Cancel();
        m_cc->Stop();
        m_nic->NotifyAcknowledged(this);
        return;
    }
    if (m_sndUna == m_sndNxt)
    {
        m_rtoEvent.Cancel(); // nothing outstanding; the next packet restarts it
    }
    else if (advanced)
    {
        RestartRetransmitTimer();
    }
    m_nic->Kick();
}

void
RdmaQueuePair::ReceiveCnp()
{
    if (m_acknowledged)
    {
        return;
    }
    ++m_cnps;
    m_cc->NotifyCnp();
}

void
RdmaQueuePair::NotifyDelivered()
{
    if (m_finished)
    {
        return;
    }
    m_finished = true;
    m_finishTime = Simulator::Now();
    m_nic->NotifyFinished(this);
    if (!m_done.IsNull())
    {
        m_done(this);
    }
}

} // namespace ns3
