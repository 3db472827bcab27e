"""The accelerator of a whole process: a fresh Controller for each simulation, one report of them all.

A script may build a simulation, run it, ``Simulator::Destroy()`` it and build
another; ns-3's own test suites do so in every test case. Everything a controller
learns about a simulation (its flows, partitions and tag classes, the memo's open
episodes and gated starts, the monitors on its ports) names nodes, links and events
that Destroy frees, and the next simulation numbers its nodes, links and tags from
0 again. So each simulation gets a controller of its own, made when the one before
is destroyed: the next simulation starts from the state the first one did, by
construction rather than by resetting every field. What belongs to the process
stays: the memo store, the error guard's verdicts, the profile, and the report,
which joins the simulations' reports (``SimulationReport.combine``).

The session also notices a ``Simulator::Run()`` that no controller saw: one under a
simulator implementation the script selected itself (``GlobalValue::Bind``,
``--SimulatorImplementationType=``). It ran plainly; the report says so
(``fallback``) rather than calling the run accelerated.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

from wormhole_ns3.accel.controller import Controller, RunSnapshot
from wormhole_ns3.core.flows import FlowResult
from wormhole_ns3.core.trace import SkipRecord
from wormhole_ns3.memo.decisions import MemoStats
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.runtime.queues import PortQueue


@dataclass(frozen=True)
class SimulationReport:
    """What one simulation (or, combined, a whole process) produced: all a result file needs of it.

    Flow ids are the tracker's of that simulation; ``combine`` numbers them on
    across simulations, and each flow and port says which simulation it was in.
    """

    runs: int
    run_wall: float
    snapshot: RunSnapshot | None
    skips: tuple[SkipRecord, ...]
    reverts: int
    packet_level_time: dict[str, float]
    #: flow id -> why it had to run packet by packet
    unskippable: dict[int, str]
    fallback: tuple[str, ...]
    watchdog: tuple[str, ...]
    sample_period: float | None
    memo: MemoStats | None
    trace: tuple[SkipRecord, ...]
    #: An exception a callback of the accelerator raised: the results are not valid.
    error: BaseException | None

    @classmethod
    def of(cls, controller: Controller) -> SimulationReport:
        return cls(
            runs=controller.runs,
            run_wall=controller.run_wall,
            snapshot=controller.last_run,
            skips=tuple(controller.skips),
            reverts=controller.reverts,
            packet_level_time={str(why): t for why, t in controller.packet_level_time.items()},
            unskippable={f: why for f in controller.flows if (why := controller.skip_blocker(f))},
            fallback=(controller.fallback,) if controller.fallback else (),
            watchdog=(controller.watchdog,) if controller.watchdog else (),
            sample_period=controller.sample_period,
            memo=controller.memo.stats if controller.memo is not None else None,
            trace=tuple(controller.trace_records()),
            error=controller.error,
        )

    @property
    def flow_count(self) -> int:
        """Flows the simulation's tracker numbered (those its last Run() knew of)."""
        return len(self.snapshot.flows) if self.snapshot is not None else 0

    @classmethod
    def combine(cls, reports: list[SimulationReport], unobserved: list[str] | None = None) -> SimulationReport:
        """The process's report: counts summed, flows numbered on, simulated times laid end to end.

        ``unobserved`` names the implementation of each Run() no controller saw.
        """
        unobserved = unobserved or []
        if len(reports) == 1 and not unobserved:
            return reports[0]
        offsets, offset = [], 0
        for report in reports:
            offsets.append(offset)
            offset += report.flow_count
        packet_level: dict[str, float] = {}
        for report in reports:
            for why, t in report.packet_level_time.items():
                packet_level[why] = packet_level.get(why, 0.0) + t
        return cls(
            runs=sum(r.runs for r in reports),
            run_wall=sum(r.run_wall for r in reports),
            snapshot=_combined_snapshot(reports, offsets),
            skips=tuple(_renumbered(s, o) for r, o in zip(reports, offsets) for s in r.skips),
            reverts=sum(r.reverts for r in reports),
            packet_level_time=packet_level,
            unskippable={f + o: why for r, o in zip(reports, offsets) for f, why in r.unskippable.items()},
            fallback=tuple(dict.fromkeys([*(f for r in reports for f in r.fallback),
                                          *_unobserved_fallback(unobserved)])),
            watchdog=tuple(w for r in reports for w in r.watchdog),
            sample_period=next((r.sample_period for r in reversed(reports) if r.sample_period), None),
            memo=_summed_stats([r.memo for r in reports if r.memo is not None]),
            trace=tuple(_renumbered(s, o) for r, o in zip(reports, offsets) for s in r.trace),
            error=next((r.error for r in reports if r.error is not None), None),
        )


def _renumbered(record: SkipRecord, offset: int) -> SkipRecord:
    return replace(record, flow_ids=tuple(f + offset for f in record.flow_ids)) if offset else record


def _unobserved_fallback(implementations: list[str]) -> list[str]:
    """The fallback reason of Run() calls under an implementation the script selected (one per implementation)."""
    counts = {name: implementations.count(name) for name in dict.fromkeys(implementations)}
    return [f"{n} Simulator::Run() call{'s' if n > 1 else ''} ran under {name}, which the script selected "
            f"(GlobalValue::Bind, --SimulatorImplementationType or NS_GLOBAL_VALUE): "
            f"{'they were' if n > 1 else 'it was'} not accelerated" for name, n in counts.items()]


def _summed_stats(stats: list[MemoStats]) -> MemoStats | None:
    if not stats:
        return None
    return MemoStats(**{f.name: sum(getattr(s, f.name) for s in stats) for f in fields(MemoStats)})


def _combined_snapshot(reports: list[SimulationReport], offsets: list[int]) -> RunSnapshot | None:
    """One snapshot of every simulation that ran: each simulation's times follow the one before's end."""
    ran = [(i, r.snapshot, o) for i, (r, o) in enumerate(zip(reports, offsets)) if r.snapshot is not None]
    if not ran:
        return None
    flows: list[FlowResult] = []
    queues: list[PortQueue] | None = None
    timeline: list[tuple[float, int]] | None = None
    time_before, events_before = 0.0, 0
    for index, snapshot, offset in ran:
        flows += [replace(f, id=f.id + offset, simulation=index) for f in snapshot.flows]
        if snapshot.queues is not None:
            queues = (queues or []) + [replace(q, simulation=index) for q in snapshot.queues]
        if snapshot.event_timeline is not None:
            timeline = (timeline or []) + [(time_before + t, events_before + n) for t, n in snapshot.event_timeline]
        time_before += snapshot.sim_time
        events_before += snapshot.events
    return RunSnapshot(
        events=events_before,
        system_events=sum(s.system_events for _, s, _ in ran),
        sim_time=time_before,
        flows=flows,
        queues=queues,
        event_timeline=timeline,
    )


class Session:
    """The process's controllers: the running simulation's, and the reports of those destroyed.

    ``make_controller`` makes a controller for the next simulation (not attached);
    the session attaches it, hands it the error guard of the one before (a kind of
    decision the guard stopped stays stopped for the process), and replaces it when
    its simulation is destroyed.
    """

    def __init__(self, make_controller: Callable[..., Controller], memo_store: MemoStore | None = None,
                 unobserved_runs: Callable[[], list[str]] = list) -> None:
        """``unobserved_runs`` tells the implementation of each Run() no controller saw (``watch_runs``)."""
        self._make = make_controller
        self.memo_store = memo_store
        self._unobserved_runs = unobserved_runs
        self._finished: list[SimulationReport] = []
        self.controller = self._start()

    def _start(self, previous: Controller | None = None) -> Controller:
        controller = self._make(after_destroy=self._destroyed)
        if previous is not None:
            controller.guard = previous.guard
        controller.attach()
        return controller

    def _destroyed(self) -> None:
        """Simulator::Destroy(): keep the simulation's report; the next simulation gets a fresh controller."""
        ended = self.controller
        self._finished.append(SimulationReport.of(ended))
        self.controller = self._start(previous=ended)

    def report(self) -> SimulationReport:
        """The process's report so far: every destroyed simulation's and the running one's."""
        current = SimulationReport.of(self.controller)
        reports = self._finished + ([current] if current.runs or not self._finished else [])
        return SimulationReport.combine(reports, self._unobserved_runs())

    @property
    def error(self) -> BaseException | None:
        """The first exception an accelerator callback raised in any simulation: results are not valid."""
        return next((r.error for r in self._finished if r.error is not None), None) or self.controller.error

    def say_fallback(self, report: SimulationReport) -> None:
        """Tell the user, on stderr, each reason some of the run was not what its mode says."""
        for reason in report.fallback:
            print(f"wormhole-ns3: fallback: {reason}", file=sys.stderr, flush=True)

    def close(self) -> None:
        """Close the memo store, after the script's last simulation."""
        self.controller.close()

    # what a script that enabled the accelerator (api.enable) reads of it
    @property
    def skips(self) -> tuple[SkipRecord, ...]:
        return self.report().skips

    @property
    def last_run(self) -> RunSnapshot | None:
        return self.report().snapshot

    def flow_results(self) -> list[FlowResult]:
        snapshot = self.report().snapshot
        return snapshot.flows if snapshot is not None else []


def watch_runs(ns: Any) -> Callable[[], list[str]]:
    """Route the script's ``Simulator.Run()`` through ``RunObserver::RunWatched``; return the reader of what it saw.

    A Run() under an implementation the script selected announces itself to no
    controller: RunWatched keeps its implementation's name. C++ programs are
    linked so that their calls go the same way (``runtime.cxx``).
    """
    observer = ns.RunObserver
    ns.Simulator.Run = staticmethod(lambda: observer.RunWatched())
    return lambda: [str(name) for name in observer.GetUnobservedRuns()]
