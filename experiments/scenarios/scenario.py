r"""One scenario off the beaten path, built from its spec with plain ns-3, as a user writes it.

    python scenario.py --spec FILE.json          # a spec written by the sweep (or by hand)
    python scenario.py --seed S --index N        # scenario N of seed S (generator.py)

Every link is a point-to-point link of its rate and delay; every switch port runs
ns-3's RedQueueDisc with the spec's thresholds, Gentle, QW, LInterm, ECN and hard
drop, told its link's rate and delay; every host port a FIFO queue disc. Routing is
ns-3's global routing (Dijkstra, random per-packet ECMP if the spec asks). Each flow
is a BulkSend of its bytes to a PacketSink of its own (TCP port 5000 + its index),
started at its instant; TCP is the spec's congestion control, ECN, delayed ACK and
socket buffers, ns-3's defaults otherwise. The run ends when every BulkSend has
closed. Output: one line per flow, ``flow <i> bytes <received bytes>``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator import PACKET_HOP_BUDGET, generate
from ns import ns
from spec import SEGMENT_BYTES, ScenarioSpec, SpecError, load

BASE_PORT = 5000


def parse_args(argv: list[str] | None = None) -> ScenarioSpec:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", type=Path, metavar="FILE", help="the scenario's JSON spec")
    source.add_argument("--seed", type=int, help="derive the spec from this seed (with --index)")
    parser.add_argument("--index", type=int, default=0, help="the scenario's number under --seed")
    parser.add_argument("--budget", type=int, default=PACKET_HOP_BUDGET,
                        help=f"under --seed: data packets times their hops at most (default {PACKET_HOP_BUDGET:,})")
    args = parser.parse_args(argv)
    if args.index < 0 or args.budget < 1:
        parser.error(f"--index must be at least 0 and --budget at least 1, got {args.index} and {args.budget}")
    try:
        return load(args.spec) if args.spec is not None else generate(args.seed, args.index, args.budget)
    except SpecError as error:
        parser.error(str(error))
        raise  # parser.error exits


def configure_tcp(spec: ScenarioSpec) -> None:
    transport = spec.transport
    ns.Config.SetDefault("ns3::TcpL4Protocol::SocketType", ns.StringValue(f"ns3::{transport.congestion_control}"))
    ns.Config.SetDefault("ns3::TcpSocket::SegmentSize", ns.UintegerValue(SEGMENT_BYTES))
    ns.Config.SetDefault("ns3::TcpSocket::SndBufSize", ns.UintegerValue(transport.buffer_bytes))
    ns.Config.SetDefault("ns3::TcpSocket::RcvBufSize", ns.UintegerValue(transport.buffer_bytes))
    ns.Config.SetDefault("ns3::TcpSocket::DelAckCount", ns.UintegerValue(transport.delayed_ack_count))
    ns.Config.SetDefault("ns3::TcpSocketBase::UseEcn", ns.StringValue("On" if transport.ecn else "Off"))
    ns.Config.SetDefault("ns3::Ipv4GlobalRouting::RandomEcmpRouting", ns.BooleanValue(spec.topology.random_ecmp))


def red_helper(spec: ScenarioSpec, rate_bps: int, delay_ns: int):
    red = spec.switch_queue
    helper = ns.TrafficControlHelper()
    helper.SetRootQueueDisc(
        "ns3::RedQueueDisc",
        "MinTh", ns.DoubleValue(red.min_th),
        "MaxTh", ns.DoubleValue(red.max_th),
        "Gentle", ns.BooleanValue(red.gentle),
        "QW", ns.DoubleValue(red.qw),
        "LInterm", ns.DoubleValue(red.l_interm),
        "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{red.max_packets}p")),
        "UseEcn", ns.BooleanValue(red.use_ecn),
        "UseHardDrop", ns.BooleanValue(red.hard_drop),
        "MeanPktSize", ns.UintegerValue(1500),
        "LinkBandwidth", ns.DataRateValue(ns.DataRate(rate_bps)),
        "LinkDelay", ns.TimeValue(ns.NanoSeconds(delay_ns)),
    )
    return helper


def build(spec: ScenarioSpec):
    """Nodes, links, queue discs, addresses and routes; return the nodes and each host's address."""
    topology = spec.topology
    nodes = ns.NodeContainer()
    nodes.Create(topology.nodes)
    ns.InternetStackHelper().Install(nodes)
    fifo = ns.TrafficControlHelper()
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc",
                          "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{spec.host_queue_packets}p")))
    addresses = ns.Ipv4AddressHelper()
    host_address = {}
    for i, link in enumerate(topology.links):
        p2p = ns.PointToPointHelper()
        p2p.SetDeviceAttribute("DataRate", ns.DataRateValue(ns.DataRate(link.rate_bps)))
        p2p.SetChannelAttribute("Delay", ns.TimeValue(ns.NanoSeconds(link.delay_ns)))
        p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{spec.device_queue_packets}p")))
        devices = p2p.Install(nodes.Get(link.a), nodes.Get(link.b))
        red = red_helper(spec, link.rate_bps, link.delay_ns)
        for end, node in enumerate((link.a, link.b)):
            (fifo if topology.is_host(node) else red).Install(devices.Get(end))
        addresses.SetBase(ns.Ipv4Address(f"10.{i // 256}.{i % 256}.0"), ns.Ipv4Mask("255.255.255.0"))
        interfaces = addresses.Assign(devices)
        for end, node in enumerate((link.a, link.b)):
            if topology.is_host(node):
                host_address[node] = interfaces.GetAddress(end)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return nodes, host_address


def install_flows(spec: ScenarioSpec, nodes, host_address) -> list:
    """A BulkSend and its own PacketSink per flow; return the sinks."""
    sinks = []
    for i, flow in enumerate(spec.flows):
        port = BASE_PORT + i
        sink_helper = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sink_apps = sink_helper.Install(nodes.Get(flow.dst))
        sink_apps.Start(ns.Seconds(0))
        sinks.append(ns.DynamicCast[ns.PacketSink](sink_apps.Get(0)))
        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(host_address[flow.dst], port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(flow.bytes))
        bulk.SetAttribute("SendSize", ns.UintegerValue(SEGMENT_BYTES))
        bulk.Install(nodes.Get(flow.src)).Start(ns.NanoSeconds(flow.start_ns))
    return sinks


def main(argv: list[str] | None = None) -> int:
    spec = parse_args(argv)
    configure_tcp(spec)
    nodes, host_address = build(spec)
    sinks = install_flows(spec, nodes, host_address)
    ns.Simulator.Run()
    for i, sink in enumerate(sinks):
        print(f"flow {i} bytes {sink.GetTotalRx()}")
    ns.Simulator.Destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
