"""The accelerator of one simulation: where ns-3 calls in, and what it is handed to.

C++ calls the controller per flow event and per rate sample, never per packet
(counting, sampling and tagging events happen in the shim's FlowTracker and
WormholeSimulatorImpl). Every such callback is a method here, and each passes
the call on to the part that owns its idea:

* ``partitioner.py``: the partitions of the active flows, as flows come and go;
* ``arrivals.py``: the flows created and not yet sending, and the links they will load;
* ``skip_engine.py``: at each sample, which partitions skip and how far (where a skip is decided);
* ``skipper.py``: a skip made, ended, or cut short (skip-back), and the trace's rows;
* ``verify.py``: the error guard's forked checks (``--verify``);
* ``memo/driver.py``: the memo, which decides every flow's start.

What stays here is the run's lifecycle (Run() starting and ending, the
simulator destroyed), the monitors, the progress line, and what the memo
driver asks of the run (``memo.driver.MemoRun``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from wormhole_ns3.accel.arrivals import Arrivals
from wormhole_ns3.accel.network import Network
from wormhole_ns3.accel.packet_level import PacketLevel
from wormhole_ns3.accel.partitioner import DRAIN_RTTS, Partitioner, PartitionState
from wormhole_ns3.accel.skip_engine import SkipEngine
from wormhole_ns3.accel.skipper import Skipper
from wormhole_ns3.accel.transients import RunTransients
from wormhole_ns3.accel.verify import Guard, PendingCheck, Verifier
from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.core.backoff import Ledger
from wormhole_ns3.core.flows import FlowInfo, FlowResult
from wormhole_ns3.core.ports import (
    BoundaryPort,
    MemoSimulatorPort,
    MemoTrackerPort,
    QueueMonitorPort,
    RttMonitorPort,
)
from wormhole_ns3.core.shortcuts import GuardKind
from wormhole_ns3.core.trace import SkipRecord, TraceKind
from wormhole_ns3.memo.driver import MemoDriver
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.runtime.boundary import Boundary, read_flow, read_outcome
from wormhole_ns3.runtime.queues import PortQueue, port_queues
from wormhole_ns3.runtime.rtt import rtt_bins

PENDING, ACTIVE, FINISHED = 0, 1, 2


@dataclass(frozen=True)
class RunSnapshot:
    """The state of a run when Simulator::Run() returned."""

    events: int
    system_events: int
    sim_time: float
    flows: list[FlowResult]
    #: Every port's queue occupancy (``--queues``), None when not measured.
    queues: list[PortQueue] | None = None
    #: (simulated time s, events executed before it), a few hundred instants and the end
    #: (WormholeSimulatorImpl::GetEventTimeline); None for a run not accelerated.
    event_timeline: list[tuple[float, int]] | None = None



class Controller:
    """Drives one ns-3 run: observes its flows and, when accelerating, skips steady partitions."""

    def __init__(
        self,
        ns3,
        config: AcceleratorConfig,
        accelerate: bool,
        progress: bool = False,
        memo: MemoStore | None = None,
        memo_context: str = "",
        *,
        tracker: MemoTrackerPort | None = None,
        boundary: BoundaryPort | None = None,
        after_destroy: Callable[[], None] | None = None,
    ) -> None:
        """``tracker`` and ``boundary`` default to a new FlowTracker and the cppyy boundary of ``ns3``;
        ``after_destroy`` is called once the simulation this controller ran is destroyed."""
        self.ns3 = ns3
        self._after_destroy = after_destroy
        self.config = config
        self.accelerate = accelerate and config.enabled
        self.progress = progress
        self._memo_store, self._memo_context = memo, memo_context
        #: Replays recorded episodes when a memo store is given (see memo/driver.py).
        self.memo: MemoDriver | None = None
        #: Callbacks C++ calls (they must outlive the run), vectors it takes, the warm-up.
        self.boundary: BoundaryPort = boundary if boundary is not None else Boundary(ns3)
        self.network = Network(ns3, self.boundary.cxx(
            tracker if tracker is not None else ns3.CreateObject[ns3.FlowTracker]()), config.fidelity)
        self.arrivals = Arrivals(self.network)
        self.partitioner = Partitioner(self.network, config.skip_cubic, config.keep_undisturbed)
        self.verifier = Verifier(self.network)
        self.skipper = Skipper(self.network, self.partitioner, self.watch_unattributed_events)
        #: What the run's bets (judgements, recordings) cost against what its shortcuts saved.
        self.ledger = Ledger()
        self.skip_engine = SkipEngine(config, self.network, self.partitioner, self.arrivals, self.skipper,
                                      self.verifier, self.ledger, self.events_saved)
        self.run_wall = 0.0
        self.runs = 0
        self._run_started = 0.0
        self._last_progress = 0.0
        self._attached = False
        #: whether the tracker reports unattributed events that created nothing (FlowTracker's default)
        self._unattributed_watched = True
        #: Why a run that asked to be accelerated ran plainly, if it did.
        self.fallback: str | None = None
        #: Snapshot taken when the last Run() returned (Destroy() frees the models).
        self.last_run: RunSnapshot | None = None
        #: Why the watchdog ended a Run(), if it did (see WormholeSimulatorImpl::SetWatchdogLimit).
        self.watchdog: str | None = None
        #: The transient memo (``--transient-memo``), made with the memo driver when asked for.
        self.transients: RunTransients | None = None
        #: Follows every port's queue (``--queues``), on both sides of a comparison, from the first Run().
        self.queue_monitor: QueueMonitorPort | None = None
        #: Follows every flow's packet RTTs (TCP, RDMA) along its bytes (``--rtt``), likewise.
        self.rtt_monitor: RttMonitorPort | None = None

    # ------------------------------------------------- what the parts keep, as the run reports it
    @property
    def tracker(self) -> MemoTrackerPort:
        return self.network.tracker

    @property
    def impl(self) -> MemoSimulatorPort | None:
        """The run's WormholeSimulatorImpl, once Run() started (``simulator``)."""
        return self.network.impl

    @property
    def simulator(self) -> MemoSimulatorPort:
        """The run's WormholeSimulatorImpl: what calls it runs inside Run(), once ``on_run_start`` has it."""
        return self.network.simulator

    @property
    def flows(self) -> dict[int, FlowInfo]:
        """Every flow that started sending, by id."""
        return self.network.flows

    @property
    def active(self) -> set[int]:
        """The flows sending now."""
        return self.network.active

    @property
    def partitions(self) -> dict[frozenset[int], PartitionState]:
        return self.partitioner.partitions

    @property
    def skips(self) -> list[SkipRecord]:
        return self.skipper.skips

    @property
    def reverts(self) -> int:
        return self.skipper.reverts

    @property
    def packet_level_time(self) -> dict[PacketLevel, float]:
        return self.skip_engine.packet_level_time

    @property
    def sample_period(self) -> float | None:
        return self.skip_engine.sample_period

    @property
    def guard(self) -> Guard | None:
        """The error guard (``--verify``), made when the first Run() starts (it needs ns-3's seed)."""
        return self.verifier.guard

    @guard.setter
    def guard(self, guard: Guard | None) -> None:
        self.verifier.guard = guard

    def skip_blocker(self, flow: int) -> str | None:
        """Why a flow must run packet by packet under this run's settings, or None."""
        return self.partitioner.skip_blocker(flow)

    @property
    def error(self) -> BaseException | None:
        """The exception a callback raised during Run(), if any: the run's results are not valid."""
        return self.boundary.error

    # ----------------------------------------------------------------- hooks
    def attach(self) -> None:
        """Register the Run() hooks; the script's own Simulator::Run() then drives everything."""
        observer = self.ns3.RunObserver
        observer.SetRunStartCallback(self.callback(self.on_run_start))
        observer.SetRunEndCallback(self.callback(self.on_run_end))
        observer.SetBeforeRunCallback(self.callback(self.before_run))
        if self.accelerate:
            # made now: wrapping a callable costs a JIT, which must not land inside Run()
            self._on_flow_event = self.callback(self.on_flow_event, "unsigned int", "int")
            self._on_sample = self.callback(self.on_sample)
            self.skipper.on_resume = self.callback(self.on_resume)
            self._on_drained = self.callback(self.on_drained)
            self._after_unattributed = self.callback(self.after_unattributed, "bool")
            self.verifier.on_check_end = self.callback(self.on_check_end)
            # bind the tracker methods now, not inside the timed Run() (see boundary.warm_up)
            self.boundary.warm_up(self.tracker, memo=self._memo_store is not None)
            if self._memo_store is not None:
                self.memo = self.boundary.memo(MemoDriver(self, self._memo_store, self._memo_context,
                                                          self.config.fidelity))
                self.verifier.memo = self.memo
                if self.config.transient_memo:
                    memo = self.memo
                    self.transients = RunTransients.make(
                        self.network, self.partitioner, self.arrivals, self.skipper, self.verifier,
                        self.config.fidelity, lambda flows: bool(memo.held_as(flows)), self._memo_store,
                        self._memo_context)

    def close(self) -> None:
        """Release what the run holds: the memo store, if any (the run's results stay readable)."""
        if self.memo is not None:
            self.memo.close()

    def callback(self, function: Callable[..., None], *signature: str) -> Any:
        """Wrap a Python callable as an ns3::Callback; exceptions are kept (``error``), not thrown into C++."""
        return self.boundary.callback(function, *signature)

    def before_run(self) -> None:
        """The script calls Run() (RunObserver::RunWatched): attach to its simulator now, outside the timed Run().

        Only to the implementation the harness selected, which announces its Run() (``on_run_start``):
        one the script chose runs unobserved, as it would have.
        """
        if self._attached:
            return
        ours = self.ns3.WormholeSimulatorImpl if self.accelerate else self.ns3.WormholeBaselineSimulatorImpl
        if not self.ns3.DynamicCast[ours](self.ns3.Simulator.GetImplementation()):
            return
        self._attach_simulator()
        if self.accelerate and self.impl is not None:
            self.boundary.warm_up_simulator(self.impl)

    def on_run_start(self) -> None:
        self.runs += 1
        self._run_started = time.perf_counter()
        self.boundary.run_started()
        if not self._attached:
            self._attach_simulator()  # a Run() the harness did not route through RunWatched
        self.tracker.Discover()

    def _attach_simulator(self) -> None:
        """Find the simulation's implementation, hook its destruction, and start following its flows."""
        self._attached = True
        impl = self.ns3.Simulator.GetImplementation()
        cast = self.ns3.DynamicCast[self.ns3.WormholeSimulatorImpl](impl)
        self.network.impl = self.boundary.cxx(cast) if cast else None
        # Simulator::Destroy() frees the simulator, and with it what its pending events
        # hold (a device, and the pcap file its trace writes): only if we let go of it
        self.boundary.at_destroy(self.on_destroy)
        if self.config.queues:
            self.queue_monitor = self.ns3.CreateObject[self.ns3.PortQueueMonitor]()
            self.queue_monitor.Install()
        if self.config.rtt:
            self.rtt_monitor = self.ns3.CreateObject[self.ns3.FlowRttMonitor]()
            self.rtt_monitor.Follow(self.tracker)
        if self.accelerate and self.impl is None:
            # the script chose its own simulator (or touched it first): run it plainly
            self.accelerate = False
            self.fallback = "the script selected another simulator implementation"
        if self.accelerate:
            self.tracker.SetFlowEventCallback(self._on_flow_event)
            self.tracker.WatchUnattributedEvents(self._after_unattributed)
            if self.guard is None:
                seeds = self.ns3.RngSeedManager
                self.guard = Guard(self.config.verify, int(seeds.GetSeed()), int(seeds.GetRun()))
        else:
            # a baseline's results must hold the flows a script creates while it runs
            self.tracker.FollowRunTimeFlows()

    def on_destroy(self) -> None:
        """The simulator is being destroyed: hold no reference to it (a later Run() attaches anew)."""
        self.network.impl = None
        self._attached = False
        if self._after_destroy is not None:
            self._after_destroy()

    def after_unattributed(self, unattributed: bool) -> None:
        """Learn the flows an event created, before they send; ``unattributed``: the event was.

        Called by the tracker (FlowTracker::WatchUnattributedEvents) after an
        event that created flows (a workload's release, or a user's callback
        in any event, a flow's own included), after every unattributed event,
        and while a flow's start is still unscheduled.

        Node initialization schedules the applications' starts, and a workload
        releasing a task creates new applications. Each new flow's start event
        is attributed to the flow (so it bounds only the partitions its route
        crosses, not every skip); its planned route is read when first needed
        (``Arrivals.planned_links``). A skip in progress on links the new flow
        will use is cut short now (skip-back), before the flow's first packet
        reaches them. Anything else an unattributed event does may affect any
        flow: it ends every skip.
        """
        if self.memo is None and self.arrivals.none_new() and not self.partitioner.any_paused():
            self._set_unattributed_watched(False)  # no new flow, no skip to end: nothing to learn
            return
        if unattributed:
            for st in self.partitioner.paused():
                self.skipper.revert(st, "an unattributed event ran")
        if self.memo is not None and unattributed:
            self.memo.forget_link_attributes()
        pending = []
        # read in one crossing; with the memo, their starts gated as they are read
        created = self.arrivals.take_created(gate=self.memo is not None)
        for flow in created.flows:
            if flow.state != PENDING:
                continue
            pending.append(self.arrivals.expect(flow))
            if self.memo is None:
                self.before_flow_start(flow.flow)
        if self.memo is not None:
            # starts go through the memo, which decides them at their start time
            self.memo.take_over(created)
        if pending:
            self.arrivals.add(pending)
        self._set_unattributed_watched(
            self.partitioner.any_paused() or (self.memo is not None and self.memo.keeps_link_attributes))

    def watch_unattributed_events(self) -> None:
        """Something the run keeps (a skip, the memo's cache) may be changed by any unattributed event."""
        self._set_unattributed_watched(True)

    def _set_unattributed_watched(self, watched: bool) -> None:
        """Whether the tracker reports unattributed events that created no flow (one C++ call per change)."""
        if watched != self._unattributed_watched:
            self._unattributed_watched = watched
            self.tracker.SetUnattributedEventsWatched(watched)

    def before_flow_start(self, flow: int) -> None:
        """Cut short (skip-back) every skip in progress on links the flow is about to use.

        With none in progress, the flow's route is left to be read when first needed.
        """
        paused = self.partitioner.paused()
        if not paused:
            return
        planned = self.arrivals.planned_links(flow) if self.arrivals.is_expected(flow) else frozenset()
        for st in paused:
            if not planned or planned & st.partition.links:
                self.skipper.revert(st, f"flow {flow} will start on its links")

    def on_run_end(self) -> None:
        if self.accelerate:
            self.skip_engine.catch_up(self.now())
        self.verifier.run_ended()
        self.boundary.run_ended()
        self.run_wall += time.perf_counter() - self._run_started
        if self.impl is not None and self.impl.WatchdogFired():
            self._watchdog_fired()
        if self.memo is not None:
            self.memo.run_ended()
        self.last_run = RunSnapshot(
            events=self.event_count(),
            system_events=self.system_event_count(),
            sim_time=self.now(),
            flows=self.flow_results(),
            queues=port_queues(self.queue_monitor.GetRecords()) if self.queue_monitor is not None else None,
            event_timeline=self._event_timeline(),
        )
        if self.progress:
            self._print_progress(final=True)

    def _event_timeline(self) -> list[tuple[float, int]] | None:
        """The events run by each instant the simulator marked, then by now: where the run spent them."""
        if self.impl is None:
            return None
        timeline = self.impl.GetEventTimeline()
        marks = [(float(t.GetSeconds()), int(n)) for t, n in zip(timeline.GetTimes(), timeline.GetCounts())]
        return marks + [(self.now(), self.event_count())]

    def _watchdog_fired(self) -> None:
        """Say, on one line, that the accelerator's own events alone were keeping the run going."""
        since = self.simulator.GetWatchdogSince().GetSeconds()
        self.watchdog = (
            f"from t={since:.9f} s only the accelerator's own events were left, where plain "
            f"ns-3 ends a run; they kept it going to t={self.now():.9f} s, so it was ended"
        )
        print(f"wormhole-ns3: watchdog: {self.watchdog}", file=sys.stderr, flush=True)

    # ----------------------------------------------------------- flow events
    def now(self) -> float:
        return self.network.now()

    def on_flow_event(self, flow: int, state: int) -> None:
        now = self.now()
        self.skip_engine.catch_up(now)
        if state == ACTIVE:
            info = read_flow(self.tracker, flow)
            self.network.started(flow, info)
            self.skip_engine.start_sampling(info, self._on_sample)
            self.partitioner.add(flow)
            for st in self.partitioner.paused():
                if st.partition.links & info.links:
                    self.skipper.revert(st, f"flow {flow} started on its links")
        elif state == FINISHED:
            self.network.ended(flow)
            if self.memo is not None:
                self.memo.flow_finished(flow)
            self.verifier.flow_finished()
            drain = DRAIN_RTTS * self.network.rtt(flow)
            self.partitioner.drain(flow, now + drain)
            self.simulator.ScheduleHousekeepingCallback(
                self.ns3.NanoSeconds(max(1, round(drain * 1e9))), self._on_drained
            )
        self.partitioner.repartition(now)
        if self.transients is not None:
            self.transients.repartitioned()
        self._report_samples(now)

    def on_drained(self) -> None:
        """A finished flow's last packets are gone: it no longer ties partitions together."""
        now = self.now()
        self.skip_engine.catch_up(now)
        if self.partitioner.drained(now):
            self.partitioner.repartition(now)
            if self.transients is not None:
                self.transients.repartitioned()
            self._report_samples(now)

    def on_sample(self) -> None:
        """The tracker took a rate sample of every sampled flow: the skip engine judges the partitions."""
        now = self.now()
        self.skip_engine.sampled(now)
        if self.transients is not None:
            self.transients.sampled()
        if self.progress:
            self._print_progress()
        self._report_samples(now)

    def on_resume(self) -> None:
        """A skip ended: the partitions whose pause is over sample and may skip again."""
        now = self.now()
        self.skip_engine.resumed(now)
        self._report_samples(now)

    def _report_samples(self, now: float) -> None:
        """Whether the tracker calls ``on_sample``: while a partition may decide something at a sample, or
        the transient memo or the progress line listens (``SkipEngine.report_samples``)."""
        self.skip_engine.report_samples(now, self.progress or self.transients is not None)

    def on_check_end(self) -> None:
        """A skip check's end time (``--verify``): the child reports, the parent compares."""
        self.verifier.check_ended()

    # ------------------------------------------------------------ reporting
    def _print_progress(self, final: bool = False) -> None:
        wall = time.perf_counter()
        if not final and wall - self._last_progress < 2.0:
            return
        self._last_progress = wall
        now = self.now()
        skipped = sum(r.dt for r in self.skips)
        flows = int(self.tracker.GetNFlows())
        line = (
            f"\r[wormhole] t={now:.4f}s flows done {len(self.network.finished)}/{flows} "
            f"skips {len(self.skips)} skipped {skipped:.4f}s"
        )
        print(line, end="\n" if final else "", file=sys.stderr, flush=True)

    def flow_results(self) -> list[FlowResult]:
        """One row per discovered flow (started or not), in flow id order; with its RTTs if they were followed."""
        flows = [read_outcome(self.tracker, flow) for flow in range(int(self.tracker.GetNFlows()))]
        if self.rtt_monitor is None:
            return flows
        return [replace(flow, rtt=rtt_bins(self.rtt_monitor.GetBins(flow.id))) for flow in flows]

    def trace_records(self) -> list[SkipRecord]:
        """Every skip and every memo event of the run, in time order (the skip trace)."""
        records = list(self.skips) + self.verifier.records + self.skip_engine.backoff_records
        if self.transients is not None:
            records += self.transients.trace_rows()
        if self.memo is not None:
            records += [
                SkipRecord(
                    time=e.time, flow_ids=e.flows, dt=e.span, events_moved=0,
                    events_avoided=e.events_avoided, credited_bytes=0, queue_packets=0,
                    limit=e.kind.value, reason=e.detail, kind=e.kind.trace_kind, draws=e.draws, facts=e.facts,
                )
                for e in self.memo.events
            ]
        return sorted(records, key=lambda r: r.time)

    def event_count(self) -> int:
        return int(self.ns3.Simulator.GetEventCount())

    def system_event_count(self) -> int:
        return int(self.impl.GetSystemEventCount()) if self.impl is not None else 0

    # ------------------------------------------------- what the memo driver asks (memo.driver.MemoRun)
    def events_saved(self) -> int:
        """Packet-level events the run's shortcuts avoided so far: its skips' and the memo's."""
        return self.skipper.skipped_events + (self.memo.stats.events_avoided if self.memo is not None else 0)

    def completed_virtually(self, flow: int) -> None:
        """The memo completed a held flow (its replayed completion was injected)."""
        self.network.finished.add(flow)
        self.verifier.flow_finished()

    def steady_events_avoided(self, flows: set[int]) -> int:
        """Packet-level events the skips of partitions made of these flows only avoided."""
        return sum(
            r.events_avoided for r in self.skips
            if r.kind is TraceKind.STEADY and set(r.flow_ids) <= flows
        )

    def replay_guard(self) -> tuple[frozenset[GuardKind], bool]:
        """(the memo shortcuts still allowed, should this batch of starts be checked): the guard's word."""
        return self.verifier.replay_guard()

    def fork_replay_check(self, flows: tuple[int, ...]) -> PendingCheck | None:
        """Fork to check the memo's decisions on flows starting now; the parent's check (None in the child)."""
        return self.verifier.fork_replay_check(flows)

    def replay_check_decided(self, check: PendingCheck, held: tuple[int, ...]) -> None:
        """The memo held these flows of a checked batch: compare each once it has ended here."""
        self.verifier.replay_check_decided(check, held)
