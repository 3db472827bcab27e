"""A flow dependency graph on a star of hosts: two long flows, an unrelated chain, and a
flow released (by a compute task) onto the long flows' links while they may be skipped.

    task 0  flow h0 -> h1, --long-mb
    task 1  compute on h2, 20 ms
    task 2  flow h2 -> h3, 20 MB, after task 1        (shares no link with task 0)
    task 3  compute on h2, 10 ms, after task 2
    task 4  flow h2 -> h1, 10 MB, after task 3        (shares h1's downlink with task 0)
    task 5  flow h3 -> h1, --long-mb                  (task 0's rival at h1's downlink)

Task 0 alone would meet no mark (every link is 10 Gbps: its queue is its own host's,
which marks nothing) and run packet by packet (``steady._cycle_unseen``); with its
rival, the two cycle at the switch's RED port and are skipped.

Prints each task's completion order and every flow's received bytes.
"""

import argparse

from ns import ns
from star import star

from wormhole_ns3.runtime import native

native.load()  # the FlowDag model


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--long-mb", type=float, default=60)
    args = parser.parse_args()
    h = star(4, "10Gbps", "10us")
    dag = ns.CreateObject[ns.FlowDag]()
    ms = ns.MilliSeconds
    dag.AddFlow(h[0], h[1], int(args.long_mb * 1e6), ms(0))
    dag.AddCompute(h[2], ms(20))
    dag.AddFlow(h[2], h[3], 20_000_000, ms(0))
    dag.AddDependency(2, 1)
    dag.AddCompute(h[2], ms(10))
    dag.AddDependency(3, 2)
    dag.AddFlow(h[2], h[1], 10_000_000, ms(0))
    dag.AddDependency(4, 3)
    dag.AddFlow(h[3], h[1], int(args.long_mb * 1e6), ms(0))
    order = []
    record = order.append  # the callbacks below only borrow it: keep it alive
    finish = ns.cppyy.gbl.std.function["void(unsigned int)"](record)
    dag.TraceConnectWithoutContext("Finish", ns.Callback["void", "unsigned int"](finish))
    dag.Start()
    ns.Simulator.Run()
    print("completion order", " ".join(map(str, order)))
    print("finished", dag.GetNFinished(), "of", dag.GetNTasks())
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
