"""flow_dag_ring.py's training-like repetition over RDMA: every iteration each host computes,
then a ring all-reduce of queue pairs (a FlowDag with the Rdma transport) runs over a star
of RoCEv2 hosts (DCQCN, or --cc hpcc) around one switch with DCQCN's ECN marking.

--intruder-iteration K adds, in iteration K, a flow from host 0 to host 2 released when a
flow of --intruder-mb between two outside hosts, started with the iteration, arrives.
Prints every iteration's time, then how many tasks finished and every flow task's FCT in ns (task, FCT).
"""

import argparse

from flow_dag_ring import ring_workload
from ns import ns
from star import star

from wormhole_ns3.models.fabric import RdmaTransportConfig
from wormhole_ns3.models.workloads.flowdag import WorkloadRun
from wormhole_ns3.runtime import native

native.load()  # the FlowDag and RDMA models


def rdma_star(hosts, rate, delay, cc):
    """star.py's star with RoCEv2 hosts and DCQCN's marking at the switch; return the hosts."""
    nodes = star(hosts, rate, delay)
    switch = nodes[0].GetDevice(1).GetChannel().GetDevice(1).GetNode()
    nic = ns.RdmaHelper()
    nic.SetNicAttribute("CongestionControl", ns.TypeIdValue(ns.TypeId.LookupByName(f"ns3::Rdma{cc}")))
    for node in nodes:
        nic.Install(node)  # replaces the host's queue disc
    marking = ns.RdmaSwitchHelper()
    if cc == "Hpcc":
        marking.EnableTelemetry()
    ns.RdmaSwitchHelper.AssignStreams(marking.Install(switch), 100)  # replaces star's RED
    return nodes


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--mb", type=float, default=16, help="all-reduce size in MB")
    parser.add_argument("--compute-ms", type=float, default=0.5)
    parser.add_argument("--rate", default="100Gbps")
    parser.add_argument("--delay", default="1us")
    parser.add_argument("--cc", choices=("Dcqcn", "Hpcc"), default="Dcqcn")
    parser.add_argument("--intruder-iteration", type=int, default=-1)
    parser.add_argument("--intruder-mb", type=float, default=4.0)
    args = parser.parse_args()
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    workload = ring_workload(args.hosts, args.iterations, args.mb, args.compute_ms,
                             args.intruder_iteration, args.intruder_mb)
    if args.cc == "Hpcc":
        ns.Config.SetDefault("ns3::RdmaHpcc::BaseRtt", ns.TimeValue(ns.MicroSeconds(5)))
    finishes = {}
    hosts = rdma_star(workload.ranks, args.rate, args.delay, args.cc)
    run = WorkloadRun(ns, workload, hosts, transport=RdmaTransportConfig(),
                      on_finish=lambda task, start, finish: finishes.__setitem__(task, (start, finish)))
    run.start()
    ns.Simulator.Run()
    previous = 0.0
    for k, end in enumerate(workload.iteration_ends):
        print(f"iteration {k} time {finishes[end][1] - previous:.9f}")
        previous = finishes[end][1]
    print("tasks finished", run.finished_tasks, "of", len(workload.tasks))
    for task in workload.flows:
        start, finish = finishes[task.id]
        print("flow", task.id, round((finish - start) * 1e9))
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
