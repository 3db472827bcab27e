r"""DCTCP dumbbell: the built-in demo workload.

Topology (every link has the same rate and delay, 10 Gbps / 10 us by default)::

    sender 0 --\                            /-- receiver 0
    sender 1 ---+-- left ==bottleneck== right --+-- receiver 1
      ...      /   switch              switch    \     ...
    sender N-1                                    receiver N-1

Flow i is a BulkSendApplication on sender i that sends a fixed number of bytes to a
PacketSink on receiver i (TCP port 5000 + i).  Flow sizes are spaced linearly between
--min-mb and --max-mb (1 MB = 10**6 bytes) and flow i starts at 0.1 s + i * --stagger-ms.

TCP is DCTCP with ECN; every switch egress port runs a RED queue disc configured as
DCTCP's step marker: every packet is marked (never dropped early) while the
instantaneous queue exceeds K = 65 packets (QW 1, MinTh = MaxTh = K, Gentle off).
Hosts use a plain FIFO queue disc.

With --stop 0 (the default) the simulation runs until the event list is empty: each
BulkSend closes its socket after its last byte, so Run() returns once every flow is done.
The script prints one line per flow, ``flow <i> bytes <received bytes>``.
"""

import argparse

from ns import ns

from wormhole_ns3.models.fabric import queues
from wormhole_ns3.models.fabric.transport import MIB, TransportConfig

BASE_PORT = 5000
FIRST_START_S = 0.1
MB = 10**6
QUEUE_PACKETS = 2666
RED_THRESHOLD_PACKETS = 65


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=8, help="number of sender/receiver pairs")
    parser.add_argument("--min-mb", type=float, default=250, help="size of flow 0 in MB")
    parser.add_argument("--max-mb", type=float, default=500, help="size of the last flow in MB")
    parser.add_argument("--stagger-ms", type=float, default=4, help="start-time gap between flows")
    parser.add_argument("--rate", default="10Gbps", help="data rate of every link")
    parser.add_argument("--delay", default="10us", help="propagation delay of every link")
    parser.add_argument("--tcp", default="TcpDctcp",
                        help="ns-3 TCP congestion control (TcpDctcp, TcpNewReno, TcpCubic, ...)")
    parser.add_argument("--del-ack-count", type=int, default=1,
                        help="segments per delayed ACK (1: ACK every segment, as DCTCP "
                             "receivers do; 2: ns-3's default, which stalls flows that "
                             "start into a marked queue at cwnd 1 for 200 ms per segment)")
    parser.add_argument("--stop", type=float, default=0,
                        help="stop time in seconds; 0 runs until all flows finish")
    args = parser.parse_args()
    if args.flows < 1:
        parser.error("--flows must be at least 1")
    if args.min_mb < 0 or args.max_mb < args.min_mb:
        parser.error("need 0 <= --min-mb <= --max-mb")
    return args


def configure_tcp(del_ack_count, congestion_control="TcpDctcp"):
    """The demo's TCP: 1448-byte segments, 4 MiB buffers, ECN, ns-3's 1 s minimum RTO."""
    TransportConfig(congestion_control=congestion_control, segment_bytes=1448,
                    send_buffer_bytes=4 * MIB, receive_buffer_bytes=4 * MIB,
                    delayed_ack_count=del_ack_count, min_rto_ms=1000).apply(ns)


def build_topology(n_flows, rate, delay):
    """Create nodes, links, queue discs and addresses; return (senders, receivers, rx_addrs)."""
    senders = ns.NodeContainer()
    senders.Create(n_flows)
    receivers = ns.NodeContainer()
    receivers.Create(n_flows)
    switches = ns.NodeContainer()
    switches.Create(2)
    left, right = switches.Get(0), switches.Get(1)

    stack = ns.InternetStackHelper()
    stack.Install(senders)
    stack.Install(receivers)
    stack.Install(switches)
    stream = stack.AssignStreams(senders, 0)
    stream += stack.AssignStreams(receivers, stream)
    stream += stack.AssignStreams(switches, stream)

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
    p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
    red = queues.step_marking_red(ns, threshold_packets=RED_THRESHOLD_PACKETS,
                                  buffer_packets=QUEUE_PACKETS, link_rate=rate, link_delay=delay)
    fifo = queues.fifo(ns, QUEUE_PACKETS)
    addresses = ns.Ipv4AddressHelper()
    red_discs = []

    def connect(host, switch, subnet):
        """Link host <-> switch; RED on the switch port, FIFO on the host port."""
        devices = p2p.Install(host, switch)
        fifo.Install(devices.Get(0))
        red_discs.append(red.Install(devices.Get(1)).Get(0))
        addresses.SetBase(ns.Ipv4Address(subnet), ns.Ipv4Mask("255.255.255.0"))
        return addresses.Assign(devices)

    bottleneck = p2p.Install(left, right)
    discs = red.Install(bottleneck)
    red_discs.extend([discs.Get(0), discs.Get(1)])
    addresses.SetBase(ns.Ipv4Address("10.0.0.0"), ns.Ipv4Mask("255.255.255.0"))
    addresses.Assign(bottleneck)

    rx_addrs = []
    for i in range(n_flows):
        connect(senders.Get(i), left, f"10.1.{i}.0")
        interfaces = connect(receivers.Get(i), right, f"10.2.{i}.0")
        rx_addrs.append(interfaces.GetAddress(0))

    for disc in red_discs:
        stream += ns.DynamicCast[ns.RedQueueDisc](disc).AssignStreams(stream)

    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return senders, receivers, rx_addrs


def flow_bytes(i, n_flows, min_mb, max_mb):
    if n_flows == 1:
        return int(min_mb * MB)
    return int((min_mb + (max_mb - min_mb) * i / (n_flows - 1)) * MB)


def install_flows(senders, receivers, rx_addrs, args):
    """One BulkSend -> PacketSink pair per flow; return the sink applications."""
    sinks = []
    for i in range(args.flows):
        port = BASE_PORT + i
        sink_helper = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory",
            ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sink_apps = sink_helper.Install(receivers.Get(i))
        sink_apps.Start(ns.Seconds(0))
        sinks.append(ns.DynamicCast[ns.PacketSink](sink_apps.Get(0)))

        bulk = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(rx_addrs[i], port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(
            flow_bytes(i, args.flows, args.min_mb, args.max_mb)))
        bulk.SetAttribute("SendSize", ns.UintegerValue(1448))
        bulk_apps = bulk.Install(senders.Get(i))
        bulk_apps.Start(ns.Seconds(FIRST_START_S + i * args.stagger_ms / 1000.0))
    return sinks


def main():
    args = parse_args()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    configure_tcp(args.del_ack_count, args.tcp)

    senders, receivers, rx_addrs = build_topology(args.flows, args.rate, args.delay)
    sinks = install_flows(senders, receivers, rx_addrs, args)

    if args.stop > 0:
        ns.Simulator.Stop(ns.Seconds(args.stop))
    ns.Simulator.Run()

    for i, sink in enumerate(sinks):
        print(f"flow {i} bytes {sink.GetTotalRx()}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
