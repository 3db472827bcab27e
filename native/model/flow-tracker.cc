/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "flow-tracker.h"

#include "flow-dag.h"
#include "flow-hash-ecmp-routing.h"
#include "attribute-fingerprint.h"
#include "flow-tag.h"
#include "private-access.h"
#include "wormhole-simulator-impl.h"

#include "ns3/boolean.h"
#include "ns3/bulk-send-application.h"
#include "ns3/channel.h"
#include "ns3/data-rate.h"
#include "ns3/flow-monitor.h"
#include "ns3/inet-socket-address.h"
#include "ns3/ipv4-flow-classifier.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-global-routing.h"
#include "ns3/ipv4-list-routing.h"
#include "ns3/ipv4-route.h"
#include "ns3/ipv4-static-routing.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/net-device.h"
#include "ns3/node-list.h"
#include "ns3/node.h"
#include "ns3/onoff-application.h"
#include "ns3/packet-sink.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue.h"
#include "ns3/queue-disc.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/packet.h"
#include "ns3/pointer.h"
#include "ns3/random-variable-stream.h"
#include "ns3/simulator.h"
#include "ns3/error-model.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/tcp-tx-buffer.h"
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
constexpr uint64_t UNLIMITED = std::numeric_limits<uint64_t>::max() / 4;
constexpr uint8_t TCP_PROTOCOL = 6;
constexpr uint8_t UDP_PROTOCOL = 17;

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

/** @return the flow-hash ECMP routing of a node (alone or in a list), or nullptr. */
Ptr<FlowHashEcmpRouting>
FlowHashRouting(Ptr<Ipv4RoutingProtocol> routing)
{
    if (auto list = DynamicCast<Ipv4ListRouting>(routing))
    {
        for (uint32_t i = 0; i < list->GetNRoutingProtocols(); ++i)
        {
            int16_t priority;
            if (auto hashed = FlowHashRouting(list->GetRoutingProtocol(i, priority)))
            {
                return hashed;
            }
        }
        return nullptr;
    }
    return DynamicCast<FlowHashEcmpRouting>(routing);
}

Ptr<Node>
NodeOwning(Ipv4Address address)
{
    for (auto n = NodeList::Begin(); n != NodeList::End(); ++n)
    {
        Ptr<Ipv4> ipv4 = (*n)->GetObject<Ipv4>();
        if (ipv4 && ipv4->GetInterfaceForAddress(address) >= 0)
        {
            return *n;
        }
    }
    return nullptr;
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
}

uint32_t
FlowTracker::Discover()
{
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    uint32_t before = m_flows.size();
    for (auto n = NodeList::Begin(); n != NodeList::End(); ++n)
    {
        Ptr<Node> node = *n;
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
            bool bulk = DynamicCast<BulkSendApplication>(app) != nullptr;
            bool onoff = DynamicCast<OnOffApplication>(app) != nullptr;
            if (!bulk && !onoff)
            {
                continue;
            }
            AddressValue remote;
            app->GetAttribute("Remote", remote);
            if (!InetSocketAddress::IsMatchingType(remote.Get()))
            {
                continue; // IPv6 and packet sockets are left to plain ns-3
            }
            Flow f;
            TypeIdValue protocol;
            app->GetAttribute("Protocol", protocol);
            bool tcp = protocol.Get() == TcpSocketFactory::GetTypeId();
            f.kind = std::string(bulk ? "bulk" : "onoff") + (tcp ? "-tcp" : "-udp");
            f.app = app;
            f.srcNode = node;
            InetSocketAddress dst = InetSocketAddress::ConvertFrom(remote.Get());
            f.dstAddress = dst.GetIpv4();
            f.dstPort = dst.GetPort();
            f.dstNode = NodeOwning(f.dstAddress);
            AddressValue local;
            app->GetAttribute("Local", local);
            if (InetSocketAddress::IsMatchingType(local.Get()))
            {
                // a sender bound to its own port: its packets are known before it starts
                InetSocketAddress bound = InetSocketAddress::ConvertFrom(local.Get());
                f.srcPort = bound.GetPort();
                f.srcAddress = bound.GetIpv4();
            }
            UintegerValue maxBytes;
            app->GetAttribute("MaxBytes", maxBytes);
            f.size = maxBytes.Get();
            TimeValue start;
            app->GetAttribute("StartTime", start);
            // an application's start time counts from when it is initialized: at time 0
            // for a script's set-up, at its creation for one a workload adds while running
            EventId& startEvent = wormhole::ApplicationStartEvent(app);
            f.start = startEvent.IsPending() ? TimeStep(startEvent.GetTs())
                                             : Simulator::Now() + start.Get();
            if (onoff)
            {
                DataRateValue rate;
                app->GetAttribute("DataRate", rate);
                f.appRate = rate.Get().GetBitRate();
                UintegerValue packetSize;
                app->GetAttribute("PacketSize", packetSize);
                f.packetSize = packetSize.Get();
            }
            f.tag = impl ? impl->NewTag() : WormholeSimulatorImpl::UNATTRIBUTED;
            uint32_t index = m_flows.size();
            m_flows.push_back(f);
            if (f.srcPort != 0 && !f.srcAddress.IsAny())
            {
                RegisterEndpoints(index);
            }
            m_sinkless.push_back(index);
            m_startsToAttribute.push_back(index);
            app->TraceConnectWithoutContext(
                "Tx",
                Callback<void, Ptr<const Packet>>(
                    [this, index](Ptr<const Packet> p) { OnAppTx(index, p); }));
        }
    }
    std::erase_if(m_sinkless, [this](uint32_t flow) {
        Flow& f = m_flows[flow];
        f.sink = f.sink ? f.sink : FindSink(f.dstAddress, f.dstPort);
        return f.sink || f.state == FINISHED;
    });
    if (impl)
    {
        HookNewNodes();
    }
    HookNewWorkloads();
    return m_flows.size() - before;
}

void
FlowTracker::HookNewWorkloads()
{
    for (FlowDag* dag : FlowDag::GetInstances())
    {
        if (std::find(m_workloadsHooked.begin(), m_workloadsHooked.end(), dag) ==
            m_workloadsHooked.end())
        {
            m_workloadsHooked.push_back(dag);
            dag->TraceConnectWithoutContext("Release",
                                            MakeCallback(&FlowTracker::OnWorkloadRelease, this));
        }
    }
}

void
FlowTracker::OnWorkloadRelease(uint32_t task)
{
    Discover();
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
    uint64_t src = SourceKey(f.srcAddress, f.srcPort);
    uint64_t dst = SourceKey(f.dstAddress, f.dstPort);
    m_tagByEndpoints[{src, dst}] = f.tag;
    m_tagByEndpoints[{dst, src}] = f.tag;
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
        if (!impl->Retag(wormhole::ApplicationStartEvent(f.app), f.tag))
        {
            return false; // its node is not initialized yet
        }
        f.startAttributed = true;
        ++count;
        return true;
    });
    return count;
}

void
FlowTracker::WatchUnattributedEvents(Callback<void> onChange)
{
    m_onUnattributedChange = onChange;
    if (WormholeSimulatorImpl* impl = AcceleratingImpl())
    {
        impl->SetAfterUnattributedHook(MakeCallback(&FlowTracker::AfterUnattributedEvent, this));
    }
}

void
FlowTracker::AfterUnattributedEvent()
{
    Discover();
    AttributeStartEvents();
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    bool unattributed = impl->GetCurrentTag() == WormholeSimulatorImpl::UNATTRIBUTED;
    // a workload's release may have discovered its flows already (OnWorkloadRelease)
    if (m_flows.size() > m_flowsReported || unattributed || !m_startsToAttribute.empty())
    {
        m_flowsReported = m_flows.size();
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
    Ptr<Ipv4> ipv4 = f.srcNode->GetObject<Ipv4>();
    if (!ipv4 || ipv4->GetNInterfaces() < 2 || !f.dstNode)
    {
        return {};
    }
    Ipv4Address src = f.srcAddress.IsAny() || f.srcAddress == Ipv4Address()
                          ? ipv4->GetAddress(1, 0).GetLocal()
                          : f.srcAddress;
    return Route(f, src, f.srcPort);
}

std::vector<uint64_t>
FlowTracker::GetPlannedLinks(uint32_t flow) const
{
    auto route = PlannedRoute(m_flows.at(flow));
    std::vector<uint64_t> links = route.first;
    links.insert(links.end(), route.second.begin(), route.second.end());
    return links;
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
    Flow f;
    f.kind = tcp ? "bulk-tcp" : "onoff-udp";
    f.srcNode = src;
    f.dstNode = dst;
    f.dstAddress = to->GetAddress(1, 0).GetLocal();
    f.dstPort = dstPort;
    auto [path, back] = Route(f, from->GetAddress(1, 0).GetLocal(), srcPort);
    path.insert(path.end(), back.begin(), back.end());
    return path;
}

std::vector<UpcomingFlow>
FlowTracker::GetUpcomingFlows(Time horizon) const
{
    std::vector<UpcomingFlow> all;
    for (FlowDag* dag : FlowDag::GetInstances())
    {
        std::vector<UpcomingFlow> some = dag->GetUpcomingFlows(horizon);
        all.insert(all.end(), some.begin(), some.end());
    }
    return all;
}

std::vector<uint64_t>
FlowTracker::GetPlannedPath(uint32_t flow) const
{
    return PlannedRoute(m_flows.at(flow)).first;
}

std::vector<uint64_t>
FlowTracker::GetPlannedReversePath(uint32_t flow) const
{
    return PlannedRoute(m_flows.at(flow)).second;
}

std::pair<std::vector<uint64_t>, std::vector<uint64_t>>
FlowTracker::Route(const Flow& f, Ipv4Address src, uint16_t srcPort) const
{
    bool tcp = f.kind.ends_with("-tcp");
    uint8_t protocol = tcp ? TCP_PROTOCOL : UDP_PROTOCOL;
    std::vector<uint64_t> path = WalkRoute(f.srcNode, src, f.dstAddress, protocol, srcPort, f.dstPort);
    if (path.empty() || !tcp)
    {
        return {path, {}};
    }
    std::vector<uint64_t> back =
        f.dstNode ? WalkRoute(f.dstNode, f.dstAddress, src, protocol, f.dstPort, srcPort)
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
    if (f.state != PENDING)
    {
        return;
    }
    Address local;
    Ptr<Socket> socket = DynamicCast<BulkSendApplication>(f.app)
                             ? DynamicCast<BulkSendApplication>(f.app)->GetSocket()
                             : DynamicCast<OnOffApplication>(f.app)->GetSocket();
    socket->GetSockName(local);
    InetSocketAddress bound = InetSocketAddress::ConvertFrom(local);
    f.srcPort = bound.GetPort();
    f.srcAddress = bound.GetIpv4();
    if (f.srcAddress.IsAny())
    {
        Ptr<Ipv4> ipv4 = f.srcNode->GetObject<Ipv4>();
        f.srcAddress = ipv4->GetAddress(1, 0).GetLocal();
    }
    m_flowBySource[SourceKey(f.srcAddress, f.srcPort)] = index;
    RegisterEndpoints(index);
    f.state = ACTIVE;
    std::tie(f.path, f.reversePath) = Route(f, f.srcAddress, f.srcPort);
    NotifyFlowEvent(index, ACTIVE);
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
    Flow& f = m_flows[it->second];
    f.received += packet->GetSize();
    if (f.size > 0 && f.state == ACTIVE && f.received + f.credited >= f.size)
    {
        f.state = FINISHED;
        f.finish = Simulator::Now();
        NotifyFlowEvent(it->second, FINISHED);
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
        Ptr<FlowHashEcmpRouting> hashed = FlowHashRouting(routing);
        if (hashed && node != from)
        {
            if (srcPort == 0)
            {
                return {}; // the flow's route depends on a port it has not chosen yet
            }
            route = hashed->LookupFlow(src, dst, protocol, srcPort, dstPort);
        }
        else
        {
            Ipv4Header header;
            header.SetSource(src);
            header.SetDestination(dst);
            header.SetProtocol(protocol);
            Socket::SocketErrno error;
            route = routing->RouteOutput(Create<Packet>(), header, nullptr, error);
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

std::string
FlowTracker::GetKind(uint32_t flow) const
{
    return m_flows.at(flow).kind;
}

uint32_t
FlowTracker::GetSrcNode(uint32_t flow) const
{
    return m_flows.at(flow).srcNode->GetId();
}

uint32_t
FlowTracker::GetDstNode(uint32_t flow) const
{
    const Flow& f = m_flows.at(flow);
    return f.dstNode ? f.dstNode->GetId() : std::numeric_limits<uint32_t>::max();
}

std::string
FlowTracker::GetSrcAddress(uint32_t flow) const
{
    return AddressString(m_flows.at(flow).srcAddress);
}

std::string
FlowTracker::GetDstAddress(uint32_t flow) const
{
    return AddressString(m_flows.at(flow).dstAddress);
}

uint16_t
FlowTracker::GetSrcPort(uint32_t flow) const
{
    return m_flows.at(flow).srcPort;
}

uint16_t
FlowTracker::GetDstPort(uint32_t flow) const
{
    return m_flows.at(flow).dstPort;
}

uint64_t
FlowTracker::GetSize(uint32_t flow) const
{
    return m_flows.at(flow).size;
}

Time
FlowTracker::GetStartTime(uint32_t flow) const
{
    return m_flows.at(flow).start;
}

double
FlowTracker::GetAppRate(uint32_t flow) const
{
    return m_flows.at(flow).appRate;
}

std::string
FlowTracker::GetCongestionOps(uint32_t flow) const
{
    const Flow& f = m_flows.at(flow);
    auto bulk = DynamicCast<BulkSendApplication>(f.app);
    auto socket = bulk ? DynamicCast<TcpSocketBase>(bulk->GetSocket()) : nullptr;
    return socket ? wormhole::TcpCongestionOpsName(socket) : std::string();
}

uint32_t
FlowTracker::GetTag(uint32_t flow) const
{
    return m_flows.at(flow).tag;
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
    const Flow& f = m_flows.at(flow);
    if (!DynamicCast<OnOffApplication>(f.app))
    {
        return true;
    }
    PointerValue off;
    f.app->GetAttribute("OffTime", off);
    auto constant = DynamicCast<ConstantRandomVariable>(off.Get<RandomVariableStream>());
    return constant && constant->GetConstant() == 0;
}

double
FlowTracker::GetLinkRate(uint64_t link) const
{
    Ptr<NetDevice> device = NodeList::GetNode(link >> 16)->GetDevice(link & 0xffff);
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
    Ptr<Node> node = NodeList::GetNode(link >> 16);
    Ptr<NetDevice> device = node->GetDevice(link & 0xffff);
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
    Ptr<NetDevice> device = NodeList::GetNode(link >> 16)->GetDevice(link & 0xffff);
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

uint64_t
FlowTracker::GetDelivered(uint32_t flow) const
{
    const Flow& f = m_flows.at(flow);
    return f.received + f.credited;
}

uint64_t
FlowTracker::GetSinkTotalRx(uint32_t flow) const
{
    const Flow& f = m_flows.at(flow);
    return f.sink ? f.sink->GetTotalRx() : 0;
}

uint64_t
FlowTracker::GetCredited(uint32_t flow) const
{
    return m_flows.at(flow).credited;
}

Time
FlowTracker::GetFinishTime(uint32_t flow) const
{
    return m_flows.at(flow).finish;
}

uint64_t
FlowTracker::SenderCounter(const Flow& f) const
{
    if (auto bulk = DynamicCast<BulkSendApplication>(f.app))
    {
        return wormhole::BulkSendTotalBytes(bulk);
    }
    return wormhole::OnOffTotalBytes(DynamicCast<OnOffApplication>(f.app));
}

bool
FlowTracker::IsQuiet(uint32_t flow) const
{
    const Flow& f = m_flows.at(flow);
    auto bulk = DynamicCast<BulkSendApplication>(f.app);
    auto sender = bulk ? DynamicCast<TcpSocketBase>(bulk->GetSocket()) : nullptr;
    if (!sender || !f.sink)
    {
        return false;
    }
    Ptr<TcpSocketBase> receiver;
    for (const auto& s : f.sink->GetAcceptedSockets())
    {
        Address peer;
        if (s->GetPeerName(peer) == 0 && InetSocketAddress::IsMatchingType(peer))
        {
            InetSocketAddress p = InetSocketAddress::ConvertFrom(peer);
            if (p.GetIpv4() == f.srcAddress && p.GetPort() == f.srcPort)
            {
                receiver = DynamicCast<TcpSocketBase>(s);
                break;
            }
        }
    }
    if (!receiver)
    {
        return false;
    }
    uint32_t sent = wormhole::TcpHighestSentSequence(sender);
    uint32_t received = receiver->GetRxBuffer()->NextRxSequence().GetValue();
    uint32_t acked = sender->GetTxBuffer()->HeadSequence().GetValue();
    bool dataInNetwork = sent != received;
    bool ackInNetwork = received != acked && wormhole::TcpDelayedAckCount(receiver) == 0;
    return !dataInNetwork && !ackInNetwork;
}

uint64_t
FlowTracker::AppCreditable(const Flow& f) const
{
    if (f.size == 0)
    {
        return UNLIMITED;
    }
    uint64_t left = f.size - std::min(f.size, SenderCounter(f));
    if (auto bulk = DynamicCast<BulkSendApplication>(f.app))
    {
        // the write it holds back, or at least its last byte, is written for real: see Credit
        uint64_t kept = std::max<uint64_t>(1, wormhole::BulkSendPendingBytes(bulk));
        return left > kept ? left - kept : 0;
    }
    return left;
}

uint64_t
FlowTracker::GetSendable(uint32_t flow) const
{
    const Flow& f = m_flows.at(flow);
    uint64_t unsent = 0;
    if (auto bulk = DynamicCast<BulkSendApplication>(f.app))
    {
        if (auto tcp = DynamicCast<TcpSocketBase>(bulk->GetSocket()))
        {
            unsent = wormhole::TcpUnsentBytes(tcp);
        }
    }
    return AppCreditable(f) + unsent;
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
    }
    ScheduleSample();
}

void
FlowTracker::ClearSamples(uint32_t flow)
{
    m_flows.at(flow).samples.clear();
    MarkMonitors(m_flows.at(flow));
}

std::vector<uint64_t>
FlowTracker::GetSamples(uint32_t flow) const
{
    const auto& s = m_flows.at(flow).samples;
    return std::vector<uint64_t>(s.begin(), s.end());
}

void
FlowTracker::ScheduleSample()
{
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    if (!impl || m_sampleEvent.IsPending() || !m_samplePeriod.IsStrictlyPositive())
    {
        return;
    }
    bool any = std::any_of(m_sampledFlows.begin(), m_sampledFlows.end(), [this](uint32_t flow) {
        return m_flows[flow].state == ACTIVE;
    });
    if (any)
    {
        m_sampleEvent =
            impl->ScheduleSystem(m_samplePeriod, MakeEvent(&FlowTracker::Sample, this));
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
            f.samples.push_back(f.received + f.credited);
            while (f.samples.size() > m_sampleDepth)
            {
                f.samples.pop_front();
            }
            if (f.snapshotting)
            {
                Ptr<TcpSocketBase> socket = SenderSocket(f);
                f.snapshots.push_back(
                    FlowSnapshot{Simulator::Now().GetNanoSeconds(),
                                 f.received + f.credited,
                                 socket ? wormhole::CaptureTcpState(socket) : TcpFlowState{}});
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
    uint64_t credited = 0;
    if (auto bulk = DynamicCast<BulkSendApplication>(f.app))
    {
        if (auto tcp = DynamicCast<TcpSocketBase>(bulk->GetSocket()))
        {
            uint64_t fromSocket = std::min<uint64_t>(bytes, std::numeric_limits<uint32_t>::max());
            credited = wormhole::TcpTrimUnsentTail(tcp, static_cast<uint32_t>(fromSocket));
        }
        uint64_t fromApp = std::min(bytes - credited, AppCreditable(f));
        wormhole::BulkSendTotalBytes(bulk) += fromApp;
        credited += fromApp;
    }
    else if (auto onoff = DynamicCast<OnOffApplication>(f.app))
    {
        credited = std::min(bytes, AppCreditable(f));
        // whole packets: OnOff's last packet, and so its total, depend on where its count stands
        credited -= f.packetSize > 0 ? credited % f.packetSize : 0;
        wormhole::OnOffTotalBytes(onoff) += credited;
    }
    if (f.sink)
    {
        wormhole::PacketSinkTotalRx(f.sink) += credited;
    }
    CreditMonitors(f, static_cast<int64_t>(credited));
    f.credited += credited;
    return credited;
}

} // namespace ns3

namespace ns3
{

uint64_t
FlowTracker::Uncredit(uint32_t flow, uint64_t bytes)
{
    Flow& f = m_flows.at(flow);
    bytes = std::min(bytes, f.credited);
    if (auto bulk = DynamicCast<BulkSendApplication>(f.app))
    {
        uint64_t& sent = wormhole::BulkSendTotalBytes(bulk);
        bool closed = f.size > 0 && sent >= f.size; // closed on its own before the skip
        auto tcp = DynamicCast<TcpSocketBase>(bulk->GetSocket());
        if (!closed)
        {
            sent -= std::min(sent, bytes); // the application writes them again
        }
        else if (tcp)
        {
            // the credit came out of the socket's buffer: there is room for it again
            uint64_t left = bytes;
            while (left > 0)
            {
                uint32_t chunk = static_cast<uint32_t>(std::min<uint64_t>(left, 1 << 20));
                if (!tcp->GetTxBuffer()->Add(Create<Packet>(chunk)))
                {
                    break;
                }
                left -= chunk;
            }
            bytes -= left;
        }
    }
    else if (auto onoff = DynamicCast<OnOffApplication>(f.app))
    {
        uint64_t& sent = wormhole::OnOffTotalBytes(onoff);
        sent -= std::min(sent, bytes);
    }
    if (f.sink)
    {
        wormhole::PacketSinkTotalRx(f.sink) -= bytes;
    }
    f.credited -= bytes;
    return bytes;
}

} // namespace ns3

namespace ns3
{

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
    uint8_t protocol = f.kind.ends_with("-tcp") ? 6 : 17;
    int64_t data = -1;
    int64_t ack = -1;
    for (const auto& [id, stats] : mon->GetFlowStats())
    {
        Ipv4FlowClassifier::FiveTuple t = classifier->FindFlow(id);
        if (t.protocol != protocol)
        {
            continue;
        }
        if (t.sourceAddress == f.srcAddress && t.destinationAddress == f.dstAddress &&
            t.sourcePort == f.srcPort && t.destinationPort == f.dstPort)
        {
            data = id;
        }
        else if (t.sourceAddress == f.dstAddress && t.destinationAddress == f.srcAddress &&
                 t.sourcePort == f.dstPort && t.destinationPort == f.srcPort)
        {
            ack = id;
        }
    }
    return {data, ack};
}

void
FlowTracker::CreditMonitors(const Flow& f, int64_t bytes)
{
    for (std::size_t m = 0; m < m_monitors.size(); ++m)
    {
        auto [data, ack] = MonitorFlowIds(m, f);
        Ptr<FlowMonitor> mon = m_monitors[m].first;
        uint64_t dataPackets = data >= 0 ? wormhole::FlowMonitorRxPackets(mon, data) : 0;
        uint64_t delivered = f.received + f.credited;
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
            double ackRatio =
                static_cast<double>(wormhole::FlowMonitorRxPackets(mon, ack)) / dataPackets;
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

} // namespace ns3

namespace ns3
{

Ptr<TcpSocketBase>
FlowTracker::SenderSocket(const Flow& f) const
{
    auto bulk = DynamicCast<BulkSendApplication>(f.app);
    return bulk ? DynamicCast<TcpSocketBase>(bulk->GetSocket()) : nullptr;
}

std::string
FlowTracker::GetFlowFingerprint(uint32_t flow) const
{
    const Flow& f = m_flows.at(flow);
    std::ostringstream out;
    out << f.kind << " size=" << f.size << " app=" << wormhole::DescribeAttributes(f.app);
    for (Ptr<Node> host : {f.srcNode, f.dstNode})
    {
        if (auto tcp = host ? host->GetObject<TcpL4Protocol>() : nullptr)
        {
            out << " tcp=" << wormhole::DescribeAttributes(tcp);
        }
    }
    if (f.kind.ends_with("-tcp"))
    {
        TypeIdValue control;
        f.srcNode->GetObject<TcpL4Protocol>()->GetAttribute("SocketType", control);
        out << " socket=" << wormhole::DescribeDefaults(TcpSocketBase::GetTypeId())
            << " cc=" << wormhole::DescribeDefaults(control.Get());
    }
    return out.str();
}

std::string
FlowTracker::GetLinkFingerprint(uint64_t link) const
{
    Ptr<Node> node = NodeList::GetNode(link >> 16);
    Ptr<NetDevice> device = node->GetDevice(link & 0xffff);
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
        out << " qdisc=" << wormhole::DescribeAttributes(tc->GetRootQueueDiscOnDevice(device));
    }
    return out.str();
}

bool
FlowTracker::IsLossless(uint64_t link) const
{
    Ptr<NetDevice> device = NodeList::GetNode(link >> 16)->GetDevice(link & 0xffff);
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

TcpFlowState
FlowTracker::GetTcpState(uint32_t flow) const
{
    Ptr<TcpSocketBase> socket = SenderSocket(m_flows.at(flow));
    return socket ? wormhole::CaptureTcpState(socket) : TcpFlowState{};
}

bool
FlowTracker::SetTcpState(uint32_t flow, const TcpFlowState& state)
{
    Ptr<TcpSocketBase> socket = SenderSocket(m_flows.at(flow));
    if (!socket)
    {
        return false;
    }
    wormhole::RestoreTcpState(socket, state);
    return true;
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
FlowTracker::DeferStart(uint32_t flow)
{
    Flow& f = m_flows.at(flow);
    EventId& start = wormhole::ApplicationStartEvent(f.app);
    if (f.state != PENDING || !start.IsPending())
    {
        return Seconds(-1);
    }
    Time at = Simulator::Now() + Simulator::GetDelayLeft(start);
    Simulator::Remove(start);
    return at;
}

void
FlowTracker::StartNow(uint32_t flow)
{
    Flow& f = m_flows.at(flow);
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    NS_ABORT_MSG_IF(!impl, "FlowTracker::StartNow needs the WormholeSimulatorImpl");
    impl->ScheduleWithTag(TimeStep(0),
                          f.srcNode->GetId(),
                          f.tag,
                          MakeEvent(&wormhole::StartApplication, f.app));
}

void
FlowTracker::StartHeld(uint32_t flow)
{
    Flow& f = m_flows.at(flow);
    auto bulk = DynamicCast<BulkSendApplication>(f.app);
    NS_ABORT_MSG_IF(!bulk || !f.kind.ends_with("-tcp"), "FlowTracker: only BulkSend TCP flows are held");
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    NS_ABORT_MSG_IF(!impl, "FlowTracker::StartHeld needs the WormholeSimulatorImpl");
    impl->ScheduleWithTag(TimeStep(0), f.srcNode->GetId(), f.tag, MakeEvent([this, flow, bulk]() {
                              wormhole::StartApplication(bulk);
                              Ptr<Socket> socket = bulk->GetSocket();
                              UintegerValue size;
                              socket->GetAttribute("SndBufSize", size);
                              m_flows[flow].heldBufferSize = size.Get();
                              // the application's first write is refused: it keeps it and waits
                              socket->SetAttribute("SndBufSize", UintegerValue(0));
                          }));
}

void
FlowTracker::ResumeHeld(uint32_t flow, const TcpFlowState& state)
{
    Flow& f = m_flows.at(flow);
    auto bulk = DynamicCast<BulkSendApplication>(f.app);
    NS_ABORT_MSG_IF(!bulk || f.heldBufferSize == 0, "FlowTracker: flow " << flow << " is not held");
    WormholeSimulatorImpl* impl = AcceleratingImpl();
    impl->ScheduleWithTag(TimeStep(0), f.srcNode->GetId(), f.tag, MakeEvent([this, flow, bulk, state]() {
                              Flow& held = m_flows[flow];
                              Ptr<Socket> socket = bulk->GetSocket();
                              socket->SetAttribute("SndBufSize", UintegerValue(held.heldBufferSize));
                              held.heldBufferSize = 0;
                              if (auto tcp = DynamicCast<TcpSocketBase>(socket))
                              {
                                  wormhole::RestoreTcpState(tcp, state);
                              }
                              wormhole::BulkSendResume(bulk);
                          }));
}

void
FlowTracker::CompleteVirtually(uint32_t flow)
{
    Flow& f = m_flows.at(flow);
    NS_ABORT_MSG_IF(f.state != PENDING || f.size == 0 || !f.sink,
                    "FlowTracker: only a sized flow that never started can complete virtually");
    uint64_t lacking = f.size - std::min(f.size, f.received + f.credited);
    if (auto bulk = DynamicCast<BulkSendApplication>(f.app))
    {
        wormhole::BulkSendTotalBytes(bulk) = f.size;
    }
    else if (auto onoff = DynamicCast<OnOffApplication>(f.app))
    {
        wormhole::OnOffTotalBytes(onoff) = f.size;
    }
    wormhole::PacketSinkTotalRx(f.sink) += lacking;
    f.credited += lacking;
    f.state = FINISHED;
    f.finish = Simulator::Now();
    Ptr<Packet> rest = Create<Packet>(static_cast<uint32_t>(std::min<uint64_t>(lacking, UINT32_MAX)));
    wormhole::FirePacketSinkRx(f.sink, rest, InetSocketAddress(f.srcAddress, f.srcPort));
}

std::vector<FlowSnapshot>
FlowTracker::GetSnapshots(uint32_t flow) const
{
    const auto& s = m_flows.at(flow).snapshots;
    return std::vector<FlowSnapshot>(s.begin(), s.end());
}

} // namespace ns3
