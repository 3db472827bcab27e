"""What the fabric tests share: flows with known 5-tuples, counters (the ``ns`` fixture is in conftest).

Flows bind their source port explicitly, so a test knows each flow's 5-tuple
and can ask the routing for its path before any packet is sent.
"""

from __future__ import annotations

from collections import Counter

from wormhole_ns3.models.fabric import flow_path
from wormhole_ns3.models.fabric.routing import TCP, UDP


def _address(ns, fabric, rank, port):
    return ns.InetSocketAddress(fabric.host_address(rank), port).ConvertTo()


def udp_flow(ns, fabric, src, dst, src_port, dst_port, packets, packet_bytes=1000,
             rate="10Gbps", start_s=0.0):
    """OnOff UDP from src to dst sending exactly ``packets`` packets; returns its sink."""
    sink = ns.PacketSinkHelper("ns3::UdpSocketFactory", ns.InetSocketAddress(
        ns.Ipv4Address.GetAny(), dst_port).ConvertTo()).Install(fabric.hosts[dst])
    sender = ns.OnOffHelper("ns3::UdpSocketFactory", _address(ns, fabric, dst, dst_port))
    sender.SetAttribute("Local", ns.AddressValue(_address(ns, fabric, src, src_port)))
    sender.SetAttribute("OnTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=1]"))
    sender.SetAttribute("OffTime", ns.StringValue("ns3::ConstantRandomVariable[Constant=0]"))
    sender.SetAttribute("DataRate", ns.StringValue(rate))
    sender.SetAttribute("PacketSize", ns.UintegerValue(packet_bytes))
    sender.SetAttribute("MaxBytes", ns.UintegerValue(packets * packet_bytes))
    sender.Install(fabric.hosts[src]).Start(ns.Seconds(start_s))
    return ns.DynamicCast[ns.PacketSink](sink.Get(0))


def tcp_flow(ns, fabric, src, dst, src_port, dst_port, size, start_s=0.0):
    """BulkSend over TCP from src to dst; returns its PacketSink."""
    sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(
        ns.Ipv4Address.GetAny(), dst_port).ConvertTo()).Install(fabric.hosts[dst])
    sender = ns.BulkSendHelper("ns3::TcpSocketFactory", _address(ns, fabric, dst, dst_port))
    sender.SetAttribute("Local", ns.AddressValue(_address(ns, fabric, src, src_port)))
    sender.SetAttribute("MaxBytes", ns.UintegerValue(size))
    sender.SetAttribute("SendSize", ns.UintegerValue(fabric.transport.segment_bytes))
    sender.Install(fabric.hosts[src]).Start(ns.Seconds(start_s))
    return ns.DynamicCast[ns.PacketSink](sink.Get(0))


def sent_packets(fabric) -> Counter:
    """Packets every port's queue disc sent, keyed by (node, peer)."""
    return Counter({(p.node, p.peer): p.queue_disc.GetStats().nTotalSentPackets
                    for p in fabric.ports if p.queue_disc.GetStats().nTotalSentPackets})


def hops(path: list[str]) -> list[tuple[str, str]]:
    return list(zip(path, path[1:]))


def predicted_packets(ns, fabric, flows) -> Counter:
    """Per-port packet counts if every flow (src, dst, sport, dport, packets) follows LookupFlow."""
    expected = Counter()
    for src, dst, sport, dport, packets in flows:
        for hop in hops(flow_path(ns, fabric, src, dst, UDP, sport, dport)):
            expected[hop] += packets
    return expected


__all__ = ["TCP", "UDP", "hops", "predicted_packets", "sent_packets", "tcp_flow",
           "udp_flow"]
