"""TCP congestion controls and bottleneck queue discs, one dumbbell simulation each, in one process.

``--variants TcpNewReno:fifo,TcpDctcp:red`` runs one simulation per variant
(destroyed before the next): two senders with 10 and 15 MB for two receivers
across a 1 Gbps bottleneck whose egress runs the named queue disc (``fifo``
drop-tail, ``red`` DCTCP's step marker, ``fq-codel``, ``pie``), hosts on FIFOs.
Prints what each sink received and, for the bottleneck's queue disc, how many
packets it dropped or marked being zero or not (its counters count only the
packets a run simulates).
"""

import argparse

from ns import ns

from wormhole_ns3.examples.dctcp_dumbbell import configure_tcp
from wormhole_ns3.models.fabric import queues

RATE, DELAY = "1Gbps", "20us"
BUFFER_PACKETS = 1000


def bottleneck_disc(name: str):
    if name == "fifo":
        return queues.fifo(ns, BUFFER_PACKETS)
    if name == "red":
        return queues.step_marking_red(ns, threshold_packets=20, buffer_packets=BUFFER_PACKETS,
                                       link_rate=RATE, link_delay=DELAY)
    helper = ns.TrafficControlHelper()
    helper.SetRootQueueDisc({"fq-codel": "ns3::FqCoDelQueueDisc", "pie": "ns3::PieQueueDisc"}[name])
    return helper


def run_variant(congestion_control: str, disc: str, index: int) -> None:
    ns.Config.Reset()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1 + index)
    configure_tcp(1, congestion_control)
    senders, receivers, switches = ns.NodeContainer(), ns.NodeContainer(), ns.NodeContainer()
    senders.Create(2)
    receivers.Create(2)
    switches.Create(2)
    stack = ns.InternetStackHelper()
    for group in (senders, receivers, switches):
        stack.Install(group)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(RATE))
    p2p.SetChannelAttribute("Delay", ns.StringValue(DELAY))
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", ns.QueueSizeValue(ns.QueueSize("10p")))
    addresses = ns.Ipv4AddressHelper()
    hosts = queues.fifo(ns, BUFFER_PACKETS)
    bottleneck = p2p.Install(switches.Get(0), switches.Get(1))
    disc_at_bottleneck = bottleneck_disc(disc).Install(bottleneck.Get(0)).Get(0)
    hosts.Install(bottleneck.Get(1))
    addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addresses.Assign(bottleneck)
    receiver_addresses = []
    for i in range(2):
        for host, switch, subnet in ((senders.Get(i), switches.Get(0), f"10.1.{i}.0"),
                                     (receivers.Get(i), switches.Get(1), f"10.2.{i}.0")):
            devices = p2p.Install(host, switch)
            hosts.Install(devices)
            addresses.SetBase(ns.Ipv4Address(subnet), ns.Ipv4Mask("255.255.255.0"))
            assigned = addresses.Assign(devices)
        receiver_addresses.append(assigned.GetAddress(0))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    sinks = []
    for i, megabytes in enumerate((10, 15)):
        port = 5000 + i
        helper = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                     ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sinks.append(ns.DynamicCast[ns.PacketSink](helper.Install(receivers.Get(i)).Get(0)))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory",
                                 ns.InetSocketAddress(receiver_addresses[i], port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(megabytes * 10**6))
        bulk.SetAttribute("SendSize", ns.UintegerValue(1448))
        bulk.Install(senders.Get(i)).Start(ns.Seconds(0.01))
    ns.Simulator.Stop(ns.Seconds(5))
    ns.Simulator.Run()
    stats = disc_at_bottleneck.GetStats()
    dropped = stats.nTotalDroppedPackets > 0
    marked = stats.nTotalMarkedPackets > 0
    for i, sink in enumerate(sinks):
        print(f"{congestion_control} over {disc}: flow {i} received {sink.GetTotalRx()} bytes")
    print(f"{congestion_control} over {disc}: bottleneck dropped some {dropped}, marked some {marked}")
    ns.Simulator.Destroy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", required=True, help="CONTROL:DISC,... (e.g. TcpNewReno:fifo)")
    args = parser.parse_args()
    for index, variant in enumerate(args.variants.split(",")):
        control, disc = variant.split(":")
        run_variant(control, disc, index)


if __name__ == "__main__":
    main()
