"""Training-like repetition on a star: every iteration, each host computes, then a ring
all-reduce runs over all hosts. The same contention episode repeats every iteration,
which is what the memo recognises and replays.

Prints every task's completion time (ns) and every iteration's time, then the totals.
"""

import argparse

from ns import ns

from star import star
from wormhole_ns3 import native
from wormhole_ns3.workloads import WorkloadBuilder
from wormhole_ns3.workloads.collectives import ring_allreduce
from wormhole_ns3.workloads.flowdag import WorkloadRun

native.load()  # the FlowDag model


def ring_workload(hosts, iterations, megabytes, compute_ms):
    builder = WorkloadBuilder("star-ring", hosts)
    end = None
    for _ in range(iterations):
        ready = {r: [builder.add_compute(r, compute_ms / 1e3, [] if end is None else [end])]
                 for r in range(hosts)}
        done = ring_allreduce(builder, list(range(hosts)), int(megabytes * 1e6), ready)
        end = builder.end_iteration([t for ids in done.values() for t in ids])
    return builder.build()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--mb", type=float, default=16, help="all-reduce size in MB")
    parser.add_argument("--compute-ms", type=float, default=2)
    parser.add_argument("--rate", default="10Gbps")
    args = parser.parse_args()
    workload = ring_workload(args.hosts, args.iterations, args.mb, args.compute_ms)
    finishes = {}
    run = WorkloadRun(ns, workload, star(args.hosts, args.rate),
                      on_finish=lambda task, start, finish: finishes.__setitem__(task, finish))
    run.start()
    ns.Simulator.Run()
    previous = 0.0
    for k, end in enumerate(workload.iteration_ends):
        print(f"iteration {k} time {finishes[end] - previous:.9f}")
        previous = finishes[end]
    print("tasks finished", run.finished_tasks, "of", len(workload.tasks))
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
