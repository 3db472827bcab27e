"""A Cubic flow whose bottleneck's capacity steps up, its congestion window read at times of the script's own.

ns-3.44's ns3-tcp-cubic suite has such a case: a flow cycles at --rate, the
bottleneck doubles at --step-s, and the window's climb to the new capacity
follows its cubic function from wherever its cycle was at the step. Here
everything else is ns-3's defaults (TcpCubic, FQ-CoDel, 536-byte segments;
--segment and --no-friendly set the suite's 1448 bytes and a window on the
cubic function alone),
with one or more flows of --mb megabytes (0: unlimited, stopped at --stop-s).
A trace sink in C++ keeps each flow's congestion window; events the script
schedules print it, in segments, every --read-ms from the step to the stop.

Output: the step's time, one line per reading (time, each flow's window),
and the bytes each sink received.
"""

import argparse

import cppyy
from ns import ns

cppyy.cppdef("""
#include "ns3/core-module.h"
#include "ns3/point-to-point-module.h"
#include <cstdio>
#include <vector>

namespace cubic_step
{
std::vector<uint32_t> g_cwnd;  // each flow's last congestion window, bytes
uint32_t g_segment = 536;

void
OnCwnd(uint32_t flow, uint32_t oldValue, uint32_t newValue)
{
    g_cwnd[flow] = newValue;
}

void
Connect(uint32_t flow, uint32_t node)
{
    ns3::Config::ConnectWithoutContext(
        "/NodeList/" + std::to_string(node) + "/$ns3::TcpL4Protocol/SocketList/0/CongestionWindow",
        ns3::MakeBoundCallback(&OnCwnd, flow));
}

void
Read()
{
    std::printf("t %.3f cwnd", ns3::Simulator::Now().GetSeconds());
    for (uint32_t cwnd : g_cwnd)
    {
        std::printf(" %.1f", cwnd / double(g_segment));
    }
    std::printf("\\n");
    std::fflush(stdout);
}

void
Step(ns3::Ptr<ns3::NetDevice> device, std::string rate)
{
    ns3::DynamicCast<ns3::PointToPointNetDevice>(device)->SetDataRate(ns3::DataRate(rate));
}

// each sender's socket is traced once its application started; the rate steps; the windows are read
void
Schedule(uint32_t node, double start, ns3::Ptr<ns3::NetDevice> device, std::string rate, double step, double stop,
         double read)
{
    uint32_t flow = g_cwnd.size();
    g_cwnd.push_back(0);
    ns3::Simulator::Schedule(ns3::Seconds(start + 0.001), &Connect, flow, node);
    if (flow > 0)
    {
        return;
    }
    ns3::Simulator::Schedule(ns3::Seconds(step), &Step, device, rate);
    for (double t = step; t < stop - 1e-9; t += read)
    {
        ns3::Simulator::Schedule(ns3::Seconds(t), &Read);
    }
}
}  // namespace cubic_step
""")
step = cppyy.gbl.cubic_step


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=1)
    parser.add_argument("--mb", type=float, default=0.0, help="each flow's size in MB (0: unlimited)")
    parser.add_argument("--rate", default="50Mbps", help="the bottleneck's rate before the step")
    parser.add_argument("--step-rate", default="100Mbps", help="the bottleneck's rate from the step on")
    parser.add_argument("--step-s", type=float, default=10.0)
    parser.add_argument("--stop-s", type=float, default=14.0)
    parser.add_argument("--read-ms", type=float, default=250.0)
    parser.add_argument("--delay", default="2ms", help="the bottleneck's delay")
    parser.add_argument("--segment", type=int, default=0, help="TCP segment size (0: ns-3's default)")
    parser.add_argument("--no-friendly", action="store_true",
                        help="Cubic without its Reno-friendly region: its window follows the cubic function only")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    if args.segment:
        ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(args.segment))
        step.g_segment = args.segment
    if args.no_friendly:
        ns.Config.SetDefault("ns3::TcpCubic::TcpFriendliness", ns.BooleanValue(False))
    senders, receivers, routers = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(args.flows)
    receivers.Create(args.flows)
    routers.Create(2)
    ns.InternetStackHelper().InstallAll()
    bottleneck, access = ns.PointToPointHelper(), ns.PointToPointHelper()
    bottleneck.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
    access.SetDeviceAttribute("DataRate", ns.StringValue("1Gbps"))
    bottleneck.SetChannelAttribute("Delay", ns.StringValue(args.delay))
    access.SetChannelAttribute("Delay", ns.StringValue("5us"))
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    core = bottleneck.Install(routers.Get(0), routers.Get(1))
    addresses.Assign(core)
    destinations = []
    for i in range(args.flows):
        addresses.SetBase(ns.Ipv4Address(f"10.1.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addresses.Assign(access.Install(senders.Get(i), routers.Get(0)))
        addresses.SetBase(ns.Ipv4Address(f"10.2.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        destinations.append(addresses.Assign(access.Install(receivers.Get(i), routers.Get(1))).GetAddress(0))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    sinks = []
    for i in range(args.flows):
        local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 5000 + i).ConvertTo()
        sink = ns.DynamicCast[ns.PacketSink](
            ns.PacketSinkHelper("ns3::TcpSocketFactory", local).Install(receivers.Get(i)).Get(0))
        sinks.append(sink)
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                 ns.InetSocketAddress(destinations[i], 5000 + i).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(int(args.mb * 1e6)))
        app = bulk.Install(senders.Get(i))
        start = 0.1 + 0.02 * i
        app.Start(ns.Seconds(start))
        app.Stop(ns.Seconds(args.stop_s))
        step.Schedule(senders.Get(i).GetId(), start, core.Get(0), args.step_rate, args.step_s, args.stop_s,
                      args.read_ms / 1e3)
    ns.Simulator.Stop(ns.Seconds(args.stop_s + 1))
    ns.Simulator.Run()
    print(f"step at {args.step_s} s to {args.step_rate}")
    for i, sink in enumerate(sinks):
        print(f"flow {i} received {sink.GetTotalRx()} bytes")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
