/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-tracker.h"

#include "application-flow.h"
#include "attribute-fingerprint.h"
#include "bulk-send-flow.h"
#include "flow-source.h"
#include "flow-tag.h"
#include "private-access.h"
#include "random-sources.h"
#include "route-oracle.h"
#include "workload-oracle.h"
#include "wormhole-baseline-simulator-impl.h"
#include "wormhole-simulator-impl.h"

#include "ns3/application.h"
#include "ns3/boolean.h"
#include "ns3/channel.h"
#include "ns3/data-rate.h"
#include "ns3/error-model.h"
#include "ns3/flow-monitor.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-flow-classifier.h"
#include "ns3/ipv4-global-routing.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-list-routing.h"
#include "ns3/ipv4-route.h"
#include "ns3/ipv4-static-routing.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/net-device.h"
#include "ns3/node-list.h"
#include "ns3/node.h"
#include "ns3/packet-sink.h"
#include "ns3/packet.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/pointer.h"
#include "ns3/queue-disc.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/type-id.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <unordered_set>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("FlowTracker");

NS_OBJECT_ENSURE_REGISTERED(FlowTracker);

namespace
{
constexpr uint8_t TCP_PROTOCOL = 6;
constexpr uint8_t UDP_PROTOCOL = 17;

uint64_t
SourceKey(Ipv4Address address, uint16_t port)
{
    return (static_cast<uint64_t>(address.Get()) << 16) | port;
}

/** The egress device a link id names (node << 16 | device index, as a path lists it). */
Ptr<NetDevice>
LinkDevice(uint64_t link)
{
    return NodeList::GetNode(link >> 16)->GetDevice(link & 0xffff);
}

std::string
AddressString(Ipv4Address address)
{
    std::ostringstream os;
    os << address;
    return os.str();
}

WormholeSimulatorImpl*
AcceleratingImpl()
{
    // looked up once per simulator: this runs for every packet a tracked application writes
    static SimulatorImpl* last = nullptr;
    static WormholeSimulatorImpl* cached = nullptr;
    SimulatorImpl* current = PeekPointer(Simulator::GetImplementation());
    if (current != last)
    {
        last = current;
        cached = dynamic_cast<WormholeSimulatorImpl*>(current);
    }
    return cached;
}

/** @return the samples, oldest first, as Python reads them. */
template <typename T>
std::vector<T>
AsVector(const std::deque<T>& samples)
{
    return std::vector<T>(samples.begin(), samples.end());
}

/** @return true if asking this routing protocol for a route has no side effect. */
bool
IsSideEffectFree(Ptr<Ipv4RoutingProtocol> routing)
{
    if (auto list = DynamicCast<Ipv4ListRouting>(routing))
    {
        for (uint32_t i = 0; i < list->GetNRoutingProtocols(); ++i)
        {
            int16_t priority;
            if (!IsSideEffectFree(list->GetRoutingProtocol(i, priority)))
            {
                return false;
            }
        }
        return true;
    }
    if (auto global = DynamicCast<Ipv4GlobalRouting>(routing))
    {
        // random ECMP draws from an RNG stream: asking would change the run
        BooleanValue random;
        global->GetAttribute("RandomEcmpRouting", random);
        return !random.Get();
    }
    return DynamicCast<Ipv4StaticRouting>(routing) != nullptr;
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
                          MakeUintegerAccessor(&FlowTracker::m_sampleDepth),
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
    : m_sampleDepth(512)
{
    m_flowSources = FlowSource::CreateRegistered();
    for (const Ptr<FlowSource>& source : m_flowSources)
    {
        source->SetTracker(this);
    }
    m_routeOracles = RouteOracle::CreateRegistered();
    m_workloadOracles = WorkloadOracle::CreateRegistered();
}

uint32_t
FlowTracker::Discover()
{
    uint32_t before = m_flows.size();
    for (auto n = NodeList::Begin(); n != NodeList::End(); ++n)
    {
        DiscoverNode(*n);
    }
    FinishDiscovery();
    return m_flows.size() - before;
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
        auto app = DynamicCast<ApplicationFlow>(m_flows[flow].flow);
        if (!app->GetSink())
        {
            app->SetSink(FindSink(app->GetDstAddress(), app->GetDstPort()));
        }
        return app->GetSink() || m_flows[flow].state == FINISHED;
    });
    if (AcceleratingImpl())
    {
        HookNewNodes();
    }
    HookNewWorkloads();
}

void
FlowTracker::DiscoverEnteredNodes()
{
    WormholeSimulatorImpl* impl = AcceleratingImpl();
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
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    Flow f;
    f.flow = flow;
    f.tag = impl ? impl->NewTag() : WormholeSimulatorImpl::UNATTRIBUTED;
    uint32_t index = m_flows.size();
    m_flows.push_back(f);
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
    const Flow& f = m_flows[flow];
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
    if ((protocol != TCP_PROTOCOL && protocol != UDP_PROTOCOL) || packet->GetSize() < 4)
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
        if (WormholeSimulatorImpl* impl = AcceleratingImpl())
        {
            impl->SetCurrentTag(tag.GetFlowTag());
        }
    }
}

uint32_t
FlowTracker::AttributeStartEvents()
{
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    if (!impl)
    {
        return 0;
    }
    uint32_t count = 0;
    std::erase_if(m_startsToAttribute, [this, impl, &count](uint32_t flow) {
        Flow& f = m_flows[flow];
        if (f.state != PENDING)
        {
            return true;
        }
        if (!impl->Retag(f.flow->GetStartEvent(), f.tag))
        {
            return false; // its node is not initialized yet
        }
        f.startAttributed = true;
        ++count;
        return true;
    });
    m_startsAttributedUnreported += count;
    return count;
}

void
FlowTracker::WatchUnattributedEvents(Callback<void> onChange)
{
    m_onUnattributedChange = onChange;
    if (WormholeSimulatorImpl* impl = AcceleratingImpl())
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
    uint32_t tag = AcceleratingImpl()->GetCurrentTag();
    if (tag == WormholeSimulatorImpl::UNATTRIBUTED || tag == WormholeSimulatorImpl::WORKLOAD)
    {
        return; // AfterUnattributedEvent reports, right after this
    }
    // a flow's own event (a user's callback on its packets) created flows, or a system
    // event did (a memo replay's completion runs the sink's Rx trace, and the user's
    // callback on it): the controller must see them before they start
    if (m_flows.size() > m_flowsReported || m_startsAttributedUnreported > 0)
    {
        m_flowsReported = m_flows.size();
        m_startsAttributedUnreported = 0;
        m_onUnattributedChange();
    }
}

void
FlowTracker::AfterUnattributedEvent()
{
    AttributeStartEvents();
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    bool unattributed = impl->GetCurrentTag() == WormholeSimulatorImpl::UNATTRIBUTED;
    // a workload's release may have discovered its flows already (OnWorkloadRelease)
    // starts attributed here, or in AfterNodesEntered right before, are news: a start the
    // controller could not take over at the flow's creation (its application was not
    // initialized yet) can be taken over now
    if (m_flows.size() > m_flowsReported || m_startsAttributedUnreported > 0 ||
        (unattributed && m_unattributedWatched) ||
        !m_startsToAttribute.empty())
    {
        m_flowsReported = m_flows.size();
        m_startsAttributedUnreported = 0;
        m_onUnattributedChange();
    }
}

std::pair<std::vector<uint64_t>, std::vector<uint64_t>>
FlowTracker::PlannedRoute(const Flow& f) const
{
    if (f.state != PENDING)
    {
        return {f.path, f.reversePath};
    }
    const TrackedFlow& t = *f.flow;
    Ptr<Ipv4> ipv4 = t.GetSrcNode()->GetObject<Ipv4>();
    if (!ipv4 || ipv4->GetNInterfaces() < 2 || !t.GetDstNode())
    {
        return {};
    }
    return Route(t, SourceAddress(t));
}

Ipv4Address
FlowTracker::SourceAddress(const TrackedFlow& t)
{
    Ipv4Address bound = t.GetSrcAddress();
    if (!bound.IsAny() && bound != Ipv4Address())
    {
        return bound;
    }
    // not connected yet, or never (a memo replay holds it): its node's first address
    Ptr<Ipv4> ipv4 = t.GetSrcNode() ? t.GetSrcNode()->GetObject<Ipv4>() : nullptr;
    return ipv4 && ipv4->GetNInterfaces() > 1 ? ipv4->GetAddress(1, 0).GetLocal() : bound;
}

std::vector<uint64_t>
FlowTracker::GetPlannedRoute(uint32_t flow) const
{
    auto [path, reversePath] = PlannedRoute(m_flows.at(flow));
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
    Ptr<Ipv4> from = src->GetObject<Ipv4>();
    Ptr<Ipv4> to = dst->GetObject<Ipv4>();
    if (!from || !to || from->GetNInterfaces() < 2 || to->GetNInterfaces() < 2)
    {
        return {};
    }
    Ipv4Address a = from->GetAddress(1, 0).GetLocal();
    Ipv4Address b = to->GetAddress(1, 0).GetLocal();
    uint8_t protocol = tcp ? TCP_PROTOCOL : UDP_PROTOCOL;
    std::vector<uint64_t> path = WalkRoute(src, a, b, protocol, srcPort, dstPort);
    if (tcp && !path.empty())
    {
        std::vector<uint64_t> back = WalkRoute(dst, b, a, protocol, dstPort, srcPort);
        if (back.empty())
        {
            return {};
        }
        path.insert(path.end(), back.begin(), back.end());
    }
    return path;
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
        const TrackedFlow& f = *m_flows.at(ending[i]).flow;
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

std::pair<std::vector<uint64_t>, std::vector<uint64_t>>
FlowTracker::Route(const TrackedFlow& f, Ipv4Address src) const
{
    uint8_t protocol = f.GetProtocol();
    std::vector<uint64_t> path =
        WalkRoute(f.GetSrcNode(), src, f.GetDstAddress(), protocol, f.GetSrcPort(), f.GetDstPort());
    uint16_t reverseSource;
    uint16_t reverseDestination;
    if (path.empty() || !f.GetReversePorts(reverseSource, reverseDestination))
    {
        return {path, {}};
    }
    std::vector<uint64_t> back =
        f.GetDstNode() ? WalkRoute(f.GetDstNode(),
                                   f.GetDstAddress(),
                                   src,
                                   protocol,
                                   reverseSource,
                                   reverseDestination)
                       : std::vector<uint64_t>{};
    if (back.empty())
    {
        return {}; // half a route is no route
    }
    return {path, back};
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
    Flow& f = m_flows[index];
    if (WormholeSimulatorImpl* impl = AcceleratingImpl())
    {
        impl->AdoptTag(f.tag);
    }
    if (f.state == PENDING)
    {
        OnFlowStarted(index);
    }
}

void
FlowTracker::NotifyFlowStarted(uint32_t index)
{
    Flow& f = m_flows.at(index);
    if (WormholeSimulatorImpl* impl = AcceleratingImpl())
    {
        impl->AdoptTag(f.tag);
    }
    if (f.state == PENDING)
    {
        OnFlowStarted(index);
    }
}

void
FlowTracker::NotifyFlowFinished(uint32_t index)
{
    if (m_flows.at(index).state == ACTIVE)
    {
        OnFlowFinished(index);
    }
}

void
FlowTracker::OnFlowStarted(uint32_t index)
{
    Flow& f = m_flows[index];
    f.flow->NotifyStarted();
    if (AcceleratingImpl())
    {
        f.flow->UseSkipAwareRtt();
    }
    if (auto app = DynamicCast<ApplicationFlow>(f.flow))
    {
        m_flowBySource[SourceKey(app->GetSrcAddress(), app->GetSrcPort())] = {index, app};
    }
    RegisterEndpoints(index);
    f.state = ACTIVE;
    std::tie(f.path, f.reversePath) = Route(*f.flow, f.flow->GetSrcAddress());
    NotifyFlowEvent(index, ACTIVE);
}

void
FlowTracker::OnFlowFinished(uint32_t index)
{
    Flow& f = m_flows[index];
    f.state = FINISHED;
    f.finish = Simulator::Now();
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
    if (m_flows[index].state == ACTIVE && flow->IsComplete())
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
    if (WormholeSimulatorImpl* impl = AcceleratingImpl())
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

std::vector<uint64_t>
FlowTracker::WalkRoute(Ptr<Node> from,
                       Ipv4Address src,
                       Ipv4Address dst,
                       uint8_t protocol,
                       uint16_t srcPort,
                       uint16_t dstPort) const
{
    std::vector<uint64_t> path;
    std::unordered_set<uint32_t> visited;
    Ptr<Node> node = from;
    while (node && path.size() < 64)
    {
        Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
        if (!ipv4 || !visited.insert(node->GetId()).second)
        {
            return {};
        }
        if (ipv4->GetInterfaceForAddress(dst) >= 0)
        {
            return path;
        }
        Ptr<Ipv4RoutingProtocol> routing = ipv4->GetRoutingProtocol();
        if (!routing || !IsSideEffectFree(routing))
        {
            return {};
        }
        Ptr<Ipv4Route> route;
        auto oracle = std::find_if(m_routeOracles.begin(),
                                   m_routeOracles.end(),
                                   [&routing](const Ptr<RouteOracle>& o) { return o->Knows(routing); });
        if (oracle != m_routeOracles.end() && node != from)
        {
            if (srcPort == 0)
            {
                return {}; // the flow's route depends on a port it has not chosen yet
            }
            route = (*oracle)->RouteFlow(routing, src, dst, protocol, srcPort, dstPort);
        }
        else
        {
            Ipv4Header header;
            header.SetSource(src);
            header.SetDestination(dst);
            header.SetProtocol(protocol);
            Socket::SocketErrno error;
            // no packet, as TCP's Connect asks: global and static routing never read it, and
            // a packet made here would take a uid, shifting every uid the script's packets get
            route = routing->RouteOutput(nullptr, header, nullptr, error);
        }
        if (!route || !route->GetOutputDevice())
        {
            return {};
        }
        Ptr<NetDevice> out = route->GetOutputDevice();
        path.push_back((static_cast<uint64_t>(node->GetId()) << 16) | out->GetIfIndex());
        Ptr<Channel> channel = out->GetChannel();
        if (!channel)
        {
            return {};
        }
        Ipv4Address hop = route->GetGateway() == Ipv4Address::GetAny() ? dst : route->GetGateway();
        Ptr<Node> next;
        for (std::size_t d = 0; d < channel->GetNDevices(); ++d)
        {
            Ptr<NetDevice> peer = channel->GetDevice(d);
            if (peer == out)
            {
                continue;
            }
            Ptr<Ipv4> peerIpv4 = peer->GetNode()->GetObject<Ipv4>();
            if (channel->GetNDevices() == 2 ||
                (peerIpv4 && peerIpv4->GetInterfaceForAddress(hop) >= 0))
            {
                next = peer->GetNode();
                break;
            }
        }
        node = next;
    }
    return {};
}

uint32_t
FlowTracker::GetNFlows() const
{
    return m_flows.size();
}

Ptr<TrackedFlow>
FlowTracker::GetFlow(uint32_t flow) const
{
    return m_flows.at(flow).flow;
}

std::string
FlowTracker::GetKind(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetKind();
}

uint32_t
FlowTracker::GetSrcNode(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetSrcNode()->GetId();
}

uint32_t
FlowTracker::GetDstNode(uint32_t flow) const
{
    Ptr<Node> node = m_flows.at(flow).flow->GetDstNode();
    return node ? node->GetId() : std::numeric_limits<uint32_t>::max();
}

std::string
FlowTracker::GetSrcAddress(uint32_t flow) const
{
    return AddressString(SourceAddress(*m_flows.at(flow).flow));
}

std::string
FlowTracker::GetDstAddress(uint32_t flow) const
{
    return AddressString(m_flows.at(flow).flow->GetDstAddress());
}

uint16_t
FlowTracker::GetSrcPort(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetSrcPort();
}

uint16_t
FlowTracker::GetDstPort(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetDstPort();
}

uint64_t
FlowTracker::GetSize(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetSize();
}

Time
FlowTracker::GetStartTime(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetStartTime();
}

double
FlowTracker::GetAppRate(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetAppRate();
}

std::string
FlowTracker::GetCongestionOps(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetCongestionOps();
}

std::string
FlowTracker::GetRttEstimator(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetRttEstimator();
}

uint32_t
FlowTracker::GetTag(uint32_t flow) const
{
    return m_flows.at(flow).tag;
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
    const Flow& f = m_flows.at(flow);
    if (f.path.empty())
    {
        return Time();
    }
    Time delay;
    double transmit = 0;
    double bottleneck = std::numeric_limits<double>::infinity();
    for (uint64_t link : f.path)
    {
        double rate = GetLinkRate(link);
        if (rate <= 0)
        {
            return Time();
        }
        delay += GetLinkDelay(link);
        uint16_t mtu = LinkDevice(link)->GetMtu();
        transmit += mtu * 8.0 / rate;
        bottleneck = std::min(bottleneck, rate);
    }
    Time back = delay; // the reverse path's, if it has none of its own (UDP)
    if (!f.reversePath.empty())
    {
        back = Time();
        for (uint64_t link : f.reversePath)
        {
            back += GetLinkDelay(link);
        }
    }
    return delay + back + Seconds(transmit + GetSize(flow) * 8.0 / bottleneck);
}

std::vector<uint64_t>
FlowTracker::GetPath(uint32_t flow) const
{
    return m_flows.at(flow).path;
}

std::vector<uint64_t>
FlowTracker::GetReversePath(uint32_t flow) const
{
    return m_flows.at(flow).reversePath;
}

bool
FlowTracker::IsConstantRate(uint32_t flow) const
{
    return m_flows.at(flow).flow->IsConstantRate();
}

double
FlowTracker::GetLinkRate(uint64_t link) const
{
    Ptr<NetDevice> device = LinkDevice(link);
    DataRateValue rate;
    if (device->GetAttributeFailSafe("DataRate", rate) ||
        (device->GetChannel() && device->GetChannel()->GetAttributeFailSafe("DataRate", rate)))
    {
        return rate.Get().GetBitRate();
    }
    return 0;
}

uint32_t
FlowTracker::GetQueuedPackets(uint64_t link) const
{
    Ptr<NetDevice> device = LinkDevice(link);
    Ptr<Node> node = device->GetNode();
    uint32_t packets = 0;
    if (auto tc = node->GetObject<TrafficControlLayer>())
    {
        if (Ptr<QueueDisc> disc = tc->GetRootQueueDiscOnDevice(device))
        {
            packets += disc->GetNPackets();
        }
    }
    if (auto p2p = DynamicCast<PointToPointNetDevice>(device))
    {
        packets += p2p->GetQueue()->GetNPackets();
    }
    return packets;
}

Time
FlowTracker::GetLinkDelay(uint64_t link) const
{
    Ptr<NetDevice> device = LinkDevice(link);
    TimeValue delay;
    if (device->GetChannel() && device->GetChannel()->GetAttributeFailSafe("Delay", delay))
    {
        return delay.Get();
    }
    return Time();
}

int
FlowTracker::GetState(uint32_t flow) const
{
    return m_flows.at(flow).state;
}

bool
FlowTracker::IsConnecting(uint32_t flow) const
{
    const Flow& f = m_flows.at(flow);
    return f.state == PENDING && !f.flow->IsHeld() && f.flow->GetStartTime() <= Simulator::Now() &&
           !f.flow->GetStartEvent().IsPending();
}

uint64_t
FlowTracker::GetDelivered(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetDelivered();
}

uint64_t
FlowTracker::GetSinkTotalRx(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetReceiverTotal();
}

uint64_t
FlowTracker::GetCredited(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetCredited();
}

Time
FlowTracker::GetFinishTime(uint32_t flow) const
{
    return m_flows.at(flow).finish;
}

bool
FlowTracker::IsQuiet(uint32_t flow) const
{
    return m_flows.at(flow).flow->IsQuiet();
}

uint64_t
FlowTracker::GetSendable(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetSendable();
}

void
FlowTracker::ConfigureSampling(Time period, uint32_t samplesPerWindow, Callback<void> onWindow)
{
    m_samplePeriod = period;
    m_samplesPerWindow = samplesPerWindow;
    m_onWindow = onWindow;
}

void
FlowTracker::SetSampled(uint32_t flow, bool sampled)
{
    Flow& f = m_flows.at(flow);
    if (sampled && !f.sampled)
    {
        MarkMonitors(f); // a new window begins
        m_sampledFlows.push_back(flow);
    }
    if (!sampled && f.sampled)
    {
        std::erase(m_sampledFlows, flow);
    }
    f.sampled = sampled;
    if (!sampled)
    {
        f.samples.clear();
        f.sentSamples.clear();
        f.rateSamples.clear();
        f.notificationSamples.clear();
        f.windowSamples.clear();
    }
    ScheduleSample();
}

void
FlowTracker::ClearSamples(const std::vector<uint32_t>& flows)
{
    for (uint32_t flow : flows)
    {
        Flow& f = m_flows.at(flow);
        f.samples.clear();
        f.sentSamples.clear();
        f.rateSamples.clear();
        f.notificationSamples.clear();
        f.windowSamples.clear();
        MarkMonitors(f);
    }
}

std::vector<uint64_t>
FlowTracker::GetSamples(uint32_t flow) const
{
    return AsVector(m_flows.at(flow).samples);
}

std::vector<uint64_t>
FlowTracker::GetSentSamples(uint32_t flow) const
{
    return AsVector(m_flows.at(flow).sentSamples);
}

std::vector<double>
FlowTracker::GetSendingRateSamples(uint32_t flow) const
{
    return AsVector(m_flows.at(flow).rateSamples);
}

std::vector<uint64_t>
FlowTracker::GetNotificationSamples(uint32_t flow) const
{
    return AsVector(m_flows.at(flow).notificationSamples);
}

std::vector<uint64_t>
FlowTracker::GetWindowSamples(uint32_t flow) const
{
    return AsVector(m_flows.at(flow).windowSamples);
}

std::vector<uint32_t>
FlowTracker::TakeProgressedFlows()
{
    for (uint32_t flow : m_progressed)
    {
        m_flows[flow].progressed = false;
    }
    std::vector<uint32_t> progressed;
    progressed.swap(m_progressed);
    return progressed;
}

void
FlowTracker::ScheduleSample()
{
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    if (!impl || m_sampleEvent.IsPending() || !m_samplePeriod.IsStrictlyPositive())
    {
        return;
    }
    // a stopped sender's flow is still sampled (its last packets arrive), but it alone
    // keeps no sampler going: else an OnOff flow past its stop ticks to the run's end
    bool any = std::any_of(m_sampledFlows.begin(), m_sampledFlows.end(), [this](uint32_t flow) {
        return m_flows[flow].state == ACTIVE && !m_flows[flow].flow->HasStopped();
    });
    if (any)
    {
        m_sampleEvent =
            impl->ScheduleHousekeeping(m_samplePeriod, MakeEvent(&FlowTracker::Sample, this));
    }
}

void
FlowTracker::Sample()
{
    for (uint32_t flow : m_sampledFlows)
    {
        Flow& f = m_flows[flow];
        if (f.state == ACTIVE)
        {
            uint64_t delivered = f.flow->GetDelivered();
            if (!f.progressed && delivered != (f.samples.empty() ? 0 : f.samples.back()))
            {
                f.progressed = true;
                m_progressed.push_back(flow);
            }
            f.samples.push_back(delivered);
            f.sentSamples.push_back(f.flow->GetSent());
            f.rateSamples.push_back(f.flow->GetSendingRate());
            f.notificationSamples.push_back(f.flow->GetCongestionNotifications());
            f.windowSamples.push_back(f.flow->GetCongestionWindow());
            while (f.samples.size() > m_sampleDepth)
            {
                f.samples.pop_front();
                f.sentSamples.pop_front();
                f.rateSamples.pop_front();
                f.notificationSamples.pop_front();
                f.windowSamples.pop_front();
            }
            if (f.snapshotting)
            {
                auto bulk = DynamicCast<BulkSendFlow>(f.flow);
                f.snapshots.push_back(FlowSnapshot{Simulator::Now().GetNanoSeconds(),
                                                   delivered,
                                                   bulk ? bulk->GetTcpState() : TcpFlowState{},
                                                   f.flow->GetCongestionState()});
                while (f.snapshots.size() > m_sampleDepth)
                {
                    f.snapshots.pop_front();
                }
            }
        }
    }
    ++m_sampleCount;
    if (m_samplesPerWindow > 0 && m_sampleCount % m_samplesPerWindow == 0 && !m_onWindow.IsNull())
    {
        m_onWindow();
    }
    ScheduleSample();
}

void
FlowTracker::SetFlowEventCallback(Callback<void, uint32_t, int> cb)
{
    m_onFlowEvent = cb;
}

uint64_t
FlowTracker::Credit(uint32_t flow, uint64_t bytes)
{
    Flow& f = m_flows.at(flow);
    uint64_t delivered = f.flow->GetDelivered();
    uint64_t credited = f.flow->Credit(bytes);
    CreditMonitors(f, credited, delivered);
    return credited;
}

uint64_t
FlowTracker::Uncredit(uint32_t flow, uint64_t bytes)
{
    return m_flows.at(flow).flow->Uncredit(bytes);
}

void
FlowTracker::ShiftTimes(uint32_t flow, Time delta)
{
    m_flows.at(flow).flow->ShiftTimes(delta);
    ShiftMonitoredPackets(flow, delta);
}

void
FlowTracker::AddFlowMonitor(Ptr<FlowMonitor> monitor, Ptr<Ipv4FlowClassifier> classifier)
{
    if (monitor && classifier)
    {
        m_monitors.emplace_back(monitor, classifier);
    }
}

std::pair<int64_t, int64_t>
FlowTracker::MonitorFlowIds(std::size_t monitor, const Flow& f) const
{
    auto [mon, classifier] = m_monitors[monitor];
    const TrackedFlow& flow = *f.flow;
    uint16_t reverseSource = flow.GetDstPort();
    uint16_t reverseDestination = flow.GetSrcPort();
    flow.GetReversePorts(reverseSource, reverseDestination);
    int64_t data = -1;
    int64_t ack = -1;
    for (const auto& [id, stats] : mon->GetFlowStats())
    {
        Ipv4FlowClassifier::FiveTuple t = classifier->FindFlow(id);
        if (t.protocol != flow.GetProtocol())
        {
            continue;
        }
        if (t.sourceAddress == flow.GetSrcAddress() &&
            t.destinationAddress == flow.GetDstAddress() && t.sourcePort == flow.GetSrcPort() &&
            t.destinationPort == flow.GetDstPort())
        {
            data = id;
        }
        else if (t.sourceAddress == flow.GetDstAddress() &&
                 t.destinationAddress == flow.GetSrcAddress() && t.sourcePort == reverseSource &&
                 t.destinationPort == reverseDestination)
        {
            ack = id;
        }
    }
    return {data, ack};
}

void
FlowTracker::CreditMonitors(const Flow& f, uint64_t bytes, uint64_t delivered)
{
    for (std::size_t m = 0; m < m_monitors.size(); ++m)
    {
        auto [data, ack] = MonitorFlowIds(m, f);
        Ptr<FlowMonitor> mon = m_monitors[m].first;
        uint64_t dataPackets = data >= 0 ? wormhole::FlowMonitorPackets(mon, data).second : 0;
        if (dataPackets == 0 || delivered == 0)
        {
            continue;
        }
        // as many packets as the flow's history needs for that many bytes
        double packets = static_cast<double>(bytes) * dataPackets / delivered;
        auto [delaySum, rx] = wormhole::FlowMonitorDelaySum(mon, data);
        Time delay = delaySum / static_cast<int64_t>(rx); // whole history, if no window mark
        if (m < f.monitorMark.size() && rx > f.monitorMark[m].second)
        {
            delay = (delaySum - f.monitorMark[m].first) /
                    static_cast<int64_t>(rx - f.monitorMark[m].second);
        }
        wormhole::FlowMonitorCredit(mon, data, packets, delay);
        if (ack >= 0)
        {
            // ACKs the receiver sent per data packet it received: the ACKs received so far
            // would leave out those in flight, a share of a young flow's history (4% of a
            // DCTCP flow's 20 RTTs after its start, skipped from then on)
            double ackRatio =
                static_cast<double>(wormhole::FlowMonitorPackets(mon, ack).first) / dataPackets;
            auto [ackDelaySum, ackRx] = wormhole::FlowMonitorDelaySum(mon, ack);
            wormhole::FlowMonitorCredit(mon,
                                        ack,
                                        packets * ackRatio,
                                        ackRx ? ackDelaySum / static_cast<int64_t>(ackRx) : Time());
        }
    }
}

void
FlowTracker::MarkMonitors(Flow& f)
{
    f.monitorMark.clear();
    for (std::size_t m = 0; m < m_monitors.size(); ++m)
    {
        int64_t data = MonitorFlowIds(m, f).first;
        f.monitorMark.push_back(data >= 0
                                    ? wormhole::FlowMonitorDelaySum(m_monitors[m].first, data)
                                    : std::make_pair(Time(), uint64_t{0}));
    }
}

void
FlowTracker::ShiftMonitoredPackets(uint32_t flow, Time delta)
{
    const Flow& f = m_flows.at(flow);
    for (std::size_t m = 0; m < m_monitors.size(); ++m)
    {
        auto [data, ack] = MonitorFlowIds(m, f);
        for (int64_t id : {data, ack})
        {
            if (id >= 0)
            {
                wormhole::FlowMonitorShiftInFlight(m_monitors[m].first, id, delta.GetTimeStep());
            }
        }
    }
}

std::string
FlowTracker::GetFlowFingerprint(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetFingerprint();
}

std::string
FlowTracker::GetLinkFingerprint(uint64_t link) const
{
    Ptr<NetDevice> device = LinkDevice(link);
    Ptr<Node> node = device->GetNode();
    std::ostringstream out;
    out << "device=" << wormhole::DescribeAttributes(device);
    if (auto p2p = DynamicCast<PointToPointNetDevice>(device))
    {
        out << " txqueue=" << wormhole::DescribeAttributes(p2p->GetQueue());
    }
    if (device->GetChannel())
    {
        out << " channel=" << wormhole::DescribeAttributes(device->GetChannel());
    }
    if (auto tc = node->GetObject<TrafficControlLayer>())
    {
        Ptr<QueueDisc> root = tc->GetRootQueueDiscOnDevice(device);
        out << " qdisc=" << wormhole::DescribeAttributes(root);
        // a classful disc's behaviour is its children's (RED's thresholds under RDMA's classes)
        for (std::size_t c = 0; root && c < root->GetNQueueDiscClasses(); ++c)
        {
            out << " class" << c << "="
                << wormhole::DescribeAttributes(root->GetQueueDiscClass(c)->GetQueueDisc());
        }
    }
    return out.str();
}

bool
FlowTracker::IsLossless(uint64_t link) const
{
    Ptr<NetDevice> device = LinkDevice(link);
    Ptr<Channel> channel = device->GetChannel();
    for (std::size_t d = 0; channel && d < channel->GetNDevices(); ++d)
    {
        PointerValue model;
        if (channel->GetDevice(d)->GetAttributeFailSafe("ReceiveErrorModel", model) &&
            model.Get<ErrorModel>())
        {
            return false;
        }
    }
    return true;
}

std::vector<RandomSource>
FlowTracker::GetLinkRandomSources(uint64_t link) const
{
    Ptr<NetDevice> device = LinkDevice(link);
    Ptr<Node> node = device->GetNode();
    std::vector<RandomSource> sources;
    auto add = [&sources](Ptr<const Object> object) {
        for (RandomSource& source : wormhole::DescribeRandomSources(object))
        {
            if (std::none_of(sources.begin(), sources.end(),
                             [&source](const RandomSource& s) { return s.what == source.what; }))
            {
                sources.push_back(std::move(source));
            }
        }
    };
    if (auto ipv4 = node->GetObject<Ipv4>())
    {
        Ptr<Ipv4RoutingProtocol> routing = ipv4->GetRoutingProtocol();
        add(routing);
        if (auto list = DynamicCast<Ipv4ListRouting>(routing))
        {
            for (uint32_t i = 0; i < list->GetNRoutingProtocols(); ++i)
            {
                int16_t priority;
                add(list->GetRoutingProtocol(i, priority));
            }
        }
    }
    if (auto tc = node->GetObject<TrafficControlLayer>())
    {
        Ptr<QueueDisc> root = tc->GetRootQueueDiscOnDevice(device);
        add(root);
        for (std::size_t c = 0; root && c < root->GetNQueueDiscClasses(); ++c)
        {
            add(root->GetQueueDiscClass(c)->GetQueueDisc());
        }
    }
    add(device);
    if (auto p2p = DynamicCast<PointToPointNetDevice>(device))
    {
        add(p2p->GetQueue());
    }
    Ptr<Channel> channel = device->GetChannel();
    for (std::size_t d = 0; channel && d < channel->GetNDevices(); ++d)
    {
        if (channel->GetDevice(d) != device)
        {
            add(channel->GetDevice(d));
        }
    }
    std::sort(sources.begin(), sources.end(),
              [](const RandomSource& a, const RandomSource& b) { return a.what < b.what; });
    return sources;
}

TcpFlowState
FlowTracker::GetTcpState(uint32_t flow) const
{
    auto bulk = DynamicCast<BulkSendFlow>(m_flows.at(flow).flow);
    return bulk ? bulk->GetTcpState() : TcpFlowState{};
}

bool
FlowTracker::SetTcpState(uint32_t flow, const TcpFlowState& state)
{
    auto bulk = DynamicCast<BulkSendFlow>(m_flows.at(flow).flow);
    return bulk && bulk->SetCongestionState(wormhole::TcpStateVector(state));
}

std::vector<double>
FlowTracker::GetCongestionState(uint32_t flow) const
{
    return m_flows.at(flow).flow->GetCongestionState();
}

void
FlowTracker::SetSnapshotting(uint32_t flow, bool on)
{
    Flow& f = m_flows.at(flow);
    f.snapshotting = on;
    if (!on)
    {
        f.snapshots.clear();
    }
}

Time
FlowTracker::GateStart(uint32_t flow)
{
    Flow& f = m_flows.at(flow);
    EventId start = f.flow->GetStartEvent();
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    if (!impl || f.state != PENDING || !start.IsPending() || !impl->Gate(start))
    {
        return Seconds(-1);
    }
    if (m_gatingImpl != impl)
    {
        impl->SetStartGate(MakeCallback(&FlowTracker::OnGatedStart, this));
        m_gatingImpl = impl;
    }
    m_gatedStarts[start.GetUid()] = flow;
    return Simulator::Now() + Simulator::GetDelayLeft(start);
}

void
FlowTracker::SetGatedStartCallback(Callback<void, uint32_t> decide)
{
    m_decideStart = decide;
}

void
FlowTracker::DecideStart(uint32_t flow, bool held)
{
    Flow& f = m_flows.at(flow);
    NS_ABORT_MSG_IF(held && !f.flow->CanBeHeld(),
                    "FlowTracker: " << f.flow->GetKind() << " flows cannot be held");
    f.startDecided = true;
    f.startHeld = held;
}

bool
FlowTracker::OnGatedStart(uint32_t uid)
{
    auto gated = m_gatedStarts.find(uid);
    if (gated == m_gatedStarts.end())
    {
        return true;
    }
    Flow& f = m_flows[gated->second];
    uint32_t flow = gated->second;
    m_gatedStarts.erase(gated);
    if (!f.startDecided && !m_decideStart.IsNull())
    {
        m_decideStart(flow);
    }
    bool held = f.startDecided && f.startHeld;
    f.startDecided = false;
    if (held)
    {
        f.flow->StartHeld(); // in place of the application's start, at its place in the queue
        return false;
    }
    return true;
}

uint32_t
FlowTracker::GetStartEventUid(uint32_t flow) const
{
    EventId start = m_flows.at(flow).flow->GetStartEvent();
    return start.IsPending() ? start.GetUid() : 0;
}

void
FlowTracker::ScheduleForFlow(uint32_t flow, std::function<void()> action)
{
    const Flow& f = m_flows.at(flow);
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    NS_ABORT_MSG_IF(!impl, "FlowTracker: starting flows needs the WormholeSimulatorImpl");
    impl->ScheduleWithTag(TimeStep(0), f.flow->GetSrcNode()->GetId(), f.tag, MakeEvent(action));
}

void
FlowTracker::ResumeHeld(uint32_t flow, const TcpFlowState& state)
{
    ResumeHeld(flow, wormhole::TcpStateVector(state));
}

void
FlowTracker::ResumeHeld(uint32_t flow, const std::vector<double>& state)
{
    Ptr<TrackedFlow> held = m_flows.at(flow).flow;
    // checked when the resume runs: a hold asked for at this instant is still scheduled now
    ScheduleForFlow(flow, [held, state, flow]() {
        NS_ABORT_MSG_IF(!held->IsHeld(), "FlowTracker: flow " << flow << " is not held");
        held->ResumeHeld(state);
    });
}

void
FlowTracker::CompleteVirtually(uint32_t flow)
{
    Flow& f = m_flows.at(flow);
    NS_ABORT_MSG_IF(f.state != PENDING || f.flow->GetSize() == 0,
                    "FlowTracker: only a sized flow that never started can complete virtually");
    f.state = FINISHED;
    f.finish = Simulator::Now();
    // as its last packet would, in its own flow's event: the end of the transfer it puts
    // on the wire carries the flow's tag, not the workload's, into the queues it shares
    // (a workload-tagged packet chain passes its tag to every packet queued behind it,
    // and a flow's packets never take theirs back)
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    uint32_t current = impl ? impl->SwapCurrentTag(f.tag) : 0;
    f.flow->CompleteVirtually();
    if (impl)
    {
        impl->SwapCurrentTag(current);
    }
}

std::vector<FlowSnapshot>
FlowTracker::GetSnapshots(uint32_t flow) const
{
    return AsVector(m_flows.at(flow).snapshots);
}

} // namespace ns3
