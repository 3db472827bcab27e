/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-tracker.h"

#include "application-flow.h"
#include "bulk-send-flow.h"
#include "flow-source.h"
#include "flow-tag.h"
#include "link-properties.h"
#include "workload-oracle.h"
#include "wormhole-baseline-simulator-impl.h"
#include "wormhole-simulator-impl.h"

#include "ns3/abort.h"
#include "ns3/application.h"
#include "ns3/flow-monitor.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-flow-classifier.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/make-event.h"
#include "ns3/node-list.h"
#include "ns3/node.h"
#include "ns3/packet-sink.h"
#include "ns3/packet.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowTracker");

NS_OBJECT_ENSURE_REGISTERED(FlowTracker);

namespace
{
uint64_t
SourceKey(Ipv4Address address, uint16_t port)
{
    return (static_cast<uint64_t>(address.Get()) << 16) | port;
}

std::string
AddressString(Ipv4Address address)
{
    std::ostringstream os;
    os << address;
    return os.str();
}
} // namespace

TypeId
FlowTracker::GetTypeId()
{
    static TypeId tid =
        TypeId("ns3::FlowTracker")
            .SetParent<Object>()
            .SetGroupName("Wormhole")
            .AddConstructor<FlowTracker>()
            .AddAttribute("SampleDepth",
                          "How many delivered-bytes samples each flow keeps.",
                          UintegerValue(512),
                          MakeUintegerAccessor(&FlowTracker::SetSampleDepth,
                                               &FlowTracker::GetSampleDepth),
                          MakeUintegerChecker<uint32_t>(2))
            .AddTraceSource("FlowStart",
                            "A flow sent its first bytes.",
                            MakeTraceSourceAccessor(&FlowTracker::m_flowStartTrace),
                            "ns3::FlowTracker::FlowTracedCallback")
            .AddTraceSource("FlowFinish",
                            "A flow's sink received its last byte.",
                            MakeTraceSourceAccessor(&FlowTracker::m_flowFinishTrace),
                            "ns3::FlowTracker::FlowTracedCallback");
    return tid;
}

FlowTracker::FlowTracker()
    : m_registry(CreateObject<FlowRegistry>())
{
    NS_LOG_FUNCTION(this);
    m_flowSources = FlowSource::CreateRegistered();
    for (const Ptr<FlowSource>& source : m_flowSources)
    {
        source->SetTracker(this);
    }
    m_routes = CreateObject<RouteWalker>();
    m_workloadOracles = WorkloadOracle::CreateRegistered();
    m_sampler = CreateObject<RateSampler>();
    m_sampler->SetRegistry(m_registry);
    m_crediter = CreateObject<ProgressCrediter>();
    m_crediter->SetRegistry(m_registry);
    m_sampler->SetWindowBeginsCallback(MakeCallback(&ProgressCrediter::MarkMonitors, m_crediter));
    m_gate = CreateObject<StartGate>();
    m_gate->SetRegistry(m_registry);
    m_forecast = CreateObject<WorkloadForecast>();
    m_forecast->SetTracker(this);
    m_created = CreateObject<CreatedFlows>();
    m_created->SetTracker(this);
    m_facts = CreateObject<LookupFacts>();
    m_facts->SetTracker(this);
}

void
FlowTracker::SetSampleDepth(uint32_t depth)
{
    m_sampler->SetSampleDepth(depth);
}

uint32_t
FlowTracker::GetSampleDepth() const
{
    return m_sampler->GetSampleDepth();
}

uint32_t
FlowTracker::Discover()
{
    uint32_t before = m_registry->GetN();
    for (auto n = NodeList::Begin(); n != NodeList::End(); ++n)
    {
        DiscoverNode(*n);
    }
    FinishDiscovery();
    return m_registry->GetN() - before;
}

void
FlowTracker::DiscoverNode(Ptr<Node> node)
{
    DiscoverApplications(node);
    for (const Ptr<FlowSource>& source : m_flowSources)
    {
        source->DiscoverFlows(node);
    }
}

void
FlowTracker::FinishDiscovery()
{
    std::erase_if(m_sinkless, [this](uint32_t flow) {
        auto app = DynamicCast<ApplicationFlow>(m_registry->Get(flow).flow);
        if (!app->GetSink())
        {
            app->SetSink(FindSink(app->GetDstAddress(), app->GetDstPort()));
        }
        return app->GetSink() || m_registry->Get(flow).state == FlowRegistry::FINISHED;
    });
    if (WormholeSimulatorImpl::GetAccelerating())
    {
        HookNewNodes();
    }
    HookNewWorkloads();
}

void
FlowTracker::DiscoverEnteredNodes()
{
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    if (!impl)
    {
        Discover(); // a baseline run: no simulator says which nodes were entered
        return;
    }
    std::vector<uint32_t> nodes = impl->TakeEnteredNodes();
    if (nodes.empty())
    {
        return;
    }
    for (uint32_t id : nodes)
    {
        if (id < NodeList::GetNNodes())
        {
            DiscoverNode(NodeList::GetNode(id));
        }
    }
    FinishDiscovery();
}

uint32_t
FlowTracker::AddFlow(Ptr<TrackedFlow> flow)
{
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    uint32_t index =
        m_registry->Add(flow, impl ? impl->NewTag() : WormholeSimulatorImpl::UNATTRIBUTED);
    if (flow->GetSrcPort() != 0 && !flow->GetSrcAddress().IsAny())
    {
        RegisterEndpoints(index);
    }
    if (DynamicCast<ApplicationFlow>(flow))
    {
        m_sinkless.push_back(index);
    }
    m_startsToAttribute.push_back(index);
    return index;
}

void
FlowTracker::DiscoverApplications(Ptr<Node> node)
{
    uint32_t& seen = m_appsSeen[node->GetId()];
    for (; seen < node->GetNApplications(); ++seen)
    {
        Ptr<Application> app = node->GetApplication(seen);
        if (auto sink = DynamicCast<PacketSink>(app))
        {
            sink->TraceConnectWithoutContext("RxWithAddresses",
                                             MakeCallback(&FlowTracker::OnSinkRx, this));
            AddressValue local;
            sink->GetAttribute("Local", local);
            if (InetSocketAddress::IsMatchingType(local.Get()))
            {
                m_sinksByPort[InetSocketAddress::ConvertFrom(local.Get()).GetPort()].push_back(
                    sink);
            }
            continue;
        }
        if (Ptr<ApplicationFlow> flow = ApplicationFlow::Adapt(app))
        {
            uint32_t index = AddFlow(flow);
            app->TraceConnectWithoutContext(
                "Tx",
                Callback<void, Ptr<const Packet>>(
                    [this, index](Ptr<const Packet> p) { OnAppTx(index, p); }));
        }
    }
}

void
FlowTracker::HookNewWorkloads()
{
    for (const Ptr<WorkloadOracle>& oracle : m_workloadOracles)
    {
        oracle->FollowNewWorkloads(MakeCallback(&FlowTracker::OnWorkloadRelease, this));
    }
}

void
FlowTracker::OnWorkloadRelease()
{
    // each release's flows are numbered before the next release's, as it made them
    DiscoverEnteredNodes();
}

void
FlowTracker::HookNewNodes()
{
    for (; m_nodesHooked < NodeList::GetNNodes(); ++m_nodesHooked)
    {
        Ptr<Node> node = NodeList::GetNode(m_nodesHooked);
        if (auto ipv4 = node->GetObject<Ipv4L3Protocol>())
        {
            ipv4->TraceConnectWithoutContext("SendOutgoing",
                                             MakeCallback(&FlowTracker::OnSendOutgoing, this));
        }
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            if (auto p2p = DynamicCast<PointToPointNetDevice>(node->GetDevice(d)))
            {
                p2p->TraceConnectWithoutContext("PhyTxBegin",
                                                MakeCallback(&FlowTracker::OnPhyTxBegin, this));
            }
        }
    }
}

void
FlowTracker::RegisterEndpoints(uint32_t flow)
{
    const FlowRegistry::RegisteredFlow& f = m_registry->Get(flow);
    const TrackedFlow& t = *f.flow;
    uint64_t src = SourceKey(t.GetSrcAddress(), t.GetSrcPort());
    uint64_t dst = SourceKey(t.GetDstAddress(), t.GetDstPort());
    m_tagByEndpoints[{src, dst}] = f.tag;
    uint16_t reverseSource;
    uint16_t reverseDestination;
    if (t.GetReversePorts(reverseSource, reverseDestination))
    {
        m_tagByEndpoints[{SourceKey(t.GetDstAddress(), reverseSource),
                          SourceKey(t.GetSrcAddress(), reverseDestination)}] = f.tag;
    }
    else
    {
        m_tagByEndpoints[{dst, src}] = f.tag;
    }
}

void
FlowTracker::OnSendOutgoing(const Ipv4Header& header, Ptr<const Packet> packet, uint32_t interface)
{
    uint8_t protocol = header.GetProtocol();
    if ((protocol != RouteWalker::TCP_PROTOCOL && protocol != RouteWalker::UDP_PROTOCOL) ||
        packet->GetSize() < 4)
    {
        return;
    }
    uint8_t ports[4];
    packet->CopyData(ports, 4);
    auto srcPort = static_cast<uint16_t>((ports[0] << 8) | ports[1]);
    auto dstPort = static_cast<uint16_t>((ports[2] << 8) | ports[3]);
    auto it = m_tagByEndpoints.find(
        {SourceKey(header.GetSource(), srcPort), SourceKey(header.GetDestination(), dstPort)});
    FlowTag existing;
    if (it != m_tagByEndpoints.end() && !packet->PeekPacketTag(existing))
    {
        packet->AddPacketTag(FlowTag(it->second));
    }
}

void
FlowTracker::OnPhyTxBegin(Ptr<const Packet> packet)
{
    FlowTag tag;
    if (packet->PeekPacketTag(tag))
    {
        if (WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating())
        {
            impl->SetCurrentTag(tag.GetFlowTag());
        }
    }
}

uint32_t
FlowTracker::AttributeStartEvents()
{
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    if (!impl)
    {
        return 0;
    }
    uint32_t count = 0;
    std::erase_if(m_startsToAttribute, [this, impl, &count](uint32_t flow) {
        const FlowRegistry::RegisteredFlow& f = m_registry->Get(flow);
        if (f.state != FlowRegistry::PENDING)
        {
            return true;
        }
        if (!impl->Retag(f.flow->GetStartEvent(), f.tag))
        {
            return false; // its node is not initialized yet
        }
        ++count;
        return true;
    });
    m_startsAttributedUnreported += count;
    return count;
}

void
FlowTracker::WatchUnattributedEvents(Callback<void, bool> onChange)
{
    m_onUnattributedChange = onChange;
    if (WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating())
    {
        impl->SetAfterNodesEnteredHook(MakeCallback(&FlowTracker::AfterNodesEntered, this));
        impl->SetAfterUnattributedHook(MakeCallback(&FlowTracker::AfterUnattributedEvent, this));
    }
}

void
FlowTracker::FollowRunTimeFlows()
{
    Ptr<SimulatorImpl> simulator = Simulator::GetImplementation();
    if (auto baseline = dynamic_cast<WormholeBaselineSimulatorImpl*>(PeekPointer(simulator)))
    {
        baseline->SetNodeEnteredHook(MakeCallback(&FlowTracker::OnBaselineNodeEntered, this));
    }
    else if (auto wormhole = dynamic_cast<WormholeSimulatorImpl*>(PeekPointer(simulator)))
    {
        // the accelerator's simulator with nothing to accelerate (no fast-forwarding, no memo)
        wormhole->SetAfterNodesEnteredHook(MakeCallback(&FlowTracker::DiscoverEnteredNodes, this));
    }
}

void
FlowTracker::OnBaselineNodeEntered(uint32_t node)
{
    if (node < NodeList::GetNNodes())
    {
        DiscoverNode(NodeList::GetNode(node));
        FinishDiscovery();
    }
}

void
FlowTracker::SetUnattributedEventsWatched(bool watched)
{
    m_unattributedWatched = watched;
}

void
FlowTracker::AfterNodesEntered()
{
    DiscoverEnteredNodes();
    AttributeStartEvents();
    uint32_t tag = WormholeSimulatorImpl::GetAccelerating()->GetCurrentTag();
    if (tag == WormholeSimulatorImpl::UNATTRIBUTED || tag == WormholeSimulatorImpl::WORKLOAD)
    {
        return; // AfterUnattributedEvent reports, right after this
    }
    // a flow's own event (a user's callback on its packets) created flows, or a system
    // event did (a memo replay's completion runs the sink's Rx trace, and the user's
    // callback on it): the controller must see them before they start
    if (m_registry->GetN() > m_flowsReported || m_startsAttributedUnreported > 0)
    {
        m_flowsReported = m_registry->GetN();
        m_startsAttributedUnreported = 0;
        m_onUnattributedChange(false);
    }
}

void
FlowTracker::AfterUnattributedEvent()
{
    AttributeStartEvents();
    WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating();
    bool unattributed = impl->GetCurrentTag() == WormholeSimulatorImpl::UNATTRIBUTED;
    // a workload's release may have discovered its flows already (OnWorkloadRelease)
    // starts attributed here, or in AfterNodesEntered right before, are news: a start the
    // controller could not take over at the flow's creation (its application was not
    // initialized yet) can be taken over now
    if (m_registry->GetN() > m_flowsReported || m_startsAttributedUnreported > 0 ||
        (unattributed && m_unattributedWatched) ||
        !m_startsToAttribute.empty())
    {
        m_flowsReported = m_registry->GetN();
        m_startsAttributedUnreported = 0;
        m_onUnattributedChange(unattributed);
    }
}

std::vector<uint64_t>
FlowTracker::GetPlannedRoute(uint32_t flow) const
{
    auto [path, reversePath] = m_routes->PlannedRoute(m_registry->Get(flow));
    std::vector<uint64_t> route;
    route.reserve(1 + path.size() + reversePath.size());
    route.push_back(path.size());
    route.insert(route.end(), path.begin(), path.end());
    route.insert(route.end(), reversePath.begin(), reversePath.end());
    return route;
}

std::vector<uint64_t>
FlowTracker::GetRouteBetween(Ptr<Node> src,
                             Ptr<Node> dst,
                             uint16_t srcPort,
                             uint16_t dstPort,
                             bool tcp) const
{
    return m_routes->RouteBetween(src, dst, srcPort, dstPort, tcp);
}

std::vector<UpcomingFlow>
FlowTracker::GetUpcomingFlows(Time horizon,
                              const std::vector<uint32_t>& ending,
                              const std::vector<int64_t>& endsNs,
                              const std::vector<UpcomingFlow>& toCome,
                              const std::vector<int64_t>& toComeEndsNs,
                              bool earliest) const
{
    NS_ABORT_MSG_IF(ending.size() != endsNs.size() || toCome.size() != toComeEndsNs.size(),
                    "FlowTracker::GetUpcomingFlows: " << ending.size() << " flows and "
                                                      << toCome.size() << " to come, "
                                                      << endsNs.size() << " and "
                                                      << toComeEndsNs.size() << " ends");
    std::vector<KnownFlowEnd> ends;
    ends.reserve(ending.size() + toCome.size());
    for (size_t i = 0; i < ending.size(); ++i)
    {
        const TrackedFlow& f = *m_registry->Get(ending[i]).flow;
        ends.push_back(KnownFlowEnd{f.GetSrcNode(), f.GetDstNode(), f.GetSrcPort(), endsNs[i]});
    }
    for (size_t i = 0; i < toCome.size(); ++i)
    {
        ends.push_back(KnownFlowEnd{toCome[i].src, toCome[i].dst, toCome[i].srcPort, toComeEndsNs[i]});
    }
    std::vector<UpcomingFlow> all;
    for (const Ptr<WorkloadOracle>& oracle : m_workloadOracles)
    {
        std::vector<UpcomingFlow> some = oracle->GetUpcomingFlows(horizon, ends, earliest);
        all.insert(all.end(), some.begin(), some.end());
    }
    return all;
}

Time
FlowTracker::GetEarliestReleaseOn(const std::vector<uint64_t>& links, Time horizon) const
{
    const std::set<uint64_t> wanted(links.begin(), links.end());
    int64_t earliest = std::numeric_limits<int64_t>::max();
    for (const UpcomingFlow& flow : GetUpcomingFlows(horizon, {}, {}, {}, {}, true))
    {
        if (flow.start >= earliest)
        {
            continue;
        }
        for (uint64_t link : GetRouteBetween(flow.src, flow.dst, flow.srcPort, flow.dstPort, true))
        {
            if (wanted.count(link))
            {
                earliest = flow.start;
                break;
            }
        }
    }
    return earliest == std::numeric_limits<int64_t>::max() ? Time::Max() : NanoSeconds(earliest);
}

std::vector<int64_t>
FlowTracker::GetUpcomingFlowFields(const std::vector<UpcomingFlow>& flows)
{
    std::vector<int64_t> fields;
    fields.reserve(6 * flows.size());
    for (const UpcomingFlow& flow : flows)
    {
        fields.push_back(flow.start);
        fields.push_back(flow.src->GetId());
        fields.push_back(flow.dst->GetId());
        fields.push_back(flow.srcPort);
        fields.push_back(flow.dstPort);
        fields.push_back(flow.task);
    }
    return fields;
}

std::vector<uint64_t>
FlowTracker::GetUpcomingFlowRoutes(const std::vector<UpcomingFlow>& flows,
                                   const std::vector<uint32_t>& indices) const
{
    return m_forecast->GetRoutes(flows, indices);
}

std::vector<int64_t>
FlowTracker::GetUnforeseeable(int64_t horizonNs,
                              int64_t beyondNs,
                              const int64_t* query,
                              size_t size,
                              uint32_t nLinks,
                              uint32_t nOwn) const
{
    if (size < nLinks + nOwn || (size - nLinks - nOwn) % 2 != 0)
    {
        throw std::invalid_argument("FlowTracker::GetUnforeseeable: " + std::to_string(size) +
                                    " numbers for " + std::to_string(nLinks) + " links and " +
                                    std::to_string(nOwn) + " own flows");
    }
    const size_t nEnding = (size - nLinks - nOwn) / 2;
    std::vector<uint64_t> links(query, query + nLinks);
    std::vector<uint32_t> ending;
    std::vector<int64_t> endsNs;
    ending.reserve(nEnding);
    endsNs.reserve(nEnding);
    for (const int64_t* pair = query + nLinks; pair < query + nLinks + 2 * nEnding; pair += 2)
    {
        ending.push_back(static_cast<uint32_t>(pair[0]));
        endsNs.push_back(pair[1]);
    }
    std::vector<uint32_t> own(query + nLinks + 2 * nEnding, query + size);
    return m_forecast->GetUnforeseeable(horizonNs, links, ending, endsNs, own, beyondNs);
}

std::vector<int64_t>
FlowTracker::GetUpcomingDue(int64_t horizonNs,
                            const int64_t* ends,
                            size_t size,
                            uint32_t knownRoutes) const
{
    if (size % 2 != 0)
    {
        throw std::invalid_argument("FlowTracker::GetUpcomingDue: " + std::to_string(size) +
                                    " numbers are no pairs of a flow and its end");
    }
    std::vector<uint32_t> ending;
    std::vector<int64_t> endsNs;
    ending.reserve(size / 2);
    endsNs.reserve(size / 2);
    for (const int64_t* pair = ends; pair < ends + size; pair += 2)
    {
        ending.push_back(static_cast<uint32_t>(pair[0]));
        endsNs.push_back(pair[1]);
    }
    return m_forecast->GetDue(horizonNs, ending, endsNs, knownRoutes);
}

std::vector<int64_t>
FlowTracker::TakeCreatedFlows(uint32_t from, bool gate)
{
    return m_created->Take(from, gate);
}

FlowFacts
FlowTracker::GetLookupFacts(const int64_t* flows, size_t size, bool routes, bool identities) const
{
    return m_facts->Read(flows, size, routes, identities);
}

void
FlowTracker::ReadQueuedPackets(int64_t* links, size_t size) const
{
    for (int64_t* link = links; link < links + size; ++link)
    {
        *link = GetQueuedPackets(static_cast<uint64_t>(*link));
    }
}

void
FlowTracker::DecideStarts(const int64_t* decisions, size_t size)
{
    if (size % 2 != 0)
    {
        throw std::invalid_argument("FlowTracker::DecideStarts: " + std::to_string(size) +
                                    " numbers are no pairs of a flow and its decision");
    }
    for (const int64_t* pair = decisions; pair < decisions + size; pair += 2)
    {
        DecideStart(static_cast<uint32_t>(pair[0]), pair[1] != 0);
    }
}

std::vector<int64_t>
FlowTracker::GetStartEventUids(const int64_t* flows, size_t size) const
{
    std::vector<int64_t> uids;
    uids.reserve(size);
    for (const int64_t* flow = flows; flow < flows + size; ++flow)
    {
        uids.push_back(m_gate->GetStartEventUid(static_cast<uint32_t>(*flow)));
    }
    return uids;
}

Ptr<PacketSink>
FlowTracker::FindSink(Ipv4Address dst, uint16_t port) const
{
    auto candidates = m_sinksByPort.find(port);
    if (candidates == m_sinksByPort.end())
    {
        return nullptr;
    }
    for (const auto& sink : candidates->second)
    {
        AddressValue local;
        sink->GetAttribute("Local", local);
        InetSocketAddress address = InetSocketAddress::ConvertFrom(local.Get());
        Ptr<Ipv4> ipv4 = sink->GetNode()->GetObject<Ipv4>();
        if (address.GetIpv4() == dst ||
            (address.GetIpv4().IsAny() && ipv4 && ipv4->GetInterfaceForAddress(dst) >= 0))
        {
            return sink;
        }
    }
    return nullptr;
}

void
FlowTracker::OnAppTx(uint32_t index, Ptr<const Packet> packet)
{
    const FlowRegistry::RegisteredFlow& f = m_registry->Get(index);
    if (WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating())
    {
        impl->AdoptTag(f.tag);
    }
    if (f.state == FlowRegistry::PENDING)
    {
        OnFlowStarted(index);
    }
}

void
FlowTracker::NotifyFlowStarted(uint32_t index)
{
    const FlowRegistry::RegisteredFlow& f = m_registry->Get(index);
    if (WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating())
    {
        impl->AdoptTag(f.tag);
    }
    if (f.state == FlowRegistry::PENDING)
    {
        OnFlowStarted(index);
    }
}

void
FlowTracker::NotifyFlowFinished(uint32_t index)
{
    if (m_registry->Get(index).state == FlowRegistry::ACTIVE)
    {
        OnFlowFinished(index);
    }
}

void
FlowTracker::OnFlowStarted(uint32_t index)
{
    const FlowRegistry::RegisteredFlow& f = m_registry->Get(index);
    f.flow->NotifyStarted();
    if (WormholeSimulatorImpl::GetAccelerating())
    {
        f.flow->UseSkipAwareRtt();
    }
    if (auto app = DynamicCast<ApplicationFlow>(f.flow))
    {
        m_flowBySource[SourceKey(app->GetSrcAddress(), app->GetSrcPort())] = {index, app};
    }
    RegisterEndpoints(index);
    auto [path, reversePath] = m_routes->Route(*f.flow, f.flow->GetSrcAddress());
    m_registry->Activate(index, std::move(path), std::move(reversePath));
    NotifyFlowEvent(index, ACTIVE);
}

void
FlowTracker::OnFlowFinished(uint32_t index)
{
    m_registry->Finish(index);
    NotifyFlowEvent(index, FINISHED);
}

void
FlowTracker::OnSinkRx(Ptr<const Packet> packet, const Address& from, const Address& local)
{
    if (!InetSocketAddress::IsMatchingType(from))
    {
        return;
    }
    InetSocketAddress source = InetSocketAddress::ConvertFrom(from);
    auto it = m_flowBySource.find(SourceKey(source.GetIpv4(), source.GetPort()));
    if (it == m_flowBySource.end())
    {
        return;
    }
    auto& [index, flow] = it->second;
    flow->NotifyReceived(packet->GetSize());
    if (m_registry->Get(index).state == FlowRegistry::ACTIVE && flow->IsComplete())
    {
        OnFlowFinished(index);
    }
}

void
FlowTracker::NotifyFlowEvent(uint32_t flow, int state)
{
    (state == ACTIVE ? m_flowStartTrace : m_flowFinishTrace)(flow);
    if (m_onFlowEvent.IsNull())
    {
        return;
    }
    if (WormholeSimulatorImpl* impl = WormholeSimulatorImpl::GetAccelerating())
    {
        // after the event that caused it, so the controller never runs mid-packet
        Callback<void, uint32_t, int> cb = m_onFlowEvent;
        impl->ScheduleSystem(TimeStep(0), MakeEvent([cb, flow, state]() { cb(flow, state); }));
    }
    else
    {
        m_onFlowEvent(flow, state);
    }
}

void
FlowTracker::SetFlowEventCallback(Callback<void, uint32_t, int> cb)
{
    m_onFlowEvent = cb;
}

uint32_t
FlowTracker::GetNFlows() const
{
    return m_registry->GetN();
}

Ptr<TrackedFlow>
FlowTracker::GetFlow(uint32_t flow) const
{
    return m_registry->Get(flow).flow;
}

std::string
FlowTracker::GetKind(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetKind();
}

uint32_t
FlowTracker::GetSrcNode(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetSrcNode()->GetId();
}

uint32_t
FlowTracker::GetDstNode(uint32_t flow) const
{
    Ptr<Node> node = m_registry->Get(flow).flow->GetDstNode();
    return node ? node->GetId() : std::numeric_limits<uint32_t>::max();
}

std::string
FlowTracker::GetSrcAddress(uint32_t flow) const
{
    return AddressString(RouteWalker::SourceAddress(*m_registry->Get(flow).flow));
}

std::string
FlowTracker::GetDstAddress(uint32_t flow) const
{
    return AddressString(m_registry->Get(flow).flow->GetDstAddress());
}

uint16_t
FlowTracker::GetSrcPort(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetSrcPort();
}

uint16_t
FlowTracker::GetDstPort(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetDstPort();
}

uint64_t
FlowTracker::GetSize(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetSize();
}

Time
FlowTracker::GetStartTime(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetStartTime();
}

double
FlowTracker::GetAppRate(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetAppRate();
}

std::string
FlowTracker::GetCongestionOps(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetCongestionOps();
}

std::string
FlowTracker::GetRttEstimator(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetRttEstimator();
}

uint32_t
FlowTracker::GetTag(uint32_t flow) const
{
    return m_registry->Get(flow).tag;
}

FlowRecord
FlowTracker::GetFlowRecord(uint32_t flow) const
{
    FlowRecord r;
    r.id = flow;
    r.kind = GetKind(flow);
    r.srcNode = GetSrcNode(flow);
    r.dstNode = GetDstNode(flow);
    r.src = GetSrcAddress(flow);
    r.dst = GetDstAddress(flow);
    r.sport = GetSrcPort(flow);
    r.dport = GetDstPort(flow);
    r.size = GetSize(flow);
    r.start = GetStartTime(flow).GetSeconds();
    r.path = GetPath(flow);
    r.reversePath = GetReversePath(flow);
    r.congestionOps = GetCongestionOps(flow);
    r.rttEstimator = GetRttEstimator(flow);
    r.constantRate = IsConstantRate(flow);
    r.paced = IsPaced(flow);
    r.appRateBps = GetAppRate(flow);
    r.tag = GetTag(flow);
    return r;
}

FlowOutcome
FlowTracker::GetFlowOutcome(uint32_t flow) const
{
    FlowOutcome o;
    o.id = flow;
    o.kind = GetKind(flow);
    o.src = GetSrcAddress(flow);
    o.dst = GetDstAddress(flow);
    o.sport = GetSrcPort(flow);
    o.dport = GetDstPort(flow);
    o.size = GetSize(flow);
    o.start = GetStartTime(flow).GetSeconds();
    o.finish = GetFinishTime(flow).GetSeconds();
    o.rxBytes = GetSinkTotalRx(flow);
    o.credited = GetCredited(flow);
    o.standalone = GetStandaloneTime(flow).GetSeconds();
    return o;
}

Time
FlowTracker::GetStandaloneTime(uint32_t flow) const
{
    const FlowRegistry::RegisteredFlow& f = m_registry->Get(flow);
    return wormhole::StandaloneTime(f.path, f.reversePath, f.flow->GetSize());
}

std::vector<uint64_t>
FlowTracker::GetPath(uint32_t flow) const
{
    return m_registry->Get(flow).path;
}

std::vector<uint64_t>
FlowTracker::GetReversePath(uint32_t flow) const
{
    return m_registry->Get(flow).reversePath;
}

bool
FlowTracker::IsConstantRate(uint32_t flow) const
{
    return m_registry->Get(flow).flow->IsConstantRate();
}

bool
FlowTracker::IsPaced(uint32_t flow) const
{
    return m_registry->Get(flow).flow->IsPaced();
}

double
FlowTracker::GetLinkRate(uint64_t link) const
{
    return wormhole::LinkRate(link);
}

uint32_t
FlowTracker::GetQueuedPackets(uint64_t link) const
{
    return wormhole::LinkQueuedPackets(link);
}

Time
FlowTracker::GetLinkDelay(uint64_t link) const
{
    return wormhole::LinkDelay(link);
}

int
FlowTracker::GetState(uint32_t flow) const
{
    return m_registry->Get(flow).state;
}

bool
FlowTracker::IsConnecting(uint32_t flow) const
{
    const FlowRegistry::RegisteredFlow& f = m_registry->Get(flow);
    return f.state == FlowRegistry::PENDING && !f.flow->IsHeld() && f.flow->GetStartTime() <= Simulator::Now() &&
           !f.flow->GetStartEvent().IsPending();
}

uint64_t
FlowTracker::GetDelivered(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetDelivered();
}

uint64_t
FlowTracker::GetSinkTotalRx(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetReceiverTotal();
}

uint64_t
FlowTracker::GetCredited(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetCredited();
}

Time
FlowTracker::GetFinishTime(uint32_t flow) const
{
    return m_registry->Get(flow).finish;
}

int
FlowTracker::GetSkipBlocker(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetSkipBlocker();
}

bool
FlowTracker::IsQuiet(uint32_t flow) const
{
    return m_registry->Get(flow).flow->IsQuiet();
}

uint64_t
FlowTracker::GetSendable(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetSendable();
}

void
FlowTracker::ConfigureSampling(Time period, uint32_t samplesPerWindow, Callback<void> onWindow)
{
    m_sampler->Configure(period, samplesPerWindow, onWindow);
}

void
FlowTracker::SetSamplesReported(bool reported)
{
    m_sampler->SetWindowsReported(reported);
}

uint64_t
FlowTracker::GetSampleCount() const
{
    return m_sampler->GetSampleCount();
}

void
FlowTracker::SetSampled(uint32_t flow, bool sampled)
{
    m_sampler->SetSampled(flow, sampled);
}

void
FlowTracker::ClearSamples(const std::vector<uint32_t>& flows)
{
    m_sampler->ClearSamples(flows);
}

std::vector<uint64_t>
FlowTracker::GetSamples(uint32_t flow) const
{
    return m_sampler->GetSamples(flow);
}

std::vector<uint64_t>
FlowTracker::GetSentSamples(uint32_t flow) const
{
    return m_sampler->GetSentSamples(flow);
}

std::vector<double>
FlowTracker::GetSendingRateSamples(uint32_t flow) const
{
    return m_sampler->GetSendingRateSamples(flow);
}

std::vector<uint64_t>
FlowTracker::GetNotificationSamples(uint32_t flow) const
{
    return m_sampler->GetNotificationSamples(flow);
}

std::vector<uint64_t>
FlowTracker::GetWindowSamples(uint32_t flow) const
{
    return m_sampler->GetWindowSamples(flow);
}

std::vector<uint32_t>
FlowTracker::TakeProgressedFlows()
{
    return m_sampler->TakeProgressedFlows();
}

uint64_t
FlowTracker::Credit(uint32_t flow, uint64_t bytes)
{
    return m_crediter->Credit(flow, bytes);
}

uint64_t
FlowTracker::Uncredit(uint32_t flow, uint64_t bytes)
{
    return m_crediter->Uncredit(flow, bytes);
}

void
FlowTracker::ShiftTimes(uint32_t flow, Time delta)
{
    m_crediter->ShiftTimes(flow, delta);
}

void
FlowTracker::AddFlowMonitor(Ptr<FlowMonitor> monitor, Ptr<Ipv4FlowClassifier> classifier)
{
    m_crediter->AddFlowMonitor(monitor, classifier);
}

void
FlowTracker::ShiftMonitoredPackets(uint32_t flow, Time delta)
{
    m_crediter->ShiftMonitoredPackets(flow, delta);
}

std::string
FlowTracker::GetFlowFingerprint(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetFingerprint();
}

std::string
FlowTracker::GetPlannedCongestionOps(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetPlannedCongestionOps();
}

std::string
FlowTracker::GetLinkFingerprint(uint64_t link) const
{
    return wormhole::LinkFingerprint(link);
}

bool
FlowTracker::IsLossless(uint64_t link) const
{
    return wormhole::IsLosslessLink(link);
}

std::vector<RandomSource>
FlowTracker::GetLinkRandomSources(uint64_t link) const
{
    return wormhole::LinkRandomSources(link);
}

TcpFlowState
FlowTracker::GetTcpState(uint32_t flow) const
{
    auto bulk = DynamicCast<BulkSendFlow>(m_registry->Get(flow).flow);
    return bulk ? bulk->GetTcpState() : TcpFlowState{};
}

bool
FlowTracker::SetTcpState(uint32_t flow, const TcpFlowState& state)
{
    auto bulk = DynamicCast<BulkSendFlow>(m_registry->Get(flow).flow);
    return bulk && bulk->SetCongestionState(wormhole::TcpStateVector(state));
}

std::vector<double>
FlowTracker::GetCongestionState(uint32_t flow) const
{
    return m_registry->Get(flow).flow->GetCongestionState();
}

void
FlowTracker::SetSnapshotting(uint32_t flow, bool on)
{
    m_sampler->SetSnapshotting(flow, on);
}

std::vector<FlowSnapshot>
FlowTracker::GetSnapshots(uint32_t flow) const
{
    return m_sampler->GetSnapshots(flow);
}

Time
FlowTracker::GateStart(uint32_t flow)
{
    return m_gate->GateStart(flow);
}

void
FlowTracker::SetGatedStartCallback(Callback<void, uint32_t> decide)
{
    m_gate->SetDecideCallback(decide);
}

void
FlowTracker::DecideStart(uint32_t flow, bool held)
{
    m_gate->DecideStart(flow, held);
}

uint32_t
FlowTracker::GetStartEventUid(uint32_t flow) const
{
    return m_gate->GetStartEventUid(flow);
}

void
FlowTracker::ResumeHeld(uint32_t flow, const TcpFlowState& state)
{
    m_gate->ResumeHeld(flow, wormhole::TcpStateVector(state));
}

void
FlowTracker::ResumeHeld(uint32_t flow, const std::vector<double>& state)
{
    m_gate->ResumeHeld(flow, state);
}

void
FlowTracker::CompleteVirtually(uint32_t flow)
{
    m_gate->CompleteVirtually(flow);
}

bool
FlowTracker::OweEndOfTransfer(uint32_t flow)
{
    auto [path, reversePath] = m_routes->PlannedRoute(m_registry->Get(flow));
    if (reversePath.empty() ||
        !std::all_of(reversePath.begin(), reversePath.end(), wormhole::LinkIdle))
    {
        return false;
    }
    return m_gate->OweEndOfTransfer(flow);
}

void
FlowTracker::SendOwedEndOfTransfer(uint32_t flow)
{
    m_gate->SendOwedEndOfTransfer(flow);
}

} // namespace ns3
