"""Fakes of the C++ side, for unit tests of the controller's and the memo's decisions without ns-3.

``FakeNs3`` stands for the ``ns3`` namespace (times, the simulator's clock,
the run observer), ``FakeImpl`` for WormholeSimulatorImpl, ``FakeTracker`` for
the FlowTracker (the flow records ``runtime.boundary`` reads and the few
actions a skip takes), ``FakeBoundary`` for the cppyy boundary, and
``FakeMemoHost`` for what the Memoizer asks of a run (``core.ports.MemoHost``).
They record what they are told, so a test asserts the decisions. Each declares
the port it stands for (one of ``core/ports.py``'s Protocols) and
is ``@final``: mypy (pyproject.toml checks this file) fails on a fake that lacks a
method of its port or takes other arguments than the port does.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import final

from wormhole_ns3.core.draws import Draws, RandomSource
from wormhole_ns3.core.flows import SKIPPABLE_RDMA_KINDS, TrajectoryPoint
from wormhole_ns3.core.links import link_id, link_node
from wormhole_ns3.core.ports import (
    BoundaryPort,
    DueFlow,
    MemoHost,
    Release,
    SimulatorPort,
    Time,
    TrackerPort,
    Unforeseen,
)
from wormhole_ns3.core.transport import DCQCN, HPCC, TCP, TransportPolicy
from wormhole_ns3.memo.decisions import MemoDecision
from wormhole_ns3.memo.episodes import Memoizer

NEVER_NS = 10**15


@dataclass
class BufferVector:
    """A ``std::vector`` of 64-bit numbers as ``boundary.int_rows`` and ``length_prefixed`` read it."""

    values: list[int]
    typecode: str = "q"  #: "q" int64_t, "Q" uint64_t

    def size(self) -> int:
        return len(self.values)

    def data(self) -> bytes:
        return array(self.typecode, self.values).tobytes()


class FakeTime:
    def __init__(self, ns: int) -> None:
        self.ns = int(ns)

    def GetSeconds(self) -> float:
        return self.ns * 1e-9

    def GetTimeStep(self) -> int:
        return self.ns

    def IsNegative(self) -> bool:
        return self.ns < 0


class FakeSimulator:
    def __init__(self, ns3: FakeNs3) -> None:
        self._ns3 = ns3
        self.cancelled: list[object] = []

    def Now(self) -> FakeTime:
        return FakeTime(self._ns3.now_ns)

    def Cancel(self, event: object) -> None:
        self.cancelled.append(event)

    def GetImplementation(self) -> object:
        return self._ns3.impl

    def GetEventCount(self) -> int:
        return 0


class FakeRunObserver:
    def __init__(self) -> None:
        self.on_start = self.on_end = self.before_run = None

    def SetRunStartCallback(self, callback) -> None:
        self.on_start = callback

    def SetRunEndCallback(self, callback) -> None:
        self.on_end = callback

    def SetBeforeRunCallback(self, callback) -> None:
        self.before_run = callback


class _Identity:
    """``DynamicCast[T](x)``: the fake impl is a WormholeSimulatorImpl; anything else (a test's stand-in for an
    implementation the script chose) is not."""

    def __getitem__(self, _type):
        return lambda x: x if isinstance(x, FakeImpl) else None


@final
class FakeImpl(SimulatorPort):
    UNATTRIBUTED = 0
    WORKLOAD = 2**32 - 2

    def __init__(self) -> None:
        self.next_unattributed_ns = NEVER_NS
        self.moved: list[tuple[int, int, list[int]]] = []  #: (tag class, dt ns, exempt nodes)
        self.scheduled: list[tuple[int, object]] = []  #: (delay ns, callback)
        self.classes: dict[int, int] = {}
        self.events_per_tag: dict[int, int] = {}
        self.draws_per_tag: dict[int, int] = {}  #: random numbers each tag's events drew
        self.draw_nodes: dict[int, list[int]] = {}  #: the nodes each tag drew at

    def NextUnattributedEventTime(self) -> FakeTime:
        return FakeTime(self.next_unattributed_ns)

    def NextEventTimeOn(self, nodes) -> FakeTime:
        return FakeTime(NEVER_NS)

    def MoveClassExcept(self, tag_class: int, dt: Time, exempt) -> int:
        self.moved.append((tag_class, dt.GetTimeStep(), list(exempt)))
        return 7

    def MoveClass(self, tag_class: int, dt: Time) -> int:
        self.moved.append((tag_class, dt.GetTimeStep(), []))
        return 7

    def ScheduleSystemCallback(self, delay: Time, callback) -> tuple[int, object]:
        event = (delay.GetTimeStep(), callback)
        self.scheduled.append(event)
        return event

    def ScheduleHousekeepingCallback(self, delay: Time, callback) -> tuple[int, object]:
        return self.ScheduleSystemCallback(delay, callback)

    def WatchdogFired(self) -> bool:
        return False

    def GetWatchdogSince(self) -> FakeTime:
        return FakeTime(0)

    def GetEventTimeline(self) -> SimpleNamespace:
        """No instant marked: the timeline is the run's end alone."""
        return SimpleNamespace(GetTimes=list, GetCounts=list)

    def SetTagClass(self, tag: int, tag_class: int) -> None:
        self.classes[tag] = tag_class

    def GetTagsEventCount(self, tags: list[int]) -> int:
        return sum(self.events_per_tag.get(tag, 0) for tag in tags)

    def GetTagsDrawCount(self, tags: list[int]) -> int:
        return sum(self.draws_per_tag.get(tag, 0) for tag in tags)

    def GetTagsDrawNodes(self, tags: list[int]) -> list[int]:
        return sorted({node for tag in tags for node in self.draw_nodes.get(tag, [])})

    def GetCurrentTag(self) -> int:
        return 0

    def GetSystemEventCount(self) -> int:
        return 0


class FakeNs3:
    """The ``ns3`` namespace, as far as the controller uses it; ``now_ns`` is the simulator's clock."""

    WormholeSimulatorImpl = FakeImpl
    #: ns-3's seed and run number (the error guard seeds its draws from them).
    RngSeedManager = SimpleNamespace(GetSeed=lambda: 1, GetRun=lambda: 1)

    def __init__(self) -> None:
        self.now_ns = 0
        self.impl = FakeImpl()
        self.Simulator = FakeSimulator(self)
        self.RunObserver = FakeRunObserver()
        self.DynamicCast = _Identity()

    @staticmethod
    def NanoSeconds(ns: int) -> FakeTime:
        return FakeTime(ns)


@final
class FakeBoundary(BoundaryPort):
    """The cppyy boundary: a callback is the Python callable itself; vectors are tuples."""

    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.warmed_up = False
        self.simulator_warmed_up: object = None
        self.destroy_hooks: list = []

    def callback(self, function, *signature: str):
        return function

    def at_destroy(self, function) -> None:
        self.destroy_hooks.append(function)

    def double_vector(self, values) -> tuple[float, ...]:
        return tuple(values)

    def upcoming_flow_vector(self, flows) -> tuple:
        return tuple(flows)

    def warm_up(self, tracker, memo: bool) -> list[str]:
        self.warmed_up = True
        return []

    def warm_up_simulator(self, impl) -> None:
        self.simulator_warmed_up = impl

    def cxx(self, target):
        return target

    def memo(self, driver):
        return driver

    def run_started(self) -> None:
        pass

    def run_ended(self) -> None:
        pass


@dataclass
class FakeFlow:
    src_node: int
    dst_node: int
    size: int
    path: tuple[int, ...]
    reverse_path: tuple[int, ...]
    kind: str = "bulk-tcp"
    congestion_control: str = "ns3::TcpDctcp"
    #: the TCP sender's RTT estimator, as the tracker gives it one (FlowTracker::GetRttEstimator)
    rtt_estimator: str = "ns3::SkipAwareRttEstimator"
    start_ns: int = 0
    tag: int = 0
    state: int = 1  #: controller.PENDING, ACTIVE, FINISHED
    samples: list[int] = field(default_factory=list)  #: delivered bytes at each sampling instant
    #: bytes put on the network at the same instants (empty: as many as delivered, a queue holding still)
    sent: list[int] = field(default_factory=list)
    #: a paced flow's sending rate (bytes/s) and count of congestion notifications at the same
    #: instants (empty: paced at 10 Gb/s, never notified)
    pacing: list[float] = field(default_factory=list)
    notifications: list[int] = field(default_factory=list)
    #: a window-based flow's congestion window at the same instants (empty: one that never moves)
    windows: list[int] = field(default_factory=list)
    #: started and sending no data yet (FlowTracker::IsConnecting): a handshake on its links
    connecting: bool = False
    #: what its sender did that a skip could not reproduce (FlowTracker::GetSkipBlocker; 0: nothing)
    sender_blocker: int = 0
    credited: int = 0
    sampled: bool = True
    shifted_ns: int = 0


@final
class FakeTracker(TrackerPort):
    """The FlowTracker: flows with routes and delivered-bytes samples, links with rates and delays."""

    def __init__(self, link_rates_bps: dict[int, float], link_delay_ns: int = 10_000) -> None:
        self.flows: list[FakeFlow] = []
        self.link_rates_bps = link_rates_bps
        #: per link, the models there that may draw random numbers
        self.random_sources: dict[int, tuple[RandomSource, ...]] = {}
        self.link_delay_ns = link_delay_ns
        self.sampling: tuple[int, int, object] | None = None
        #: whether a sample calls the sampling callback (FlowTracker's default), and the samples taken
        self.samples_reported = True
        self.sample_count = 0
        self.unattributed_watched = True  # FlowTracker's default
        self.flow_monitors: list[tuple[object, object]] = []  #: (monitor, classifier) of each FlowMonitor added
        #: what a workload may release, at the earliest: (start ns, the links its data and ACK paths load)
        self.releases: list[tuple[int, frozenset[int]]] = []

    def add_flow(self, flow: FakeFlow) -> int:
        flow.tag = 100 + len(self.flows)
        self.flows.append(flow)
        return len(self.flows) - 1

    # -- what runtime.boundary.read_flow reads
    def GetKind(self, f: int) -> str:
        return self.flows[f].kind

    def GetSrcNode(self, f: int) -> int:
        return self.flows[f].src_node

    def IsPaced(self, f: int) -> bool:
        return self.flows[f].kind in SKIPPABLE_RDMA_KINDS  # the RDMA kinds: RdmaFlow::IsPaced

    def GetDstNode(self, f: int) -> int:
        return self.flows[f].dst_node

    def GetSrcAddress(self, f: int) -> str:
        return f"10.0.0.{self.flows[f].src_node}"

    def GetDstAddress(self, f: int) -> str:
        return f"10.0.0.{self.flows[f].dst_node}"

    def GetSrcPort(self, f: int) -> int:
        return 49152 + f

    def GetDstPort(self, f: int) -> int:
        return 5000

    def GetSize(self, f: int) -> int:
        return self.flows[f].size

    def GetStartTime(self, f: int) -> FakeTime:
        return FakeTime(self.flows[f].start_ns)

    def GetPath(self, f: int) -> tuple[int, ...]:
        return self.flows[f].path

    def GetReversePath(self, f: int) -> tuple[int, ...]:
        return self.flows[f].reverse_path

    def GetPlannedRoute(self, f: int) -> list[int]:
        """The data path's hop count, its links, then the ACK path's links (as FlowTracker lays them out)."""
        flow = self.flows[f]
        return [len(flow.path), *flow.path, *flow.reverse_path]

    def GetCongestionOps(self, f: int) -> str:
        return self.flows[f].congestion_control

    def GetRttEstimator(self, f: int) -> str:
        return self.flows[f].rtt_estimator

    def IsConstantRate(self, f: int) -> bool:
        return False

    def GetAppRate(self, f: int) -> float:
        return 0.0

    def GetTag(self, f: int) -> int:
        return self.flows[f].tag

    def GetSinkTotalRx(self, f: int) -> int:
        return 0

    def GetCredited(self, f: int) -> int:
        return self.flows[f].credited

    def GetFinishTime(self, f: int) -> FakeTime:
        return FakeTime(-1_000_000_000)

    # -- the batched reads, filled from the getters above as FlowTracker fills them
    def GetFlowRecord(self, f: int) -> SimpleNamespace:
        return SimpleNamespace(
            id=f, kind=self.GetKind(f), srcNode=self.GetSrcNode(f), dstNode=self.GetDstNode(f),
            src=self.GetSrcAddress(f), dst=self.GetDstAddress(f), sport=self.GetSrcPort(f),
            dport=self.GetDstPort(f), size=self.GetSize(f), start=self.GetStartTime(f).GetSeconds(),
            path=self.GetPath(f), reversePath=self.GetReversePath(f), congestionOps=self.GetCongestionOps(f),
            rttEstimator=self.GetRttEstimator(f), constantRate=self.IsConstantRate(f), paced=self.IsPaced(f),
            appRateBps=self.GetAppRate(f), tag=self.GetTag(f))

    def GetFlowOutcome(self, f: int) -> SimpleNamespace:
        finish = self.GetFinishTime(f).GetSeconds()
        return SimpleNamespace(
            id=f, kind=self.GetKind(f), src=self.GetSrcAddress(f), dst=self.GetDstAddress(f),
            sport=self.GetSrcPort(f), dport=self.GetDstPort(f), size=self.GetSize(f),
            start=self.GetStartTime(f).GetSeconds(), finish=finish if finish >= 0 else -1.0,
            rxBytes=self.GetSinkTotalRx(f), credited=self.GetCredited(f), standalone=0.0)

    # -- run bookkeeping
    def GetNFlows(self) -> int:
        return len(self.flows)

    def TakeCreatedFlows(self, first: int, gate: bool) -> BufferVector:
        """FlowTracker's layout: the time, tag and event count (0 here), then each flow from ``first`` on."""
        assert not gate, "the fake tracker gates no start (no memo)"
        values = [0, 0, 0]
        for f in range(first, len(self.flows)):
            flow = self.flows[f]
            start_bits = int.from_bytes(struct.pack("<d", self.GetStartTime(f).GetSeconds()), "little", signed=True)
            values += [f, flow.state, start_bits, flow.src_node, flow.dst_node, flow.size, 0, -1]
        return BufferVector(values)

    def GetState(self, f: int) -> int:
        return self.flows[f].state

    def IsConnecting(self, f: int) -> bool:
        return self.flows[f].connecting

    def GetEarliestReleaseOn(self, links: list[int], horizon: Time) -> FakeTime:
        starts = [start for start, loads in self.releases if loads & set(links)]
        return FakeTime(min(starts, default=NEVER_NS))

    def Discover(self) -> None:
        pass

    def SetFlowEventCallback(self, callback) -> None:
        self.on_flow_event = callback

    def WatchUnattributedEvents(self, callback) -> None:
        self.after_unattributed = callback

    def FollowRunTimeFlows(self) -> None:
        self.follows_run_time_flows = True

    def AddFlowMonitor(self, monitor: object, classifier: object) -> None:
        self.flow_monitors.append((monitor, classifier))

    def SetUnattributedEventsWatched(self, watched: bool) -> None:
        self.unattributed_watched = watched

    def ConfigureSampling(self, period: Time, window: int, callback) -> None:
        self.sampling = (period.GetTimeStep(), window, callback)

    def SetSamplesReported(self, reported: bool) -> None:
        self.samples_reported = reported

    def GetSampleCount(self) -> int:
        return self.sample_count

    def take_sample(self) -> None:
        """The sampling event: counted, and reported to the sampling callback unless the controller said not to."""
        assert self.sampling is not None, "no sampling configured"
        self.sample_count += 1
        callback = self.sampling[2]
        assert callable(callback)
        if self.samples_reported:
            callback()

    def GetLinkRate(self, link: int) -> float:
        return self.link_rates_bps[link]

    def GetLinkDelay(self, link: int) -> FakeTime:
        return FakeTime(self.link_delay_ns)

    def GetQueuedPackets(self, link: int) -> int:
        return 3

    def GetLinkRandomSources(self, link: int) -> list[SimpleNamespace]:
        """``wormhole::RandomSource``s: ``what`` and ``needsQueue``, from ``random_sources``."""
        return [SimpleNamespace(what=s.what, needsQueue=s.needs_queue) for s in self.random_sources.get(link, ())]

    # -- samples and progress
    def GetSamples(self, f: int) -> list[int]:
        return list(self.flows[f].samples)

    def GetSentSamples(self, f: int) -> list[int]:
        flow = self.flows[f]
        return list(flow.sent or flow.samples)

    def GetSendingRateSamples(self, f: int) -> list[float]:
        flow = self.flows[f]
        return list(flow.pacing or [1.25e9] * len(flow.samples))

    def GetNotificationSamples(self, f: int) -> list[int]:
        flow = self.flows[f]
        return list(flow.notifications or [0] * len(flow.samples))

    def GetWindowSamples(self, f: int) -> list[int]:
        flow = self.flows[f]
        return list(flow.windows or [0] * len(flow.samples))

    def TakeProgressedFlows(self) -> list[int]:
        """Flows whose last two delivered-bytes samples differ (a test sets whole sample lists at once)."""
        return [f for f, flow in enumerate(self.flows) if len(flow.samples) < 2 or flow.samples[-1] != flow.samples[-2]]

    def ClearSamples(self, flows: list[int]) -> None:
        for f in flows:
            self.flows[f].samples = []
            self.flows[f].sent = []

    def SetSampled(self, f: int, sampled: bool) -> None:
        self.flows[f].sampled = sampled

    def IsQuiet(self, f: int) -> bool:
        return True

    def GetDelivered(self, f: int) -> int:
        samples = self.flows[f].samples
        return (samples[-1] if samples else 0) + self.flows[f].credited

    def GetSendable(self, f: int) -> int:
        return 10**12

    def GetSkipBlocker(self, f: int) -> int:
        return self.flows[f].sender_blocker

    # -- a skip's actions
    def Credit(self, f: int, nbytes: int) -> int:
        self.flows[f].credited += nbytes
        return nbytes

    def Uncredit(self, f: int, nbytes: int) -> int:
        self.flows[f].credited -= nbytes
        return nbytes

    def ShiftTimes(self, f: int, dt: Time) -> None:
        self.flows[f].shifted_ns += dt.GetTimeStep()

    def ShiftMonitoredPackets(self, f: int, dt: Time) -> None:
        pass


def dumbbell(senders: int, bottleneck_bps: float = 1e9, access_bps: float = 10e9,
             delay_ns: int = 10_000) -> tuple[FakeTracker, list[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """A tracker over ``senders`` hosts (nodes 1..n) -> switch 50 -> receiver 60, and each sender's route.

    The switch's port 1 towards the receiver is the bottleneck; ACKs come back over
    the receiver's port 1 and the switch's port 1 + sender.
    """
    switch, receiver = 50, 60
    bottleneck = link_id(switch, 1)
    rates = {bottleneck: bottleneck_bps, link_id(receiver, 1): access_bps}
    routes: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    for host in range(1, senders + 1):
        up, down = link_id(host, 1), link_id(switch, 1 + host)
        rates[up] = rates[down] = access_bps
        routes.append(((up, bottleneck), (link_id(receiver, 1), down)))
    return FakeTracker(rates, delay_ns), routes


@final
@dataclass
class FakeMemoHost(MemoHost):
    """``core.ports.MemoHost``: flows with routes and attributes; it records the Memoizer's actions."""

    routes: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    attributes: dict[int, str] = field(default_factory=dict)
    blockers: dict[int, str] = field(default_factory=dict)
    paced: set[int] = field(default_factory=set)  #: flows a rate-based congestion control paces (RDMA)
    grouped: set[int] = field(default_factory=set)  #: paced flows of DCQCN's kind (joiners matched in any order)
    hpcc: set[int] = field(default_factory=set)  #: paced flows of HPCC's kind (ranks kept); paced ones default to it
    due: list[tuple[int, frozenset[int]]] = field(default_factory=list)  #: flows known to start: (time ns, links)
    #: flows the workload may start (at the earliest at these times) that no known end releases
    unforeseen: list[tuple[int, frozenset[int]]] = field(default_factory=list)
    #: the workload: a flow -> the flows its end releases, each after a delay (ns)
    released_after: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    drain_ns: int = 0  #: how long any episode's flows take at least
    queues: dict[int, int] = field(default_factory=dict)  #: link -> packets queued on it now
    trajectories: dict[int, list[TrajectoryPoint]] = field(default_factory=dict)
    events: int = 10_000  #: events an episode took to simulate
    #: flow -> random numbers it drew (and the digest of what it drew): a flow absent drew none
    draws: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: link -> the models there that may draw random numbers
    random_sources: dict[int, tuple[RandomSource, ...]] = field(default_factory=dict)
    rate_bps: float = 10e9  #: every link's rate
    #: nodes where flows drew random numbers so far
    drawing_nodes: frozenset[int] = frozenset()
    #: the first flow a callback on a flow's delivery created, described (None: none yet)
    delivery_creation: str | None = None
    #: how long an owed end of transfer takes to leave a link's egress (None: no flow can owe one)
    end_hop_ns: int | None = None
    delay_ns: int = 1_000  #: every link's propagation delay
    owing: list[int] = field(default_factory=list)  #: flows whose next completion owes its end of transfer
    ends_sent: list[int] = field(default_factory=list)  #: owed ends of transfer put on the wire, in order
    started: list[int] = field(default_factory=list)
    held: list[int] = field(default_factory=list)
    completions: dict[int, int] = field(default_factory=dict)  #: flow -> time (ns) of its scheduled completion
    cancelled: list[int] = field(default_factory=list)
    completed_now: list[int] = field(default_factory=list)
    resumed: dict[int, tuple[int, tuple[float, ...] | None]] = field(default_factory=dict)
    calls: list[tuple[int, object]] = field(default_factory=list)
    #: whether the run's shortcuts paid for its bets (``core/backoff.py``); flows recorded so far
    paid: bool = True
    recorded: int = 0

    def add(self, flow: int, route: tuple[tuple[int, ...], tuple[int, ...]],
            attributes: str = "bulk-tcp size=1000000 cc=ns3::TcpDctcp{}") -> None:
        self.routes[flow] = route
        self.attributes[flow] = attributes

    # facts
    def flow_route(self, flow: int):
        return self.routes[flow]

    def flow_attributes(self, flow: int) -> str:
        return self.attributes[flow]

    def link_attributes(self, link: int) -> str:
        return "DataRate=10Gbps Delay=10us queue=FifoQueueDisc"

    def link_queues(self, links: Sequence[int]) -> list[int]:
        return [self.queues.get(link, 0) for link in links]

    def flow_nodes(self, flow: int) -> tuple[int, int]:
        data, ack = self.routes[flow]  # a flow's first data and ACK links stand for its ends
        return data[0], ack[0]

    def memo_blocker(self, flow: int) -> str | None:
        return self.blockers.get(flow)

    def flow_transport(self, flow: int) -> TransportPolicy:
        """DCQCN's for a grouped flow, HPCC's for an HPCC one or another paced one, TCP's else."""
        if flow in self.grouped:
            return DCQCN
        return HPCC if flow in self.hpcc or flow in self.paced else TCP

    def trajectory(self, flow: int) -> list[TrajectoryPoint]:
        return list(self.trajectories.get(flow, []))

    def upcoming(self, now_ns: int, horizon_ns: int) -> list[DueFlow]:
        released = self.releases(now_ns, horizon_ns, {}, [])  # the due flows, and what scheduled completions release
        return [DueFlow(start, links, nodes) for start, links, nodes, _, _ in released]

    def _nodes_of(self, links: frozenset[int]) -> tuple[int, int]:
        """A due flow's nodes: those of the flow added with these links (else the lowest and highest link)."""
        flow = next((f for f, (data, ack) in self.routes.items() if frozenset(data + ack) == links), None)
        return self.flow_nodes(flow) if flow is not None else (min(links), max(links))

    def releases(self, now_ns: int, horizon_ns: int, flow_ends: dict[int, int], coming_ends: list[tuple[int, int]],
                 ) -> list[Release]:
        """What ends release (one step: the Memoizer follows chains itself), the scheduled completions included,
        and the due flows, as the workload's answer holds them too."""
        ends = self.completions | flow_ends | dict(coming_ends)
        released = [Release(end + delay, frozenset(sum(self.routes[flow], ())), self.flow_nodes(flow), flow, flow)
                    for ender, end in sorted(ends.items()) for flow, delay in self.released_after.get(ender, [])
                    if end + delay <= now_ns + horizon_ns and flow not in self.started and flow not in self.held]
        return self.due_flows(now_ns, horizon_ns) + released

    def due_flows(self, now_ns: int, horizon_ns: int) -> list[Release]:
        """The due flows as ``releases`` names flows (what the workload's answer holds besides what ends release)."""
        return [Release(start, links, self._nodes_of(links), -1000 - i, -1000 - i)
                for i, (start, links) in enumerate(self.due)
                if now_ns < start <= now_ns + horizon_ns]

    def unforeseeable(self, now_ns: int, links: frozenset[int], horizon_ns: int, ends: dict[int, int],
                      own, beyond_ns: int) -> list[Unforeseen]:
        """``MemoHost.unforeseeable`` from ``releases`` and ``earliest``: the unforeseen flows reach their links."""
        released = self.releases(now_ns, horizon_ns, ends, [])
        foreseen = {(task, start) for start, _, _, task, _ in released}
        joiners = [(route, handle) for _, route, _, _, handle in released if route & links]
        held = set(links).union(*(route for route, _ in joiners))
        own_ends = {flow: beyond_ns for flow in own} | ends
        earliest = self.earliest(now_ns, horizon_ns, own_ends, [(handle, beyond_ns) for _, handle in joiners])
        return [Unforeseen(start, route & held) for start, route, task in earliest
                if (task, start) not in foreseen and route & held]

    def earliest(self, now_ns: int, horizon_ns: int, flow_ends: dict[int, int], coming_ends: list[tuple[int, int]],
                 ) -> list[tuple[int, frozenset[int], int]]:
        """What the known ends release, and the unforeseen flows (tasks numbered below zero): (start, links, task)."""
        known = [(start, links, task) for start, links, _, task, _ in self.releases(
            now_ns, horizon_ns, flow_ends, coming_ends)]
        return known + [(start, links, -1 - i) for i, (start, links) in enumerate(self.unforeseen)
                        if now_ns <= start <= now_ns + horizon_ns]

    def drain_time_ns(self, flows) -> int:
        return self.drain_ns

    def episode_events(self, flows) -> tuple[int, int]:
        return self.events, 0

    def episode_draws(self, flows) -> Draws:
        """A drawing flow draws at the nodes of its data path."""
        drawing = [f for f in flows if f in self.draws]
        if not drawing:
            return Draws()
        nodes = sorted({link_node(link) for f in drawing for link in self.routes[f][0]})
        return Draws(sum(self.draws[f][0] for f in drawing),
                     hash(tuple(self.draws[f][1] for f in drawing)) & (2**64 - 1), tuple(nodes))

    def link_random_sources(self, link: int) -> tuple[RandomSource, ...]:
        return self.random_sources.get(link, ())

    def link_rate(self, link: int) -> float:
        return self.rate_bps

    def drawn_nodes(self) -> frozenset[int]:
        return self.drawing_nodes

    def delivery_started(self) -> str | None:
        return self.delivery_creation

    # actions
    def start_flow(self, flow: int) -> None:
        self.started.append(flow)

    def hold_flow(self, flow: int) -> None:
        self.held.append(flow)

    def complete_flow_at(self, flow: int, time_ns: int) -> None:
        self.completions[flow] = time_ns

    def complete_flow_now(self, flow: int) -> None:
        self.completed_now.append(flow)

    def owe_end_of_transfer(self, flow: int) -> tuple[tuple[int, int], ...] | None:
        if self.end_hop_ns is None or any(self.queues.get(link, 0) for link in self.routes[flow][1]):
            return None
        self.owing.append(flow)
        step = self.end_hop_ns + self.delay_ns
        return tuple((hop * step, hop * step + self.end_hop_ns) for hop in range(len(self.routes[flow][1])))

    def link_delay_ns(self, link: int) -> int:
        return self.delay_ns

    def send_end_of_transfer(self, flow: int) -> None:
        self.owing.remove(flow)
        self.ends_sent.append(flow)

    def cancel_completion(self, flow: int) -> None:
        self.cancelled.append(flow)
        self.completions.pop(flow, None)

    def resume_flow(self, flow: int, delivered: int, state) -> None:
        self.resumed[flow] = (delivered, state)

    def call_at(self, time_ns: int, action) -> None:
        self.calls.append((time_ns, action))

    def bets_paid(self) -> bool:
        return self.paid

    def recorded_flow(self) -> None:
        self.recorded += 1


# ------------------------------------------------ driving a Memoizer over a FakeMemoHost
MS = 1_000_000  # ns


def incast(host: FakeMemoHost, first_flow: int, switch: int, senders: int = 2) -> list[int]:
    """``senders`` flows into one receiver behind ``switch`` (links numbered after the switch)."""
    receiver, bottleneck = switch + 1, link_id(switch, 1)
    flows = []
    for i in range(senders):
        sender = switch + 2 + i
        data = (link_id(sender, 1), bottleneck)
        ack = (link_id(receiver, 1), link_id(switch, 2 + i))
        host.add(first_flow + i, (data, ack))
        flows.append(first_flow + i)
    return flows


def kinds(memo: Memoizer) -> list[MemoDecision]:
    return [event.kind for event in memo.trace]


def record_episode(memo: Memoizer, host: FakeMemoHost, flows: list[int], t0: int, finishes: list[int]) -> None:
    """Flows arrive at ``t0`` and are simulated; each finishes ``finishes[i]`` ns later."""
    memo.arrive(t0, flows)
    for flow, after in sorted(zip(flows, finishes), key=lambda x: x[1]):
        host.trajectories[flow] = [TrajectoryPoint(t0 + after // 2, 500_000, (10.0, 20.0)),
                                   TrajectoryPoint(t0 + after, 1_000_000, (12.0, 20.0))]
        memo.finished(t0 + after, flow)
