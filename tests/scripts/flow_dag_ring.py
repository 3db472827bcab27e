"""Training-like repetition on a star: every iteration, each host computes, then a ring
all-reduce runs over all hosts. The same contention episode repeats every iteration,
which is what the memo recognises and replays.

With --rings R, R rings of --hosts hosts each run side by side on disjoint hosts: the
same episode R times at once.

With --intruder-iteration K, two more hosts exchange a flow of --intruder-mb MB as
iteration K begins, and its last byte starts a flow from host 0 to host 2, in the middle
of the all-reduce: a flow no record has, which nothing could foresee (it waits on a flow,
not on compute), so a memo replay of that step must diverge.

With --bridge-mb M (and --rings 2 or more), as the rings of an iteration end, host 0 of
each ring sends M MB to host 0 of the next ring, started by the last completions at both:
a flow on links two rings have just used (one recorded, one mirrored), while the last
ACKs and FINs of their transfers are still there.

With --results-dir, a ResultWriter appends every finished flow and iteration there
(the experiment runner's tests run this script as the "ring" experiment);
--crash-after-flows N raises inside the simulation when the N-th flow finishes,
before its row is written (a script that fails mid-run).

Prints every iteration's time, then how many tasks finished.
"""

import argparse
from pathlib import Path

from ns import ns
from star import star

from wormhole_ns3.models.workloads import WorkloadBuilder
from wormhole_ns3.models.workloads.collectives import ring_allreduce
from wormhole_ns3.models.workloads.flowdag import WorkloadRun
from wormhole_ns3.runtime import native
from wormhole_ns3.tools.experiment.results import ResultWriter

native.load()  # the FlowDag model


def ring_workload(hosts, iterations, megabytes, compute_ms, intruder_iteration=-1, intruder_mb=0.0,
                  rings=1, bridge_mb=0.0):
    outsiders = [hosts * rings, hosts * rings + 1] if intruder_iteration >= 0 else []
    builder = WorkloadBuilder("star-ring", hosts * rings + len(outsiders))
    end = None
    for k in range(iterations):
        previous = [] if end is None else [end]
        last = []
        finished_at = {}  # rank -> the tasks after which it is done with this iteration's all-reduce
        for ring in range(rings):
            members = list(range(ring * hosts, (ring + 1) * hosts))
            ready = {r: [builder.add_compute(r, compute_ms / 1e3, previous)] for r in members}
            done = ring_allreduce(builder, members, int(megabytes * 1e6), ready)
            finished_at.update(done)
            last += [t for ids in done.values() for t in ids]
        if bridge_mb:
            for ring in range(rings):
                src, dst = ring * hosts, (ring + 1) % rings * hosts
                last.append(builder.add_flow(src, dst, int(bridge_mb * 1e6), finished_at[src] + finished_at[dst],
                                             collective="bridge"))
        if k == intruder_iteration:
            outside = builder.add_flow(*outsiders, int(intruder_mb * 1e6), previous, collective="outsider")
            last.append(builder.add_flow(0, 2, int(megabytes * 1e6 / 4), [outside], collective="intruder"))
        end = builder.end_iteration(last)
    return builder.build()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=4, help="hosts per ring")
    parser.add_argument("--rings", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--mb", type=float, default=16, help="all-reduce size in MB")
    parser.add_argument("--compute-ms", type=float, default=2)
    parser.add_argument("--rate", default="10Gbps")
    parser.add_argument("--tcp", default="TcpDctcp")
    parser.add_argument("--intruder-iteration", type=int, default=-1)
    parser.add_argument("--intruder-mb", type=float, default=6.0)
    parser.add_argument("--bridge-mb", type=float, default=0.0)
    parser.add_argument("--results-dir", type=Path)
    parser.add_argument("--crash-after-flows", type=int)
    args = parser.parse_args()
    workload = ring_workload(args.hosts, args.iterations, args.mb, args.compute_ms,
                             args.intruder_iteration, args.intruder_mb, args.rings, args.bridge_mb)
    writer = ResultWriter(args.results_dir, workload) if args.results_dir else None
    finishes = {}
    flows_done = []

    def finished(task, start, finish):
        finishes[task] = finish
        if workload.tasks[task].kind == "flow":
            flows_done.append(task)
            if len(flows_done) == args.crash_after_flows:
                raise RuntimeError(f"crash asked for after {len(flows_done)} flows")
        if writer is not None:
            writer.task_finished(task, start, finish)

    run = WorkloadRun(ns, workload, star(workload.ranks, args.rate, tcp=args.tcp), on_finish=finished)
    run.start()
    ns.Simulator.Run()
    previous = 0.0
    for k, end in enumerate(workload.iteration_ends):
        print(f"iteration {k} time {finishes[end] - previous:.9f}")
        previous = finishes[end]
    print("tasks finished", run.finished_tasks, "of", len(workload.tasks))
    ns.Simulator.Destroy()
    if writer is not None:
        writer.close()


if __name__ == "__main__":
    main()
