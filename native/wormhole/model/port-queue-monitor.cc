/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#include "port-queue-monitor.h"

#include "ns3/node-list.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue-disc.h"
#include "ns3/queue.h"
#include "ns3/simulator.h"
#include "ns3/traffic-control-layer.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(PortQueueMonitor);

TypeId
PortQueueMonitor::GetTypeId()
{
    static TypeId tid = TypeId("ns3::PortQueueMonitor")
                            .SetParent<Object>()
                            .SetGroupName("Wormhole")
                            .AddConstructor<PortQueueMonitor>();
    return tid;
}

void
PortQueueMonitor::Install()
{
    for (uint32_t n = 0; n < NodeList::GetNNodes(); ++n)
    {
        Ptr<Node> node = NodeList::GetNode(n);
        Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
        for (uint32_t d = 0; d < node->GetNDevices(); ++d)
        {
            auto device = DynamicCast<PointToPointNetDevice>(node->GetDevice(d));
            if (!device)
            {
                continue;
            }
            auto index = static_cast<uint32_t>(m_ports.size());
            m_ports.push_back(Port{(static_cast<uint64_t>(n) << 16) | d});
            device->GetQueue()->TraceConnectWithoutContext(
                "PacketsInQueue",
                Callback<void, uint32_t, uint32_t>(
                    [this, index](uint32_t, uint32_t packets) { OnChange(index, false, packets); }));
            Ptr<QueueDisc> disc = tc ? tc->GetRootQueueDiscOnDevice(device) : nullptr;
            if (disc)
            {
                disc->TraceConnectWithoutContext(
                    "PacketsInQueue",
                    Callback<void, uint32_t, uint32_t>(
                        [this, index](uint32_t, uint32_t packets) { OnChange(index, true, packets); }));
            }
        }
    }
}

void
PortQueueMonitor::OnChange(uint32_t port, bool queueDisc, uint32_t packets)
{
    Port& p = m_ports[port];
    int64_t now = Simulator::Now().GetTimeStep();
    if (p.since >= 0)
    {
        p.held[p.inQueueDisc + p.inDevice] += now - p.since;
    }
    (queueDisc ? p.inQueueDisc : p.inDevice) = packets;
    p.since = now;
}

std::vector<PortQueueRecord>
PortQueueMonitor::GetRecords() const
{
    int64_t now = Simulator::Now().GetTimeStep();
    std::vector<PortQueueRecord> records;
    for (const Port& p : m_ports)
    {
        if (p.since < 0)
        {
            continue;
        }
        std::map<uint32_t, int64_t> held = p.held;
        held[p.inQueueDisc + p.inDevice] += now - p.since;
        PortQueueRecord record{p.link, {}, {}};
        for (const auto& [packets, duration] : held)
        {
            record.packets.push_back(packets);
            record.durations.push_back(duration);
        }
        records.push_back(record);
    }
    return records;
}

} // namespace ns3
