r"""RDMA dumbbell: flows of different sizes arriving one after another on one bottleneck.

Topology (a two-leaf fabric with one spine, every link --rate-gbps and --delay-us)::

    host 0   --\                          /-- host N
    host 1   ---+-- leaf 0 == spine == leaf 1 --+-- host N+1
      ...      /                              \     ...
    host N-1                                    host 2N-1

Flow i is one RDMA WRITE (a queue pair of RdmaFlowHelper) from host i to host N + i; its
size is spaced linearly between --min-mb and --max-mb (1 MB = 10**6 bytes) and it starts
at --start-us + i * --stagger-us. All flows share leaf 0's uplink and the spine's port
to leaf 1. Hosts run RoCEv2 with DCQCN (or --cc hpcc), switches DCQCN's RED marking
(wormhole_ns3.models.fabric.RdmaTransportConfig).

Prints one line per flow, ``flow <i> bytes <delivered> fct_us <fct>``, after a single
Simulator::Run() that ends when every flow is done.
"""

import argparse

from wormhole_ns3.models.fabric import LeafSpine, RdmaTransportConfig, build_fabric
from wormhole_ns3.runtime import native
from wormhole_ns3.runtime.loader import install_ns_module

MB = 10**6


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=4, help="number of sender/receiver pairs")
    parser.add_argument("--min-mb", type=float, default=20, help="size of flow 0 in MB")
    parser.add_argument("--max-mb", type=float, default=40, help="size of the last flow in MB")
    parser.add_argument("--start-us", type=float, default=10, help="start of flow 0")
    parser.add_argument("--stagger-us", type=float, default=500, help="start-time gap between flows")
    parser.add_argument("--rate-gbps", type=float, default=100, help="rate of every link")
    parser.add_argument("--delay-us", type=float, default=1, help="propagation delay of every link")
    parser.add_argument("--cc", choices=("dcqcn", "hpcc"), default="dcqcn",
                        help="congestion control of every queue pair")
    args = parser.parse_args(argv)
    if args.flows < 1:
        parser.error("--flows must be at least 1")
    if not 0 < args.min_mb <= args.max_mb:
        parser.error("need 0 < --min-mb <= --max-mb")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    ns = install_ns_module()
    native.load()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    spec = LeafSpine(leaves=2, hosts_per_leaf=args.flows, spines=1, oversubscription=args.flows,
                     rate_gbps=args.rate_gbps, delay_us=args.delay_us)
    fabric = build_fabric(ns, spec, transport=RdmaTransportConfig(congestion_control=args.cc))
    helper = ns.RdmaFlowHelper()
    n = args.flows
    for i in range(n):
        share = i / (n - 1) if n > 1 else 0.0
        size = int((args.min_mb + share * (args.max_mb - args.min_mb)) * MB)
        start = ns.NanoSeconds(round((args.start_us + i * args.stagger_us) * 1000))
        helper.AddFlow(fabric.hosts[i], fabric.hosts[n + i], size, start)
    ns.Simulator.Run()
    for i in range(n):
        qp = helper.GetFlow(i)
        fct = (qp.GetFinishTime() - qp.GetStartTime()).GetNanoSeconds() / 1000 if qp.IsFinished() else None
        print(f"flow {i} bytes {int(qp.GetDeliveredBytes())} fct_us {fct}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
