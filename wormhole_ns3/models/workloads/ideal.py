"""When each task of a workload would run on an ideal network: a lower bound to check graphs against.

Every flow gets the full ``bandwidth`` from its start (no contention, no
slow start) plus a fixed ``latency``; compute tasks take their duration. A
task starts when its last prerequisite finishes (a flow ``duration`` later).
The generators' schedules can be checked against closed forms this way, and
a flow's ideal time is its "standalone" FCT for slowdown reports.
"""

from __future__ import annotations

from dataclasses import dataclass

from wormhole_ns3.models.workloads.dag import FLOW, Workload


@dataclass(frozen=True)
class IdealSchedule:
    start: tuple[float, ...]  #: per task id, seconds
    finish: tuple[float, ...]
    iteration_ends: tuple[float, ...]  #: finish time of each iteration's end task

    @property
    def iteration_times(self) -> list[float]:
        """Duration of each iteration: from the previous iteration's end (or 0) to its own."""
        ends = self.iteration_ends
        return [end - (ends[k - 1] if k else 0.0) for k, end in enumerate(ends)]


def ideal_schedule(workload: Workload, bandwidth_bps: float, latency_s: float = 0.0) -> IdealSchedule:
    if bandwidth_bps <= 0 or latency_s < 0:
        raise ValueError(f"bandwidth must be > 0 and latency >= 0, got {bandwidth_bps}, {latency_s}")
    start: list[float] = []
    finish: list[float] = []
    for task in workload.tasks:
        ready = max((finish[d] for d in task.deps), default=0.0)
        if task.kind == FLOW:
            begin = ready + task.duration
            end = begin + latency_s + task.bytes * 8 / bandwidth_bps
        else:
            begin = ready
            end = begin + task.duration
        start.append(begin)
        finish.append(end)
    return IdealSchedule(tuple(start), tuple(finish), tuple(finish[e] for e in workload.iteration_ends))
