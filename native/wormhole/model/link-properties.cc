/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "link-properties.h"

#include "attribute-fingerprint.h"
#include "private-access.h"

#include "ns3/channel.h"
#include "ns3/data-rate.h"
#include "ns3/error-model.h"
#include "ns3/ipv4-list-routing.h"
#include "ns3/ipv4.h"
#include "ns3/node-list.h"
#include "ns3/node.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/pointer.h"
#include "ns3/queue-disc.h"
#include "ns3/queue.h"
#include "ns3/traffic-control-layer.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace wormhole
{

Ptr<NetDevice>
LinkDevice(uint64_t link)
{
    uint32_t node = link >> 16;
    uint32_t device = link & 0xffff;
    if (node >= NodeList::GetNNodes() || device >= NodeList::GetNode(node)->GetNDevices())
    {
        throw std::out_of_range("no link " + std::to_string(link));
    }
    return NodeList::GetNode(node)->GetDevice(device);
}

double
LinkRate(uint64_t link)
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

Time
LinkDelay(uint64_t link)
{
    Ptr<NetDevice> device = LinkDevice(link);
    TimeValue delay;
    if (device->GetChannel() && device->GetChannel()->GetAttributeFailSafe("Delay", delay))
    {
        return delay.Get();
    }
    return Time();
}

uint32_t
LinkQueuedPackets(uint64_t link)
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

bool
LinkIdle(uint64_t link)
{
    if (LinkQueuedPackets(link) > 0)
    {
        return false;
    }
    auto p2p = DynamicCast<PointToPointNetDevice>(LinkDevice(link));
    return p2p && !PointToPointTransmitting(p2p); // a device of another kind: not known idle
}

std::string
LinkFingerprint(uint64_t link)
{
    Ptr<NetDevice> device = LinkDevice(link);
    Ptr<Node> node = device->GetNode();
    std::ostringstream out;
    out << "device=" << DescribeAttributes(device);
    if (auto p2p = DynamicCast<PointToPointNetDevice>(device))
    {
        out << " txqueue=" << DescribeAttributes(p2p->GetQueue());
    }
    if (device->GetChannel())
    {
        out << " channel=" << DescribeAttributes(device->GetChannel());
    }
    if (auto tc = node->GetObject<TrafficControlLayer>())
    {
        Ptr<QueueDisc> root = tc->GetRootQueueDiscOnDevice(device);
        out << " qdisc=" << DescribeAttributes(root);
        // a classful disc's behaviour is its children's (RED's thresholds under RDMA's classes)
        for (std::size_t c = 0; root && c < root->GetNQueueDiscClasses(); ++c)
        {
            out << " class" << c << "="
                << DescribeAttributes(root->GetQueueDiscClass(c)->GetQueueDisc());
        }
    }
    return out.str();
}

bool
IsLosslessLink(uint64_t link)
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
LinkRandomSources(uint64_t link)
{
    Ptr<NetDevice> device = LinkDevice(link);
    Ptr<Node> node = device->GetNode();
    std::vector<RandomSource> sources;
    auto add = [&sources](Ptr<const Object> object) {
        for (RandomSource& source : DescribeRandomSources(object))
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

Time
StandaloneTime(const std::vector<uint64_t>& path,
               const std::vector<uint64_t>& reversePath,
               uint64_t bytes)
{
    if (path.empty())
    {
        return Time();
    }
    Time delay;
    double transmit = 0;
    double bottleneck = std::numeric_limits<double>::infinity();
    for (uint64_t link : path)
    {
        double rate = LinkRate(link);
        if (rate <= 0)
        {
            return Time();
        }
        delay += LinkDelay(link);
        uint16_t mtu = LinkDevice(link)->GetMtu();
        transmit += mtu * 8.0 / rate;
        bottleneck = std::min(bottleneck, rate);
    }
    Time back = delay; // the reverse path's, if it has none of its own (UDP)
    if (!reversePath.empty())
    {
        back = Time();
        for (uint64_t link : reversePath)
        {
            back += LinkDelay(link);
        }
    }
    return delay + back + Seconds(transmit + bytes * 8.0 / bottleneck);
}

} // namespace wormhole
} // namespace ns3
