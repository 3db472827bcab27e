"""A small training-like experiment for the runner's tests: ring all-reduces on a star of hosts.

Every iteration computes on each rank for --compute-ms, then all-reduces
--mb MB over a ring of all --ranks ranks (2(N-1) steps of one flow per rank),
and ends when every rank is done. The workload runs on a FlowDag; with
--results-dir its flows and iterations are written there by a ResultWriter as
they finish. --crash-after-flows N raises inside the simulation after N
flows (a script that fails mid-run). Prints how many tasks finished.
"""

import argparse
from pathlib import Path

from flow_dag_star import star
from ns import ns

from wormhole_ns3 import native
from wormhole_ns3.experiment.results import ResultWriter
from wormhole_ns3.workloads import WorkloadBuilder, ring_allreduce

native.load()  # the FlowDag model


def ring_workload(ranks, size, iterations, compute_s):
    builder = WorkloadBuilder("ring", ranks, {"size": size})
    ready = {rank: () for rank in range(ranks)}
    for _ in range(iterations):
        computed = {r: (builder.add_compute(r, compute_s, ready[r], phase="forward"),) for r in range(ranks)}
        done = ring_allreduce(builder, list(range(ranks)), size, computed, group="dp", phase="backward")
        end = builder.end_iteration([task for tasks in done.values() for task in tasks])
        ready = {rank: (end,) for rank in range(ranks)}
    return builder.build()


def flow_dag(workload, hosts):
    dag = ns.CreateObject[ns.FlowDag]()
    for task in workload.tasks:
        if task.kind == "flow":
            dag.AddFlow(hosts[task.src], hosts[task.dst], task.bytes, ns.Seconds(task.duration))
        else:
            dag.AddCompute(hosts[task.src], ns.Seconds(task.duration))
        for dep in task.deps:
            dag.AddDependency(task.id, dep)
    return dag


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ranks", type=int, default=3)
    parser.add_argument("--mb", type=float, default=6)
    parser.add_argument("--iterations", type=int, default=1)
    parser.add_argument("--compute-ms", type=float, default=1)
    parser.add_argument("--delay", default="10us", help="of every link")
    parser.add_argument("--results-dir", type=Path)
    parser.add_argument("--crash-after-flows", type=int)
    args = parser.parse_args()
    if args.ranks < 2:
        parser.error("--ranks must be at least 2")
    workload = ring_workload(args.ranks, int(args.mb * 1e6), args.iterations, args.compute_ms / 1e3)
    hosts = star(args.ranks, "10Gbps", args.delay)
    dag = flow_dag(workload, hosts)
    if args.crash_after_flows:  # connected first: the crashing flow gets no row
        flows_done = []

        def crash(task):
            flows_done.extend([task] if dag.IsFlow(task) else [])
            if len(flows_done) == args.crash_after_flows:
                raise RuntimeError(f"crash asked for after {len(flows_done)} flows")

        callback = ns.cppyy.gbl.std.function["void(unsigned int)"](crash)  # kept alive until the run ends
        dag.TraceConnectWithoutContext("Finish", ns.Callback["void", "unsigned int"](callback))
    writer = ResultWriter(args.results_dir, workload) if args.results_dir else None
    if writer is not None:
        writer.follow(dag)
    dag.Start()
    ns.Simulator.Run()
    print("finished", dag.GetNFinished(), "of", dag.GetNTasks(), "tasks")
    ns.Simulator.Destroy()
    if writer is not None:
        writer.close()


if __name__ == "__main__":
    main()
