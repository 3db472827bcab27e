"""DCTCP flows on a dumbbell, a third joining two and leaving, every round alike but for the joiner's offset.

Each round is an episode (it opens on idle links and closes when its flows end),
but none repeats: the joiner starts ``--drift-ms`` later in each round than in
the one before, so the whole-episode memo records every round and replays none.
Their transients repeat all the same: once the joiner has left, the two long
flows converge from alike states (within the key's buckets) every round. That is
what the transient memo (``--transient-memo``) restores.

In each of ``--rounds`` rounds, ``--round-ms`` apart from 0.1 s, senders 0 and 1
each send ``--long-mb`` (two flows: a DCTCP flow alone on these links fills its
own host's queue, which marks nothing), and sender 2 sends ``--mb`` from
``--join-ms`` (+ ``--drift-ms`` a round) after them; new BulkSends each round, on
ports of their own. Links are 10 Gbps, 10 us, as the demo's
(``dctcp_dumbbell.py``). Prints ``flow <i> bytes <received>`` per sink.
"""

import argparse

from ns import ns

from wormhole_ns3.examples.dctcp_dumbbell import BASE_PORT, FIRST_START_S, MB, build_topology, configure_tcp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--round-ms", type=float, default=320.0)
    parser.add_argument("--join-ms", type=float, default=30.0, help="the joiner's start after the long flows'")
    parser.add_argument("--drift-ms", type=float, default=1.0, help="how much later the joiner starts each round")
    parser.add_argument("--mb", type=float, default=60.0, help="the joiner's size, MB")
    parser.add_argument("--long-mb", type=float, default=150.0, help="each long flow's size, MB")
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

    for r in range(args.rounds):
        start = FIRST_START_S + r * args.round_ms / 1000
        flow(0, BASE_PORT + 3 * r, int(args.long_mb * MB), start)
        flow(1, BASE_PORT + 3 * r + 1, int(args.long_mb * MB), start)
        flow(2, BASE_PORT + 3 * r + 2, int(args.mb * MB), start + (args.join_ms + r * args.drift_ms) / 1000)
    ns.Simulator.Run()
    for i, sink in enumerate(sinks):
        print(f"flow {i} bytes {sink.GetTotalRx()}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
