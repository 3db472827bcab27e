"""The accelerator's brain: per flow event and per rate sample, never per packet.

It keeps the partitions of the active flows up to date, asks the steady-state
detector about each partition, and fast-forwards the steady ones through the
C++ shim (move the partition's events, credit its flows). Everything per packet
(counting, sampling, tagging events) happens in the shim's FlowTracker and
WormholeSimulatorImpl; this object only runs when they call it back.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from wormhole_ns3.accel.fastforward import FlowProgress, SkipEnd, SkipPlan, plan_skip
from wormhole_ns3.accel.partition import FlowGroups, Partition
from wormhole_ns3.accel.steady import Limit, Verdict, contends, judge, judge_paced
from wormhole_ns3.accel.verify import Fork, Guard, replay_error, skip_error
from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.core.backoff import BackOff, Ledger, Patience
from wormhole_ns3.core.draws import DrawCase, Fidelity, RandomSource, port_loads
from wormhole_ns3.core.flows import (
    WINDOW_GROWS_WITH_TIME,
    FlowInfo,
    FlowKind,
    FlowResult,
    pausable_congestion_control,
)
from wormhole_ns3.core.ports import (
    BoundaryPort,
    MemoSimulatorPort,
    MemoTrackerPort,
    QueueMonitorPort,
    RttMonitorPort,
)
from wormhole_ns3.core.shortcuts import MEMO_KINDS, GuardKind
from wormhole_ns3.core.trace import SkipRecord, TraceKind
from wormhole_ns3.core.vocabulary import Label
from wormhole_ns3.memo.driver import MemoDriver
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.runtime.boundary import Boundary, planned_route, read_flow, read_outcome
from wormhole_ns3.runtime.queues import PortQueue, port_queues
from wormhole_ns3.runtime.rtt import rtt_bins

PENDING, ACTIVE, FINISHED = 0, 1, 2

#: Bytes of a full-size packet, for round-trip time estimates.
MTU_BYTES = 1500
#: Round-trip times a finished flow's last packets (FIN exchange, final ACKs) may
#: take to leave its links; until then its links' partitions are not split.
DRAIN_RTTS = 4.0


class PacketLevel(Label):
    """Why a window of a partition ran packet by packet (run.json's "packet-level time by reason")."""

    SETTLING = "settling after a flow event"
    FLOW_TAILS = "flow tails"
    UNSKIPPABLE_FLOW = "unskippable flow"
    SKIP_TOO_SHORT = "steady, skip too short"
    FILLING_WINDOW = "filling a window"
    UNFAIR_SHARES = "unfair shares"
    AGGREGATE_UNSTEADY = "aggregate rate unsteady"
    QUEUES_FILLING_OR_DRAINING = "queues filling or draining"
    CYCLES_UNSEEN = "congestion cycles not yet repeating"
    FLOW_CONNECTING = "a flow connecting on its links"
    NEWCOMER_DUE = "a flow due on its links"
    RATES_RECOVERING = "rates recovering"
    RATES_SHIFTING = "rates shifting"
    NO_PROGRESS = "no progress in window"
    EVERY_FLOW_IDLE = "every flow idle"
    DRAWING = "drawing random numbers"
    WINDOW_GROWING = "window growing with time"


#: The packet-level time of a partition whose last verdict refused it, by the verdict's limit.
PACKET_LEVEL_BY_LIMIT = {
    Limit.WINDOW_NOT_FULL: PacketLevel.FILLING_WINDOW,
    Limit.UNFAIR: PacketLevel.UNFAIR_SHARES,
    Limit.SPREAD: PacketLevel.AGGREGATE_UNSTEADY,
    Limit.FILLING_OR_DRAINING: PacketLevel.QUEUES_FILLING_OR_DRAINING,
    Limit.CYCLE_UNSEEN: PacketLevel.CYCLES_UNSEEN,
    Limit.RECOVERING: PacketLevel.RATES_RECOVERING,
    Limit.HALVES_DIFFER: PacketLevel.RATES_SHIFTING,
    Limit.NO_PROGRESS: PacketLevel.NO_PROGRESS,
    Limit.DRAWS: PacketLevel.DRAWING,
    Limit.ALL_IDLE: PacketLevel.EVERY_FLOW_IDLE,
    Limit.BELOW_CAPACITY: PacketLevel.WINDOW_GROWING,
}

#: Skip ends after which something outside the partition's flows ran (or its rates
#: expired): its rates are judged afresh.
JUDGE_AFRESH_AFTER = frozenset({SkipEnd.UNATTRIBUTED_EVENT, SkipEnd.RATES_SEEN_TO_HOLD})
#: A TCP partition is judged at every sample once its window is full: the window slides, so a
#: partition skips as soon as its last ``window`` samples are steady, not at the next
#: multiple of ``window``. A refusal is no reason to wait: DCTCP's shares and queue wander
#: from one window to the next, and the first steady one after a flow event is the one
#: to catch. (Backing off 2, 4, ... samples after refusals kept the demo dumbbell's flows
#: packet by packet longer; a judgement costs a read of every flow's samples, a few
#: hundred microseconds beside the thousands of events of a sampling period.)


@dataclass
class PartitionState:
    """What the controller remembers about one partition while its flow set is unchanged."""

    partition: Partition
    tag_class: int
    rtt: float
    changed_at: float
    #: Whether some flow's max-min share is below the narrowest link of its path: only
    #: then does the congestion control have shares to settle after a flow event. A flow
    #: alone on its links is judged as soon as a window shows it holding its rate.
    #: None until first asked (``Controller._contends``): most partitions of a run
    #: with many flow events change again before any sample asks.
    contended: bool | None = None
    #: Whether some flow is paced (RDMA): judged on whole windows only. None until first
    #: asked (``Controller._paced``), as ``contended``.
    paced: bool | None = None
    #: Whether every flow is paced and alone on its links: then judged from ``min_window``
    #: samples on while all are at line rate (``Controller._judged_early``). None until
    #: first asked, as ``contended``.
    paced_alone: bool | None = None
    rates: dict[int, float] | None = None
    #: Until when the rates may be carried forward (the verdict's horizon from its judgement).
    rates_until: float = float("inf")
    reason: str = ""
    last_verdict: Verdict | None = None
    paused_from: float | None = None
    paused_until: float | None = None
    credits: dict[int, int] = field(default_factory=dict)
    #: Index in Controller.skips of the partition's running (or last) skip.
    skip_record: int = -1
    resume_event: object = None
    #: What ended the partition's last skip.
    end: SkipEnd | None = None
    idle: frozenset[int] = frozenset()
    mark_time: float = 0.0
    mark_events: int = 0
    #: random numbers the partition's flows had drawn at ``mark_time``
    mark_draws: int = 0
    #: What refused the partition's last judgement since its last flow event or skip (None:
    #: none did): the skip trace says what the transient was measured to hold it back by.
    held_back_by: Limit | None = None
    #: A judgement found none of its flows delivered over the window (``Limit.NO_PROGRESS``):
    #: every flow waits on its own timer, and each judgement refuses alike until one delivers
    #: again (``FlowTracker::TakeProgressedFlows``).
    stalled: bool = False
    #: Why a flow of it must run packet by packet, if one must (its flows are its key: it stays).
    blocker: str | None = None
    #: Under same-seed fidelity, the models on its links that would draw random numbers while
    #: it is skipped, if any: it runs packet by packet (its flows and links are its key: it stays).
    draws_at: str | None = None
    #: How often it is judged while its judgements keep refusing it and the run's shortcuts have
    #: not paid for its bets (``core/backoff.py``); afresh with every new flow set.
    patience: Patience = field(default_factory=Patience)

    @property
    def paused(self) -> bool:
        return self.paused_until is not None


@dataclass
class PendingCheck:
    """A decision being checked in a forked child (accel/verify.py): a skip, or the memo's on a batch of starts."""

    time: float  #: when the decision was made, s
    flows: tuple[int, ...]
    fork: Fork
    #: A skip's: each flow's delivered bytes when the skip started (None: a memo batch's check).
    before: dict[int, int] | None = None
    #: A memo batch's: the flows the memo held (each checked, by how it ended, once it ended).
    held: tuple[int, ...] = ()

    @property
    def is_skip(self) -> bool:
        return self.before is not None


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
        self.tracker: MemoTrackerPort = self.boundary.cxx(
            tracker if tracker is not None else ns3.CreateObject[ns3.FlowTracker]())
        #: The run's WormholeSimulatorImpl, once Run() started (``simulator``).
        self.impl: MemoSimulatorPort | None = None
        self.flows: dict[int, FlowInfo] = {}
        self.active: set[int] = set()
        self.finished: set[int] = set()
        #: Finished flows whose last packets (FIN, final ACKs) may still be on their links,
        #: with the time they are gone: they still tie their links' partitions together.
        self.draining: dict[int, float] = {}
        #: The partitions of the active and draining flows, kept up to date per flow event.
        self.groups = FlowGroups()
        #: The state of each group of ``groups`` with active flows, and the same states by their
        #: active flows, in the groups' order (ascending smallest flow, draining flows included).
        self._state_of: dict[int, PartitionState] = {}
        self.partitions: dict[frozenset[int], PartitionState] = {}
        #: States a skip-back left unsampled since the last repartition (see _repartition).
        self._reverted: list[PartitionState] = []
        self.skips: list[SkipRecord] = []
        self.reverts = 0
        #: Simulated partition-seconds run packet by packet, by the reason they were not skipped.
        self.packet_level_time: dict[PacketLevel, float] = {}
        self.sample_period: float | None = None
        #: Samples taken so far (paced partitions are judged only at every ``window``-th).
        self.samples_taken = 0
        self.run_wall = 0.0
        self.runs = 0
        self._run_started = 0.0
        self._last_progress = 0.0
        self._attached = False
        #: The links each flow created while attached will load; None until asked for (``_planned_links``).
        self._planned: dict[int, frozenset[int] | None] = {}
        #: What the C++ side was last told, so that a call that would change nothing is not
        #: made (each is a cppyy round trip, and _repartition runs at every flow event):
        #: each tag's class (a tag starts in a class of its own) and each flow's sampling.
        self._tag_class: dict[int, int] = {}
        self._sampled: dict[int, bool] = {}
        #: Per link, its share of a path's RTT (propagation + one MTU's serialization),
        #: read once per run: links keep their delay and rate while a run goes.
        self._link_rtt: dict[int, float] = {}
        self._link_rates: dict[int, float] = {}
        self._random_sources: dict[int, tuple[RandomSource, ...]] = {}
        #: Per flow, its path's RTT (its route does not change once it sends).
        self._flow_rtt: dict[int, float] = {}
        #: Flows the controller has looked at (the tracker numbers them in discovery order).
        self._known_flows = 0
        #: whether the tracker reports unattributed events that created nothing (FlowTracker's default)
        self._unattributed_watched = True
        #: (start, flow) of flows created and not started, in start order; started ones are
        #: skipped where read, and those whose start is past are dropped at the next creation
        self._arrivals: list[tuple[float, int]] = []
        #: Why a run that asked to be accelerated ran plainly, if it did.
        self.fallback: str | None = None
        #: Snapshot taken when the last Run() returned (Destroy() frees the models).
        self.last_run: RunSnapshot | None = None
        #: Why the watchdog ended a Run(), if it did (see WormholeSimulatorImpl::SetWatchdogLimit).
        self.watchdog: str | None = None
        #: Follows every port's queue (``--queues``), on both sides of a comparison, from the first Run().
        self.queue_monitor: QueueMonitorPort | None = None
        #: Follows every flow's packet RTTs (TCP, RDMA) along its bytes (``--rtt``), likewise.
        self.rtt_monitor: RttMonitorPort | None = None
        #: The error guard (``--verify``), made when the first Run() starts (it needs ns-3's seed).
        self.guard: Guard | None = None
        #: Checks forked and not yet compared, by when they end: (end ns, order, check).
        self._checks: list[tuple[int, int, PendingCheck]] = []  #: skip checks, by when they end
        self._check_order = itertools.count()
        #: memo batch checks, compared once the flows the memo held in them have all ended
        self._memo_checks: list[PendingCheck] = []
        #: In a child forked to check a decision: the check it measures (it decides nothing itself).
        self.verifying: PendingCheck | None = None
        #: Guard rows of the skip trace (a kind of decision stopped).
        self._guard_records: list[SkipRecord] = []
        #: What the run's bets (judgements, recordings) cost against what its shortcuts saved.
        self.ledger = Ledger()
        #: Events the skips avoided so far (their trace rows', a skip-back's taken back).
        self._skipped_events = 0
        #: Back-off rows of the skip trace (a partition judged ever more rarely).
        self._backoff_records: list[SkipRecord] = []

    @property
    def simulator(self) -> MemoSimulatorPort:
        """The run's WormholeSimulatorImpl: what calls it runs inside Run(), once ``on_run_start`` has it."""
        assert self.impl is not None, "the simulator is known once Run() has started"
        return self.impl

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
        if self.accelerate:
            # made now: wrapping a callable costs a JIT, which must not land inside Run()
            self._on_flow_event = self.callback(self.on_flow_event, "unsigned int", "int")
            self._on_sample = self.callback(self.on_sample)
            self._on_resume = self.callback(self.on_resume)
            self._on_drained = self.callback(self.on_drained)
            self._after_unattributed = self.callback(self.after_unattributed)
            self._on_check_end = self.callback(self.on_check_end)
            # bind the tracker methods now, not inside the timed Run() (see boundary.warm_up)
            self.boundary.warm_up(self.tracker, memo=self._memo_store is not None)
            if self._memo_store is not None:
                self.memo = self.boundary.memo(MemoDriver(self, self._memo_store, self._memo_context,
                                                                self.config.fidelity))

    def close(self) -> None:
        """Release what the run holds: the memo store, if any (the run's results stay readable)."""
        if self.memo is not None:
            self.memo.close()

    def callback(self, function: Callable[..., None], *signature: str) -> Any:
        """Wrap a Python callable as an ns3::Callback; exceptions are kept (``error``), not thrown into C++."""
        return self.boundary.callback(function, *signature)

    def on_run_start(self) -> None:
        self.runs += 1
        self._run_started = time.perf_counter()
        self.boundary.run_started()
        if not self._attached:
            self._attached = True
            impl = self.ns3.Simulator.GetImplementation()
            cast = self.ns3.DynamicCast[self.ns3.WormholeSimulatorImpl](impl)
            self.impl = self.boundary.cxx(cast) if cast else None
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
        self.tracker.Discover()

    def on_destroy(self) -> None:
        """The simulator is being destroyed: hold no reference to it (a later Run() attaches anew)."""
        self.impl = None
        self._attached = False
        if self._after_destroy is not None:
            self._after_destroy()

    def after_unattributed(self) -> None:
        """Learn the flows an event created, before they send.

        Called by the tracker (FlowTracker::WatchUnattributedEvents) after an
        event that created flows (a workload's release, or a user's callback
        in any event, a flow's own included), after every unattributed event,
        and while a flow's start is still unscheduled.

        Node initialization schedules the applications' starts, and a workload
        releasing a task creates new applications. Each new flow's start event
        is attributed to the flow (so it bounds only the partitions its route
        crosses, not every skip); its planned route is read when first needed
        (``_planned_links``). A skip in progress on links the new flow will use
        is cut short now (skip-back), before the flow's first packet reaches
        them. Anything else an unattributed event does may affect any flow: it
        ends every skip.
        """
        tracker = self.tracker  # it discovered the new flows and attributed their starts
        if (self.memo is None and int(tracker.GetNFlows()) == self._known_flows
                and not any(st.paused for st in self.partitions.values())):
            self._set_unattributed_watched(False)  # no new flow, no skip to end: nothing to learn
            return
        unattributed = int(self.simulator.GetCurrentTag()) == int(self.ns3.WormholeSimulatorImpl.UNATTRIBUTED)
        for st in list(self.partitions.values()):
            if st.paused and unattributed:
                self._revert(st, "an unattributed event ran")
        if self.memo is not None and unattributed:
            self.memo.forget_link_attributes()
        pending = []
        known, self._known_flows = self._known_flows, int(tracker.GetNFlows())
        for flow in range(known, self._known_flows):
            if int(tracker.GetState(flow)) != PENDING:
                continue
            self._planned[flow] = None
            pending.append((tracker.GetStartTime(flow).GetSeconds(), flow))
            if self.memo is None:
                self.before_flow_start(flow)
        if self.memo is not None:
            # starts go through the memo, which decides them at their start time
            self.memo.take_over(flow for _, flow in pending)
        if pending:
            # kept sorted by insertion: rebuilt at every creation, it cost moe-8x7b-64g 1.4 s of 70;
            # a started flow stays listed while it connects (``_connecting_on``)
            started = bisect.bisect_left(self._arrivals, (self.now(), -1))
            self._arrivals[:started] = [a for a in self._arrivals[:started] if self._connecting(a[1])]
            for arrival in pending:
                bisect.insort(self._arrivals, arrival)
        self._set_unattributed_watched(
            any(st.paused for st in self.partitions.values())
            or (self.memo is not None and self.memo.keeps_link_attributes))

    def watch_unattributed_events(self) -> None:
        """Something the controller keeps (a skip, the memo's cache) may be changed by any unattributed event."""
        self._set_unattributed_watched(True)

    def _set_unattributed_watched(self, watched: bool) -> None:
        """Whether the tracker reports unattributed events that created no flow (one C++ call per change)."""
        if watched != self._unattributed_watched:
            self._unattributed_watched = watched
            self.tracker.SetUnattributedEventsWatched(watched)

    def before_flow_start(self, flow: int) -> None:
        """Cut short (skip-back) every skip in progress on links the flow is about to use."""
        planned = self._planned_links(flow) if flow in self._planned else frozenset()
        for st in list(self.partitions.values()):
            if st.paused and (not planned or planned & st.partition.links):
                self._revert(st, f"flow {flow} will start on its links")

    def _planned_links(self, flow: int) -> frozenset[int]:
        """The links a created flow will load, read from the tracker when first asked for.

        Not at its creation: most flows the memo gates are replayed and never start,
        and their route walks were 1.2 s of moe-8x7b-64g-dcqcn's Run(). Read when it
        starts, or when a skip asks for the next arrival on its links, the route is
        the routing tables' at that time, when it matters.
        """
        planned = self._planned[flow]
        if planned is None:
            data, ack = planned_route(self.tracker, flow)
            planned = self._planned[flow] = frozenset(data) | frozenset(ack)
        return planned

    def _next_arrival_on(self, links: frozenset[int], now: float) -> float:
        """The start time of the next flow that will load one of these links."""
        for start, flow in self._arrivals:
            if start < now or flow in self.flows:
                continue
            planned = self._planned_links(flow)
            if not planned or planned & links:
                return start
        return float("inf")

    def _connecting(self, flow: int) -> bool:
        """Whether a flow started and sends no data yet (FlowTracker::IsConnecting), its handshake on its links."""
        return flow not in self.flows and bool(self.tracker.IsConnecting(flow))

    def _connecting_on(self, links: frozenset[int], now: float) -> int | None:
        """A flow connecting over these links, if one is: none of them may be skipped until it sends.

        Its handshake's packets wait in the links' queues among the partition's
        packets, whose events a skip moves with them: the connection would
        complete only when the skip ends, while the partition is credited the
        share of the links the newcomer takes in plain ns-3 from its first data
        packet. It is no member of the partition (it has sent nothing to judge),
        and no arrival to come (it started): it is the partition's next change,
        already under way.
        """
        for start, flow in self._arrivals:
            if start > now:
                break
            if self._connecting(flow):
                planned = self._planned_links(flow)
                if not planned or planned & links:
                    return flow
        return None

    def _newcomer_due(self, st: PartitionState, now: float) -> int | None:
        """A flow due to start on a TCP partition's links before its flows end, if one is: it holds the skip off.

        A skip moves the partition's packets and freezes its flows' windows, so
        the partition resumes in the phase of its congestion cycle the skip
        started in, not the one plain ns-3 reaches at the skip's end; nothing
        brings that phase back (a sawtooth is a cycle, not a fixed point). A flow
        that joins then meets the other phase, and the windows it leaves behind
        carry the difference to every flow after it: on seed1-0057 a 28 ms skip
        of a lone DCTCP flow ending at a newcomer's arrival put that newcomer
        5.5% off, the next flow 15% and mice half a second later up to 56%
        (held off, those flows end as in plain ns-3). Paced flows (RDMA) keep their own rule
        (``_settling``); a flow nobody foresees still cuts a skip short.
        The flows' ends are estimated at their credited rates; a partition of
        flows of unknown size (or idle) runs until the newcomer has come.
        """
        if self._paced(st) or st.rates is None:
            return None
        ends = []
        for f in st.partition.flows:
            remaining, rate = self._progress_of(f).remaining, st.rates.get(f, 0.0)
            ends.append(now + remaining / rate if remaining is not None and rate > 0 else float("inf"))
        last_end = max(ends, default=now)
        for start, flow in self._arrivals:
            if start >= last_end:
                break
            if start < now or flow in self.flows:
                continue
            planned = self._planned_links(flow)
            if not planned or planned & st.partition.links:
                return flow
        return None

    def on_run_end(self) -> None:
        if self.verifying is not None:
            self._send_measurement(self.verifying)  # the run ended before the check's end: what it got
        for check in [c for _, _, c in self._checks] + self._memo_checks:
            check.fork.abandon()
        self._checks.clear()
        self._memo_checks.clear()
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
        return self.ns3.Simulator.Now().GetSeconds()

    def on_flow_event(self, flow: int, state: int) -> None:
        now = self.now()
        if state == ACTIVE:
            info = read_flow(self.tracker, flow)
            self.flows[flow] = info
            self._flow_rtt.pop(flow, None)
            self.active.add(flow)
            self._configure_sampling(info)
            self.groups.add(flow, info.links)
            for st in list(self.partitions.values()):
                if st.paused and st.partition.links & info.links:
                    self._revert(st, f"flow {flow} started on its links")
        elif state == FINISHED:
            self.active.discard(flow)
            self.finished.add(flow)
            if self.memo is not None:
                self.memo.flow_finished(flow)
            self.child_flow_finished()
            drain = DRAIN_RTTS * self._rtt(flow)
            self.draining[flow] = now + drain
            self.groups.touch(flow)  # its partition's active flows changed
            self.simulator.ScheduleHousekeepingCallback(
                self.ns3.NanoSeconds(max(1, round(drain * 1e9))), self._on_drained
            )
        self._repartition(now)

    def on_drained(self) -> None:
        """A finished flow's last packets are gone: it no longer ties partitions together."""
        now = self.now()
        gone = [f for f, until in self.draining.items() if until <= now + 1e-12]
        for flow in gone:
            del self.draining[flow]
            if flow not in self.active:
                self.groups.remove(flow)
        if gone:
            self._repartition(now)

    def _configure_sampling(self, info: FlowInfo) -> None:
        if self.sample_period is not None:
            return
        self.sample_period = self.config.sample_period or 4 * self._path_rtt(info)
        period = self.ns3.NanoSeconds(max(1, round(self.sample_period * 1e9)))
        self.tracker.ConfigureSampling(period, 1, self._on_sample)

    @property
    def period(self) -> float:
        """The sampling period, s (chosen when the first flow starts, before any sample)."""
        assert self.sample_period is not None, "no window before the first flow starts"
        return self.sample_period

    def _rtt(self, flow: int) -> float:
        """A sending flow's ``_path_rtt``, computed once: every partition it joins asks for it."""
        rtt = self._flow_rtt.get(flow)
        if rtt is None:
            rtt = self._flow_rtt[flow] = self._path_rtt(self.flows[flow])
        return rtt

    def _path_rtt(self, info: FlowInfo) -> float:
        """Propagation plus one full-size packet's serialization on every link, both ways."""
        links = info.path + info.reverse_path
        if not links:
            return 1e-3
        total = 0.0
        for link in links:
            share = self._link_rtt.get(link)
            if share is None:
                share = self._link_rtt[link] = (
                    self.tracker.GetLinkDelay(link).GetSeconds() + MTU_BYTES * 8 / (self._link_rate(link) or 1e9)
                )
            total += share
        return total if info.reverse_path else 2 * total

    def _link_rate(self, link: int) -> float:
        """A link's rate, bit/s, read from C++ once (per flow event it is asked for every link of a partition)."""
        rate = self._link_rates.get(link)
        if rate is None:
            rate = self._link_rates[link] = float(self.tracker.GetLinkRate(link))
        return rate

    def _repartition(self, now: float) -> None:
        """Bring the partitions the last flow events changed up to date, and their flows' tag classes.

        Draining flows take part in the grouping (their last packets share
        links) but not in a partition's identity: a partition whose active
        flows are unchanged keeps its state when a draining flow leaves it.
        Only the groups ``FlowGroups`` reports stale are looked at; the others
        kept their flows, class and sampling. The C++ calls are those, in the
        same order, that a pass over every partition would make.
        """
        touched = []
        for group in self.groups.take_stale():
            self._state_of.pop(group, None)
            members = self.groups.get(group)
            if members is None:
                continue
            active = members.flows & self.active
            self._assign_class(members.flows)
            if not active:
                continue
            part = Partition(flows=frozenset(active), links=members.links)
            st = self.partitions.get(part.key)
            if st is None:
                st = PartitionState(
                    partition=part,
                    tag_class=self._class_of(members.flows),
                    rtt=max(self._rtt(f) for f in active),
                    changed_at=now,
                    blocker=next((b for f in sorted(active) if (b := self.skip_blocker(f))), None),
                    draws_at=self._queue_draws(active),
                )
                st.mark_time, st.mark_events, st.mark_draws = now, self._class_events(st), self._class_draws(st)
                self.tracker.ClearSamples(list(active))
            else:
                st.partition, st.tag_class = part, self._class_of(members.flows)
            self._state_of[group] = st
            touched.append(group)
        self.partitions = {st.partition.key: st for _, st in sorted(self._state_of.items())}
        if self._reverted:
            # a skip-back leaves its flows unsampled until the next repartition samples them
            reverted = {id(st) for st in self._reverted}
            self._reverted.clear()
            touched += [g for g, st in self._state_of.items() if id(st) in reverted]
        for group in sorted(set(touched)):
            st = self._state_of[group]
            for f in st.partition.flows:
                self._set_sampled(f, not st.paused)

    def _contends(self, st: PartitionState) -> bool:
        """Whether the partition's flows contend (``_contended``), worked out at the first asking."""
        if st.contended is None:
            st.contended = self._contended(st.partition.flows)
        return st.contended

    def _paced(self, st: PartitionState) -> bool:
        """Whether some flow of the partition is paced, worked out at the first asking."""
        if st.paced is None:
            st.paced = any(self.flows[f].paced for f in st.partition.flows)
        return st.paced

    def _contended(self, flows: frozenset[int]) -> bool:
        """Whether a flow's max-min fair share is below the narrowest link on its path.

        Paced flows (RDMA) count as contending whatever their paths: their rate is
        their congestion state, which a flow released onto their links while they
        skip (a skip-back) finds frozen, so they keep their settling time.
        """
        return any(self.flows[f].paced for f in flows) or self._paths_contend(flows)

    def _paths_contend(self, flows: frozenset[int]) -> bool:
        """Whether, by their paths and link rates alone, some flow's max-min share is below its narrowest link."""
        paths = {f: frozenset(self.flows[f].path) for f in flows}
        return contends(paths, {link: self._link_rate(link) for link in frozenset().union(*paths.values())})

    def _settling(self, st: PartitionState, now: float) -> bool:
        """Whether a contended partition is still within its settling time after its last flow event.

        Paced flows count as contending (``_contended``), except while they may be
        judged early (``_judged_early``): alone on their links at line rate, they
        have nothing to settle.
        """
        return (now - st.changed_at < self.config.settle_rtts * st.rtt and self._contends(st)
                and not self._judged_early(st, now))

    def _judged_early(self, st: PartitionState, now: float) -> bool:
        """Whether a paced partition may be judged on fewer samples than a window, as TCP ones are.

        Only if each of its flows is alone on its links (a max-min share no lower
        than its narrowest link), and only until a whole window can have been
        taken: ``judge_paced`` then takes the short window only if every flow was
        paced at line rate with no congestion notification. A DCQCN ring step on a
        rail, each flow to itself, otherwise waited a settling time and the next
        whole window of the run's sampling (56 to 72 RTTs on gpt-13b-128g-dcqcn)
        to be skipped at the rate it had from its first RTT.
        """
        if not self._paced(st) or now - st.mark_time >= self.config.window * self.period * (1 - 1e-9):
            return False
        if st.paced_alone is None:
            flows = st.partition.flows
            st.paced_alone = all(self.flows[f].paced for f in flows) and not self._paths_contend(flows)
        return st.paced_alone

    def _set_sampled(self, flow: int, sampled: bool) -> None:
        """FlowTracker::SetSampled, unless the flow is sampled (or not) already.

        Such a call would change nothing: the flow's samples are kept (or, unsampled,
        there are none), and its sampling event is pending already (the tracker keeps
        one pending while a sampled flow is active, from the call that sampled it on).
        """
        if self._sampled.get(flow, False) != sampled:
            self._sampled[flow] = sampled
            self.tracker.SetSampled(flow, sampled)

    def _class_of(self, flows: frozenset[int]) -> int:
        return min(self.flows[f].tag for f in flows)

    def _assign_class(self, flows: frozenset[int]) -> None:
        """Put the tags of a group of flows in one class, named by its smallest tag."""
        tag_class = self._class_of(flows)
        for f in flows:
            tag = self.flows[f].tag
            if self._tag_class.get(tag, tag) != tag_class:
                self._tag_class[tag] = tag_class
                self.simulator.SetTagClass(tag, tag_class)

    def _class_events(self, st: PartitionState) -> int:
        """Events executed so far on behalf of the partition's active flows."""
        return int(self.simulator.GetTagsEventCount([self.flows[f].tag for f in st.partition.flows]))

    def _class_draws(self, st: PartitionState) -> int:
        """Random numbers the partition's active flows drew so far (``RandomDrawMonitor``)."""
        return int(self.simulator.GetTagsDrawCount([self.flows[f].tag for f in st.partition.flows]))

    def _queue_draws(self, flows: frozenset[int]) -> str | None:
        """Under same-seed fidelity: the models that draw once a queue stands, on the flows' links
        where they can make one (``port_loads``), in words; None if there are none.

        Such a model (RED between its thresholds, PIE, COBALT) may draw in a window that
        drew nothing, once its average queue drifts into its random region, and the
        window cannot tell: a skip there may leave draws out.
        """
        if self.config.fidelity is not Fidelity.SAME_SEED:
            return None
        loads = port_loads([self.flows[f].path for f in sorted(flows)], self._link_rate)
        drawing = sorted({f"{source.what} (link {link})" for link, load in loads.items()
                          if load > self._link_rate(link) for source in self._link_sources(link) if source.needs_queue})
        return "; ".join(drawing) or None

    def _link_sources(self, link: int) -> tuple[RandomSource, ...]:
        """The models on a link that may draw random numbers, read from C++ once."""
        sources = self._random_sources.get(link)
        if sources is None:
            sources = self._random_sources[link] = tuple(
                RandomSource(str(s.what), bool(s.needsQueue)) for s in self.tracker.GetLinkRandomSources(link))
        return sources

    def _moves_random_streams(self, st: PartitionState, now: float) -> bool:
        """Under same-seed fidelity, whether the partition's packets drew random numbers since its window opened.

        A skip leaves out the draws its packets would make, so every later draw from
        those streams comes out other than plain ns-3's under the same seed, whatever
        the skip credits: the run would follow another seed's course from there on. A
        partition that draws opens a fresh window, and is judged once one draws nothing.
        """
        if self.config.fidelity is not Fidelity.SAME_SEED:
            return False
        draws = self._class_draws(st)
        if draws == st.mark_draws:
            return False
        st.rates, st.held_back_by = None, Limit.DRAWS
        st.last_verdict = Verdict(Limit.DRAWS)
        st.mark_time, st.mark_events, st.mark_draws = now, self._class_events(st), draws
        return True

    def _draws_in_window(self, st: PartitionState) -> tuple[DrawCase, str]:
        """A skip's case with respect to random draws, and its words: what its window drew.

        The rates a skip credits were measured over a window in which every sample
        saw other draws; they held within theta across them, so the credit does not
        depend on the draws the skipped packets would make (the steady window is
        itself recordings under different draws that agree).
        """
        drawn = self._class_draws(st) - st.mark_draws
        if not drawn:
            return DrawCase.DREW_NOTHING, ""
        tags = [self.flows[f].tag for f in st.partition.flows]
        nodes = ", ".join(str(int(n)) for n in self.simulator.GetTagsDrawNodes(tags))
        return DrawCase.STEADY_ACROSS_DRAWS, (f"; its window drew {drawn} random numbers (at nodes {nodes}) and "
                                              f"its rates held steady across them")

    # -------------------------------------------------------- steady & skip
    def on_sample(self) -> None:
        """The tracker took a rate sample of every sampled flow: judge the partitions whose turn it is."""
        now = self.now()
        self.samples_taken += 1
        partitions = list(self.partitions.values())
        # which flows delivered since the last sample unstalls a stalled partition; only a partition
        # that may be judged can stall, and a new one is not judged before a later sample has taken
        # them: with none, the crossing is saved (a run whose every link may draw, under same-seed
        # fidelity, makes 12,828 of them and judges nothing)
        judgeable = any(not (st.blocker or st.draws_at) for st in partitions)
        progressed = set(self.tracker.TakeProgressedFlows()) if judgeable else set()
        for st in partitions:
            if st.stalled and not progressed.isdisjoint(st.partition.flows):
                st.stalled = False
            if not st.paused:
                self._consider(st, now)
                self._account(st, now)
        if self.progress:
            self._print_progress()

    def _consider(self, st: PartitionState, now: float) -> None:
        """Skip the partition if it is steady and a skip is long enough to pay off."""
        if self.verifying is not None or (self.guard is not None and not self.guard.allows(GuardKind.SKIP)):
            return  # a child checking a decision runs packet by packet; so does a kind the guard stopped
        part = st.partition
        if st.blocker or st.draws_at:
            return
        if self._settling(st, now):
            return
        if self._moves_random_streams(st, now):
            return
        if st.rates is not None and now >= st.rates_until:
            st.rates = None  # carried as far as they were seen to hold: judge afresh
        if st.rates is None:
            if st.stalled:
                return  # still no byte since the window that had none: judged alike
            paced, early = self._paced(st), self._judged_early(st, now)
            shortest = self.config.window if paced and not early else min(self.config.min_window,
                                                                           self.config.window)
            if now - st.mark_time < shortest * self.period * (1 - 1e-9):
                return  # the window cannot be full yet: nothing to read
            if paced and not early and self.samples_taken % self.config.window:
                # paced flows (RDMA) are judged on whole windows only: judged at any sample, a
                # DCQCN partition skipped into a flow's release and one flow ended 27% off
                # (tests/test_rdma_accel_skip.py). That is the chaos of two DCQCN flows meeting
                # (plain ns-3 gives the same 27% with the ring starting 10 ns earlier), not an
                # error of the skip-back; the sliding window stays for TCP until contending paced
                # flows are measured on it
                return
            backing_off = not self.ledger.pays(self.events_saved())
            if not st.patience.due(backing_off):
                return  # refused at every judgement while no shortcut has paid: judged more rarely
            verdict = self._judge(st, early)
            self.ledger.judged(len(part.flows))
            st.last_verdict = verdict
            if early and verdict.limit is Limit.WINDOW_NOT_FULL:
                return  # not at line rate: it waits for a whole window, as paced flows always did
            if not verdict.steady:
                st.held_back_by = verdict.limit
                st.stalled = verdict.limit is Limit.NO_PROGRESS
                if st.patience.lost(backing_off):
                    self._backed_off(st, now)
                return
            st.patience.won()
            st.rates, st.reason, st.idle = dict(verdict.rates), verdict.reason, verdict.idle
            st.rates_until = now + verdict.horizon
        exempt = self._idle_hosts(st)
        if exempt is None:
            st.rates = None  # an idle flow is on the move: judge a fresh window
            return
        if self._connecting_on(part.links, now) is not None:
            return  # it joins once it sends: the partition is judged afresh then
        if self._newcomer_due(st, now) is not None:
            return  # the newcomer would meet the congestion cycle in the phase a skip froze
        plan = plan_skip(
            now,
            st.rates,
            {f: self._progress_of(f) for f in part.flows},
            bounds={
                SkipEnd.UNATTRIBUTED_EVENT: self.simulator.NextUnattributedEventTime().GetSeconds(),
                SkipEnd.FLOW_ARRIVAL: self._next_arrival_on(part.links, now),
                SkipEnd.RATES_SEEN_TO_HOLD: st.rates_until,
                SkipEnd.IDLE_FLOW_WAKES: (
                    self.simulator.NextEventTimeOn(exempt).GetSeconds() if exempt else float("inf")
                ),
            },
            tail=self.config.tail_rtts * st.rtt,
            min_skip=self.config.min_skip_samples * self.period,
            max_skip=self.config.max_skip,
        )
        if plan is not None:
            if self.guard is not None and self.guard.selects(GuardKind.SKIP) and self._fork_skip_check(st, plan):
                return  # this is the child: it simulates the skip's time packet by packet
            self._skip(st, plan, exempt)
        elif st.idle:
            st.rates = None  # shares with idle flows hold only until one of them wakes

    def events_saved(self) -> int:
        """Packet-level events the run's shortcuts avoided so far: its skips' and the memo's."""
        return self._skipped_events + (self.memo.stats.events_avoided if self.memo is not None else 0)

    def _backed_off(self, st: PartitionState, now: float) -> None:
        """A partition refused at every judgement starts being judged more rarely: a trace row says why."""
        patience = st.patience
        since = (now - st.changed_at) / st.rtt
        self._backoff_records.append(SkipRecord(
            time=now, flow_ids=tuple(sorted(st.partition.flows)), dt=0.0, events_moved=0, events_avoided=0,
            credited_bytes=0, queue_packets=0, limit=BackOff.JUDGING.value,
            reason=(f"refused at its last {patience.losses} judgements ({st.held_back_by} last), its flows "
                    f"unchanged for {since:.0f} RTTs, and {self.ledger.words(self.events_saved())}: judged "
                    f"after waits doubling from {patience.wait} to {patience.max_wait} samples until it is "
                    f"steady or its flows change"),
            kind=TraceKind.BACK_OFF,
        ))

    def _account(self, st: PartitionState, now: float) -> None:
        """Charge the last sampling period of packet-level time of a partition to why it was not skipped."""
        if st.paused:
            return  # it skipped at this sample
        why = self._packet_level_reason(st, now)
        self.packet_level_time[why] = self.packet_level_time.get(why, 0.0) + self.period

    def _packet_level_reason(self, st: PartitionState, now: float) -> PacketLevel:
        """Why an unpaused partition ran its last sampling period packet by packet."""
        if self._settling(st, now):
            return PacketLevel.SETTLING
        if st.end is SkipEnd.FLOW_TAIL and st.rates is not None:
            return PacketLevel.FLOW_TAILS
        if st.blocker:
            return PacketLevel.UNSKIPPABLE_FLOW
        if st.draws_at:
            return PacketLevel.DRAWING
        if st.rates is not None:
            if self._connecting_on(st.partition.links, now) is not None:
                return PacketLevel.FLOW_CONNECTING
            if self._newcomer_due(st, now) is not None:
                return PacketLevel.NEWCOMER_DUE
            return PacketLevel.SKIP_TOO_SHORT
        verdict = st.last_verdict
        if verdict is None:
            return PacketLevel.FILLING_WINDOW
        if verdict.limit is None:
            # judged steady, but its rates were dropped (an idle flow on the move, a skip cut
            # short or ended by an outside event) and not judged afresh yet: charged to the
            # aggregate, as it always was
            return PacketLevel.AGGREGATE_UNSTEADY
        return PACKET_LEVEL_BY_LIMIT[verdict.limit]

    def _idle_hosts(self, st: PartitionState) -> list[int] | None:
        """The nodes whose events stay in real time during a skip: hosts used only by idle flows.

        None if an idle flow cannot be kept out of the skip: it has packets in the
        network (they would be delayed with the rest), or it shares a host with a
        busy flow.
        """
        if not st.idle:
            return []
        busy_nodes = set()
        for f in self.active - st.idle:
            busy_nodes |= {self.flows[f].src_node, self.flows[f].dst_node}
        hosts = []
        for f in sorted(st.idle):
            if not self.tracker.IsQuiet(f):
                return None
            nodes = {self.flows[f].src_node, self.flows[f].dst_node}
            if nodes & busy_nodes:
                return None
            hosts += sorted(nodes)
        return hosts

    def _judge(self, st: PartitionState, early: bool) -> Verdict:
        part = st.partition
        samples = {f: self._samples(f) for f in part.flows}
        paths = {f: frozenset(self.flows[f].path) for f in part.flows}
        links = frozenset().union(*paths.values())
        capacity = {link: self._link_rate(link) / 8 for link in links}
        if all(self.flows[f].paced for f in part.flows):
            tracker = self.tracker
            sent = {f: self._sent_samples(f) for f in part.flows}
            sending = {f: np.array(tracker.GetSendingRateSamples(f), dtype=np.float64, copy=True)
                       for f in part.flows}
            notifications = {f: np.array(tracker.GetNotificationSamples(f), dtype=np.int64, copy=True)
                             for f in part.flows}
            return judge_paced(samples, sent, sending, notifications, self.period,
                               self.config.window, self.config.theta, self.config.fairness, paths, capacity,
                               min_window=self.config.min_window if early else None)
        demand = {
            f: (self.flows[f].app_rate if self.flows[f].kind == FlowKind.ONOFF_UDP else None)
            for f in part.flows
        }
        windowed = [f for f in part.flows if self.flows[f].kind == FlowKind.BULK_TCP]
        return judge(
            samples,
            self.period,
            self.config.window,
            self.config.theta,
            self.config.fairness,
            paths,
            capacity,
            demand,
            self.config.idle_share,
            sizes={f: self.flows[f].size for f in part.flows},
            budget=self.config.convergence_budget,
            min_window=self.config.min_window,
            sent={f: self._sent_samples(f) for f in part.flows},
            time_grown=frozenset(f for f in part.flows
                                 if self.flows[f].congestion_control in WINDOW_GROWS_WITH_TIME),
            windows={f: np.array(self.tracker.GetWindowSamples(f), dtype=np.int64, copy=True) for f in windowed},
            signals={f: np.array(self.tracker.GetNotificationSamples(f), dtype=np.int64, copy=True)
                     for f in windowed},
            cycles=self.config.congestion_cycles,
        )

    def skip_blocker(self, flow: int) -> str | None:
        """Why a flow must run packet by packet under this run's settings (Cubic only with skip_cubic), or None."""
        return self.flows[flow].skip_blocker(pausable_congestion_control(self.config.skip_cubic))

    def _samples(self, flow: int) -> np.ndarray:
        vector = self.tracker.GetSamples(flow)
        # copy while the std::vector lives: a view would alias a freed buffer
        return np.array(vector, dtype=np.int64, copy=True)

    def _sent_samples(self, flow: int) -> np.ndarray:
        """The flow's sent-bytes samples, at the instants of ``_samples`` (copied as they are)."""
        return np.array(self.tracker.GetSentSamples(flow), dtype=np.int64, copy=True)

    def _progress_of(self, flow: int) -> FlowProgress:
        size = self.flows[flow].size
        delivered = int(self.tracker.GetDelivered(flow))
        return FlowProgress(
            remaining=(size - delivered) if size else None,
            sendable=int(self.tracker.GetSendable(flow)),
        )

    def _skip(self, st: PartitionState, plan: SkipPlan, exempt: list[int]) -> None:
        ns3 = self.ns3
        dt_ns = int(plan.duration * 1e9)
        dt = dt_ns * 1e-9
        window = max(plan.start - st.mark_time, 1e-12)
        event_rate = (self._class_events(st) - st.mark_events) / window
        rates = st.rates
        assert rates is not None, "only a partition judged steady is skipped"
        draw_case, drew = self._draws_in_window(st)
        credited = {}
        for f in sorted(st.partition.flows):
            credited[f] = int(self.tracker.Credit(f, int(rates[f] * dt)))
        moved = int(self.simulator.MoveClassExcept(st.tag_class, ns3.NanoSeconds(dt_ns), exempt))
        for f in st.partition.flows:
            # an idle flow's events stay in real time, and so do the clocks of its models
            shift = self.tracker.ShiftMonitoredPackets if f in st.idle else self.tracker.ShiftTimes
            shift(f, ns3.NanoSeconds(dt_ns))
        st.paused_from, st.paused_until, st.credits = plan.start, plan.start + dt, credited
        self.watch_unattributed_events()
        for f in st.partition.flows:
            self._set_sampled(f, False)
        key = st.partition.key
        st.end = plan.end
        st.resume_event = self.simulator.ScheduleHousekeepingCallback(ns3.NanoSeconds(dt_ns), self._on_resume)
        st.skip_record = len(self.skips)
        self.skips.append(
            SkipRecord(
                time=plan.start,
                flow_ids=tuple(sorted(key)),
                dt=dt,
                events_moved=moved,
                events_avoided=int(event_rate * dt),
                credited_bytes=sum(credited.values()),
                queue_packets=max(
                    int(self.tracker.GetQueuedPackets(link))
                    for f in st.partition.flows
                    for link in self.flows[f].path
                ),
                limit=plan.limit,
                reason=f"{st.reason}; {self._settled(st, plan.start)}{drew}",
                draws=draw_case,
            )
        )
        self._skipped_events += self.skips[-1].events_avoided
        st.patience.won()
        st.held_back_by = None

    def _settled(self, st: PartitionState, now: float) -> str:
        """How long the partition's transient lasted, as a skip's trace row says it, and what measured it.

        The time since its last flow event, and the check that refused its last
        judgement before this skip (the queue still filling or draining, the
        aggregate or the shares still moving): what held the skip back until then.
        """
        since = f"{(now - st.changed_at) / st.rtt:.0f} RTTs since last flow event"
        if st.held_back_by is not None:
            since += f", held back until then by {st.held_back_by.value}"
        if self.config.settle_rtts > 0 and not self._contends(st):
            since += " (no flow contends: no settling)"
        return since

    def on_resume(self) -> None:
        """A skip ended: the partitions whose pause is over sample and may skip again."""
        now = self.now()
        for st in list(self.partitions.values()):
            if st.paused_until is not None and st.paused_until <= now + 1e-12:
                self._resume(st, now)

    def _resume(self, st: PartitionState, now: float) -> None:
        st.paused_from = st.paused_until = None
        st.resume_event = None
        st.mark_time, st.mark_events, st.mark_draws = now, self._class_events(st), self._class_draws(st)
        if st.end in JUDGE_AFRESH_AFTER or st.idle:
            # something outside the flows ran: it may have changed them, so judge afresh
            st.rates = None
        for f in st.partition.flows:
            self._set_sampled(f, True)
        if st.rates is not None:
            self._consider(st, now)

    def _revert(self, st: PartitionState, why: str) -> None:
        """Skip-back: cut a running skip short at the present, as if it had been decided so."""
        now = self.now()
        until, since = st.paused_until, st.paused_from
        assert until is not None and since is not None, "only a running skip is cut short"
        left = until - now
        full = until - since
        left_ns = int(round(left * 1e9))
        self.simulator.MoveClass(st.tag_class, self.ns3.NanoSeconds(-left_ns))
        for f in st.partition.flows:
            self.tracker.ShiftTimes(f, self.ns3.NanoSeconds(-left_ns))
        taken_back = sum(
            int(self.tracker.Uncredit(f, int(credit * left / full)))
            for f, credit in st.credits.items()
        )
        if st.resume_event is not None:
            self.ns3.Simulator.Cancel(st.resume_event)
        st.paused_from = st.paused_until = None
        st.rates = None
        self._reverted.append(st)
        self.reverts += 1
        record = self.skips[st.skip_record]
        self._skipped_events -= record.events_avoided - int(record.events_avoided * (1 - left / full))
        self.skips[st.skip_record] = replace(
            record,
            dt=record.dt - left,
            events_avoided=int(record.events_avoided * (1 - left / full)),
            credited_bytes=record.credited_bytes - taken_back,
            limit=f"skip-back: {why}",
        )

    # ------------------------------------------------------------ the guard
    def _fork_skip_check(self, st: PartitionState, plan: SkipPlan) -> bool:
        """Fork to check a skip about to be made; True in the child, which must not make it."""
        flows = tuple(sorted(st.partition.flows))
        before = {f: int(self.tracker.GetDelivered(f)) for f in flows}
        dt_ns = int(plan.duration * 1e9)  # as _skip moves the partition
        check = PendingCheck(plan.start, flows, Fork(), before=before)
        if check.fork.in_child:
            self._become_child(check)
        else:
            end = int(self.ns3.Simulator.Now().GetTimeStep()) + max(1, dt_ns)
            heapq.heappush(self._checks, (end, next(self._check_order), check))
        self.simulator.ScheduleHousekeepingCallback(self.ns3.NanoSeconds(max(1, dt_ns)), self._on_check_end)
        return self.verifying is not None

    def replay_guard(self) -> tuple[frozenset[GuardKind], bool]:
        """(the memo shortcuts still allowed, should this batch of starts be checked): see MemoRun.replay_guard."""
        if self.guard is None:
            return frozenset(MEMO_KINDS), False
        allowed = frozenset(k for k in MEMO_KINDS if self.guard.allows(k))
        if GuardKind.RESUME not in allowed:
            allowed = frozenset()  # every replay may end in a resume
        return allowed, bool(allowed) and self.guard.selects(*allowed)

    def fork_replay_check(self, flows: tuple[int, ...]) -> PendingCheck | None:
        """Fork to check the memo's decisions on flows starting now; the parent's check (None in the child)."""
        check = PendingCheck(self.now(), flows, Fork())
        if check.fork.in_child:
            self._become_child(check)
            return None
        return check

    def replay_check_decided(self, check: PendingCheck, held: tuple[int, ...]) -> None:
        """The memo held these flows of a checked batch: compare each once it has ended here."""
        if not held:
            check.fork.abandon()  # every flow started for real: nothing to check
            return
        check.held = held
        self._memo_checks.append(check)
        self._compare_ended_memo_checks()

    def _compare_ended_memo_checks(self) -> None:
        """Compare the memo checks whose held flows have all ended (completed, or resumed and finished)."""
        ended = [c for c in self._memo_checks if set(c.held) <= self.finished]
        for check in ended:
            self._memo_checks.remove(check)
            self._compare(check)

    def _become_child(self, check: PendingCheck) -> None:
        """This process checks a decision: it makes none, and the memo starts every flow for real."""
        self.verifying = check
        self._checks.clear()  # the parent's checks are the parent's to compare
        self._memo_checks.clear()
        if self.memo is not None:
            self.memo.inert = True

    def on_check_end(self) -> None:
        """A skip check's end time: the child reports, the parent compares (checks end in the order forked)."""
        if self.verifying is not None:
            if self.verifying.is_skip:
                self._send_measurement(self.verifying)
            return
        now_ns = int(self.ns3.Simulator.Now().GetTimeStep())
        if self._checks and self._checks[0][0] <= now_ns:
            self._compare(heapq.heappop(self._checks)[2])

    def _send_measurement(self, check: PendingCheck) -> None:
        """Child: what the packet-level run gave for the decision's flows; then end this process."""
        assert check.fork.in_child
        if check.is_skip:
            check.fork.send_and_exit({str(f): int(self.tracker.GetDelivered(f)) for f in check.flows})
        finishes = {}
        for f in check.flows:
            outcome = read_outcome(self.tracker, f)
            finishes[str(f)] = outcome.fct
        check.fork.send_and_exit(finishes)

    def child_flow_finished(self) -> None:
        """A flow ended. Child checking a memo batch: report once its sized flows all finished for real.
        Parent: compare the memo checks whose held flows have all ended."""
        check = self.verifying
        if check is None:
            self._compare_ended_memo_checks()
            return
        if check.is_skip:
            return
        # an unlimited flow of the batch never finishes (and the memo never replays one)
        sized = {f for f in check.flows if int(self.tracker.GetSize(f))}
        if sized <= self.finished:
            self._send_measurement(check)

    def _compare(self, check: PendingCheck) -> None:
        """Parent: the decision's outcome against the child's packet-level measurement."""
        assert self.guard is not None
        measured = check.fork.receive()
        if measured is None:
            return  # the child died without a word: no measurement, nothing learned
        real = {int(f): v for f, v in measured.items()}
        if check.before is not None:
            ours = {f: int(self.tracker.GetDelivered(f)) for f in check.flows}
            sizes = {f: self.flows[f].size for f in check.flows}
            progress, error = skip_error(check.before, ours, real, sizes)
            self._record_check(GuardKind.SKIP, check.time, check.flows, error, progress_error=progress,
                               bytes_off=sum(abs(ours[f] - real[f]) for f in check.flows))
            return
        assert self.memo is not None, "a memo batch is checked only with a memo"
        kinds = self.memo.held_as(check.held)
        for kind in MEMO_KINDS:
            flows = tuple(sorted(f for f, k in kinds.items() if k is kind))
            if not flows:
                continue
            ended = {f: read_outcome(self.tracker, f).fct for f in flows}
            error = replay_error(ended, real)
            self._record_check(kind, check.time, flows, error,
                               fct_memo=max((v for v in ended.values() if v is not None), default=None),
                               fct_simulated=max((real[f] for f in flows if real.get(f) is not None), default=None))

    def _record_check(self, kind: GuardKind, time_s: float, flows: tuple[int, ...], error: float,
                      **detail: float | int | None) -> None:
        """Count one check of a kind; if it stops the kind, say so on stderr and in the skip trace."""
        assert self.guard is not None
        message = self.guard.record(kind, time_s, flows, error, **detail)
        if message is not None:
            print(f"wormhole-ns3: verify: {message}", file=sys.stderr, flush=True)
            self._guard_records.append(SkipRecord(
                time=self.now(), flow_ids=flows, dt=0.0, events_moved=0, events_avoided=0,
                credited_bytes=0, queue_packets=0, limit=f"{kind.value}s stopped", reason=message,
                kind=TraceKind.GUARD,
            ))

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
            f"\r[wormhole] t={now:.4f}s flows done {len(self.finished)}/{flows} "
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
        records = list(self.skips) + self._guard_records + self._backoff_records
        if self.memo is not None:
            records += [
                SkipRecord(
                    time=e.time, flow_ids=e.flows, dt=e.span, events_moved=0,
                    events_avoided=e.events_avoided, credited_bytes=0, queue_packets=0,
                    limit=e.kind.value, reason=e.detail, kind=e.kind.trace_kind, draws=e.draws,
                )
                for e in self.memo.events
            ]
        return sorted(records, key=lambda r: r.time)

    # ------------------------------------------------- what the memo driver asks
    def completed_virtually(self, flow: int) -> None:
        """The memo completed a held flow (its replayed completion was injected)."""
        self.finished.add(flow)
        self.child_flow_finished()

    def steady_events_avoided(self, flows: set[int]) -> int:
        """Packet-level events the skips of partitions made of these flows only avoided."""
        return sum(
            r.events_avoided for r in self.skips
            if r.kind is TraceKind.STEADY and set(r.flow_ids) <= flows
        )

    def event_count(self) -> int:
        return int(self.ns3.Simulator.GetEventCount())

    def system_event_count(self) -> int:
        return int(self.impl.GetSystemEventCount()) if self.impl is not None else 0
