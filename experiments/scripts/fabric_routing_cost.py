"""What routing costs per packet: a leaf-spine permutation run, timed, for one routing choice.

Every host of leaf l sends --mb MB over DCTCP to the host in the same position on
leaf (l + 1) % leaves, all starting at once, so every flow crosses the spines.
Prints the time to build the fabric (routes included), the Run() wall time, the
number of events and events per second. Compare ``--routing flow-hash-ecmp``
with ``--routing global`` (ns-3's Ipv4GlobalRouting, which walks its whole table
for every packet and takes the first equal-cost route, so every flow crosses
spine 0) or ``random-ecmp``.

    python experiments/scripts/fabric_routing_cost.py --routing global
"""

import argparse
import time

from ns import ns

from wormhole_ns3.models.fabric import LeafSpine, RoutingConfig, build_fabric
from wormhole_ns3.models.fabric.routing import ROUTING_KINDS
from wormhole_ns3.runtime import native

PORT = 5000


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--routing", choices=ROUTING_KINDS, default="flow-hash-ecmp")
    parser.add_argument("--leaves", type=int, default=4)
    parser.add_argument("--spines", type=int, default=4)
    parser.add_argument("--hosts-per-leaf", type=int, default=8)
    parser.add_argument("--mb", type=float, default=4, help="MB each host sends")
    return parser.parse_args()


def main():
    args = parse_args()
    native.load()
    spec = LeafSpine(leaves=args.leaves, spines=args.spines, hosts_per_leaf=args.hosts_per_leaf)
    started = time.perf_counter()
    fabric = build_fabric(ns, spec, routing=RoutingConfig(kind=args.routing))
    built = time.perf_counter() - started

    sinks = []
    for src in range(len(fabric.hosts)):
        dst = (src + args.hosts_per_leaf) % len(fabric.hosts)
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(
            ns.Ipv4Address.GetAny(), PORT).ConvertTo()).Install(fabric.hosts[dst])
        sinks.append(ns.DynamicCast[ns.PacketSink](sink.Get(0)))
        sender = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(
            fabric.host_address(dst), PORT).ConvertTo())
        sender.SetAttribute("MaxBytes", ns.UintegerValue(int(args.mb * 1e6)))
        sender.SetAttribute("SendSize", ns.UintegerValue(fabric.transport.segment_bytes))
        sender.Install(fabric.hosts[src]).Start(ns.Seconds(0))

    started = time.perf_counter()
    ns.Simulator.Run()
    wall = time.perf_counter() - started
    events = ns.Simulator.GetEventCount()
    delivered = sum(sink.GetTotalRx() for sink in sinks)
    print(fabric.describe())
    print(f"routing {args.routing}: build {built:.2f} s, run {wall:.2f} s, {events} events, "
          f"{events / wall:,.0f} events/s, {wall / events * 1e6:.2f} us/event, "
          f"{delivered} bytes delivered, simulated {ns.Simulator.Now().GetSeconds() * 1e3:.3f} ms")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
