"""Run a Workload in ns-3: its tasks become an ns3::FlowDag on a fabric's hosts.

The FlowDag (a C++ model of the shim) starts each flow when its
prerequisites are done (a BulkSend, or an RDMA queue pair with a fabric's RDMA
transport) and times compute tasks, so the whole graph runs inside ns-3 with
one Python call per task *completion* (for the results), none per packet.
Task ids are kept: FlowDag task i is workload task i.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wormhole_ns3.models.workloads.dag import FLOW, Workload

#: Called with (task id, start s, finish s) when a task completes.
TaskFinished = Callable[[int, float, float], None]


class WorkloadRun:
    """A workload installed on ns-3 nodes; keep it alive until the simulation is over."""

    def __init__(self, ns, workload: Workload, hosts: Sequence, on_finish: TaskFinished | None = None,
                 send_size: int | None = None, transport=None) -> None:
        """``transport`` (a fabric ``Transport``) chooses how flows carry bytes; TCP sockets if None."""
        if len(hosts) < workload.ranks:
            raise ValueError(
                f"workload {workload.name!r} needs {workload.ranks} hosts, the fabric has {len(hosts)}"
            )
        self.ns = ns
        self.workload = workload
        self.dag = ns.CreateObject[ns.FlowDag]()
        if transport is not None:
            transport.configure_flows(ns, self.dag)
        if send_size is not None:
            self.dag.SetAttribute("SendSize", ns.UintegerValue(send_size))
        seconds = ns.Seconds
        for task in workload.tasks:
            if task.kind == FLOW:
                self.dag.AddFlow(hosts[task.src], hosts[task.dst], task.bytes, seconds(task.duration))
            else:
                self.dag.AddCompute(hosts[task.src], seconds(task.duration))
            for dep in task.deps:
                self.dag.AddDependency(task.id, dep)
        self._on_finish = on_finish
        # the callbacks only borrow these: they must live as long as the run
        self._record = self._finished
        self._function = ns.cppyy.gbl.std.function["void(unsigned int)"](self._record)
        self._callback = ns.Callback["void", "unsigned int"](self._function)
        self.dag.TraceConnectWithoutContext("Finish", self._callback)

    def start(self) -> None:
        """Release the tasks that depend on nothing (at the current simulation time)."""
        self.dag.Start()

    def _finished(self, task: int) -> None:
        if self._on_finish is not None:
            self._on_finish(int(task), self.start_time(int(task)), self.dag.GetFinishTime(task).GetSeconds())

    def start_time(self, task: int) -> float:
        """When a task started, in seconds: a flow at its release plus its delay, a compute task at its release."""
        return float(self.dag.GetStartTime(task).GetSeconds())

    @property
    def finished_tasks(self) -> int:
        return int(self.dag.GetNFinished())
