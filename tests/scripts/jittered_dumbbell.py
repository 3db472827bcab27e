"""Flows that meet at a bottleneck at random times: an outcome that depends on ns-3's random streams.

--flows hosts of a star each send --mb MB to one more host, DCTCP with a RED step
marker at every switch port; flow k starts at k * --stagger-ms plus a jitter a
UniformRandomVariable draws in [0, --jitter-ms]. Under another RngRun the jitters
differ, the flows overlap for other spans, and their completion times move.
--pin-run K calls RngSeedManager.SetRun(K), as scripts that fix their own run do.

Prints each flow's start time and the bytes its sink received.
"""

import argparse

from ns import ns
from star import star

PORT = 5000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=3)
    parser.add_argument("--mb", type=float, default=3)
    parser.add_argument("--stagger-ms", type=float, default=1.0)
    parser.add_argument("--jitter-ms", type=float, default=2.0)
    parser.add_argument("--pin-run", type=int, default=0, help="RngSeedManager.SetRun(K); 0: leave it")
    args = parser.parse_args()
    if args.pin_run:
        ns.RngSeedManager.SetRun(args.pin_run)
    hosts = star(args.flows + 1)
    receiver = hosts[-1].GetObject[ns.Ipv4]().GetAddress(1, 0).GetLocal()
    jitter = ns.CreateObject[ns.UniformRandomVariable]()
    jitter.SetAttribute("Min", ns.DoubleValue(0.0))
    jitter.SetAttribute("Max", ns.DoubleValue(args.jitter_ms * 1e-3))
    sinks, starts = [], []
    for k in range(args.flows):
        address = ns.InetSocketAddress(receiver, PORT + k).ConvertTo()
        sink = ns.PacketSinkHelper("ns3::TcpSocketFactory",
                                   ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT + k).ConvertTo())
        sinks.append(ns.DynamicCast[ns.PacketSink](sink.Install(hosts[-1]).Get(0)))
        sender = ns.BulkSendHelper("ns3::TcpSocketFactory", address)
        sender.SetAttribute("MaxBytes", ns.UintegerValue(int(args.mb * 1e6)))
        start = k * args.stagger_ms * 1e-3 + jitter.GetValue()
        sender.Install(hosts[k]).Start(ns.Seconds(start))
        starts.append(start)
    ns.Simulator.Run()
    for k, (start, sink) in enumerate(zip(starts, sinks)):
        print(f"flow {k} start {start:.9f} s received {sink.GetTotalRx()} bytes")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
