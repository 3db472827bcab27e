"""A DCTCP flow joining and leaving two long ones on a dumbbell, in the same pattern every round.

The links never go idle (the long flows run throughout), so no contention
episode ever closes and the whole-episode memo has nothing to replay; but every
round's changes of the bottleneck's flow set (a flow joins the long ones, then
leaves) repeat, and so do their transients: what the transient memo
(``--transient-memo``) restores.

Senders 0 and 1 each send ``--long-mb`` from 0.1 s (two of them: a DCTCP flow
alone on these links fills its own host's queue, which marks nothing). In each
of ``--rounds`` rounds, ``--round-ms`` apart from 0.1 s + ``--first-ms``,
sender 2 sends ``--mb`` (a new BulkSend each round, on a port of its own).
Links are 10 Gbps, 10 us, as the demo's (``dctcp_dumbbell.py``). Prints
``flow <i> bytes <received>`` per sink.
"""

import argparse

from ns import ns

from wormhole_ns3.examples.dctcp_dumbbell import BASE_PORT, FIRST_START_S, MB, build_topology, configure_tcp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--round-ms", type=float, default=120.0)
    parser.add_argument("--first-ms", type=float, default=30.0, help="the first round's start after the long flows'")
    parser.add_argument("--mb", type=float, default=30.0, help="each joiner's size, MB")
    parser.add_argument("--long-mb", type=float, default=250.0)
    parser.add_argument("--rate", default="10Gbps")
    parser.add_argument("--delay", default="10us")
    args = parser.parse_args()

    configure_tcp(1)
    senders, receivers, rx_addrs = build_topology(3, args.rate, args.delay)
    sinks = []

    def flow(sender: int, port: int, size: int, start: float) -> None:
        helper = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                     ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        sink = helper.Install(receivers.Get(sender))
        sink.Start(ns.Seconds(0))
        sinks.append(ns.DynamicCast[ns.PacketSink](sink.Get(0)))
        bulk = ns.BulkSendHelper("ns3::TcpSocketFactory", ns.InetSocketAddress(rx_addrs[sender], port).ConvertTo())
        bulk.SetAttribute("MaxBytes", ns.UintegerValue(size))
        bulk.SetAttribute("SendSize", ns.UintegerValue(1448))
        bulk.Install(senders.Get(sender)).Start(ns.Seconds(start))

    flow(0, BASE_PORT, int(args.long_mb * MB), FIRST_START_S)
    flow(1, BASE_PORT, int(args.long_mb * MB), FIRST_START_S)
    for r in range(args.rounds):
        start = FIRST_START_S + (args.first_ms + r * args.round_ms) / 1000
        flow(2, BASE_PORT + 1 + r, int(args.mb * MB), start)
    ns.Simulator.Run()
    for i, sink in enumerate(sinks):
        print(f"flow {i} bytes {sink.GetTotalRx()}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
