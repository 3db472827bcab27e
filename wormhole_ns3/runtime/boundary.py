"""The Python side of the C++ boundary: every cppyy construct the accelerator uses, in one place.

The controller and the memo driver work on plain Python values; what turns a
Python callable into an ``ns3::Callback``, a tuple into a ``std::vector``, or
a flow's getters into a ``FlowInfo`` lives here, so a change of the shim's
interface (a batched getter, a renamed method) is a change of this module.
Nothing here imports cppyy or ns-3 at import time: each function takes the
loaded ``ns3`` namespace (``runtime.native.load().ns3``) or a C++ object.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from types import CodeType
from typing import Any

import numpy as np

from wormhole_ns3.core.flows import FlowInfo, FlowResult
from wormhole_ns3.core.ports import (
    BoundaryPort,
    CreatedFlow,
    Creation,
    LookupFact,
    MemoSimulatorPort,
    MemoTrackerPort,
    TrackerPort,
    Wrapped,
)
from wormhole_ns3.runtime.profile import RunProfile, Section


class Boundary(BoundaryPort):
    """The cppyy side of one run: callbacks C++ calls, vectors it takes, the warm-up.

    The controller and the memo driver reach C++ constructs only through this
    object (a test hands them a fake one). A callback's exception is kept
    (``error``), not thrown into C++, and every later callback does nothing:
    the run finishes and the error is reported after Run() returns. Every
    wrapper is kept alive, since C++ holds it past the Python call that made it.
    """

    def __init__(self, ns3: Any, profile: RunProfile | None = None) -> None:
        """With a ``profile``, callbacks, the C++ objects handed out by ``cxx`` and the memo are timed."""
        self.ns3 = ns3
        self.error: BaseException | None = None
        self.profile = profile
        self._alive: list[object] = []
        self._guarded_code: CodeType | None = None

    def callback(self, function: Callable[..., None], *signature: str) -> Any:
        """``ns3::Callback<void, signature...>`` calling ``function``, guarded as the class says."""
        body = function if self.profile is None else self.profile.callback(function, _section_of(function))

        def guarded(*args: Any) -> None:
            if self.error is not None:
                return
            try:
                body(*args)
            except BaseException as error:  # noqa: BLE001 - reported after Run() returns
                self.error = error

        std_function, callback = make_callback(self.ns3, guarded, *signature)
        self._alive += [guarded, std_function, callback]
        #: the code of every guarded callback: C++ calls it straight from Run()
        self._guarded_code = guarded.__code__
        return callback

    def cxx(self, target: Wrapped) -> Wrapped:
        """A C++ object the accelerator calls (tracker, simulator): timed as boundary calls when profiling
        (a proxy with the same methods, so it implements the same port)."""
        return target if self.profile is None else self.profile.timed_object(target, Section.BOUNDARY)

    def memo(self, driver: Wrapped) -> Wrapped:
        """The memo driver, its methods timed as memo when profiling."""
        return driver if self.profile is None else self.profile.timed_object(driver, Section.MEMO)

    def run_started(self) -> None:
        """Called from a callback's body at the start of Run(): the profile starts watching Python entries."""
        if self.profile is not None:
            self.profile.run_started(self._guarded_code)

    def run_ended(self) -> None:
        if self.profile is not None:
            self.profile.run_ended()

    def at_destroy(self, function: Callable[[], None]) -> None:
        """Call ``function`` from Simulator::Destroy(), before the simulator itself is freed."""
        def guarded() -> None:
            try:
                function()
            except BaseException as error:  # noqa: BLE001 - reported after the script ends
                self.error = self.error or error

        std_function = self.ns3.cppyy.gbl.std.function["void()"](guarded)
        self._alive += [guarded, std_function]
        self.ns3.Simulator.ScheduleDestroy(self.ns3.MakeEvent(std_function))

    def double_vector(self, values: Iterable[float]) -> Any:
        return double_vector(self.ns3, values)

    def upcoming_flow_vector(self, flows: Iterable[Any]) -> Any:
        return upcoming_flow_vector(self.ns3, flows)

    def warm_up(self, tracker: MemoTrackerPort, memo: bool) -> list[str]:
        bound = warm_up(self.ns3, tracker, memo)
        warm_up_templates(self.ns3)
        return bound

    def warm_up_simulator(self, impl: MemoSimulatorPort) -> None:
        warm_up_simulator(self.ns3, impl)


def _section_of(function: Callable[..., Any]) -> Section:
    """Whose decisions a callback makes: the memo's, or the controller's."""
    module = getattr(function, "__module__", "") or ""
    return Section.MEMO if module.startswith("wormhole_ns3.memo") else Section.CONTROLLER


def make_callback(ns3: Any, function: Callable[..., None], *signature: str) -> tuple[Any, Any]:
    """``ns3::Callback<void, signature...>`` calling ``function``, with the std::function it wraps.

    Both must outlive every call C++ makes (Boundary.callback keeps them). Wrapping costs
    a JIT (tens of ms) where runtime.trampoline is not installed (plain runs): make
    callbacks before Run(), not inside it.
    """
    std_function = ns3.cppyy.gbl.std.function[f"void({','.join(signature)})"](function)
    return std_function, ns3.Callback[("void",) + signature](std_function)


def double_vector(ns3: Any, values: Iterable[float]) -> Any:
    """A ``std::vector<double>`` holding ``values``."""
    vector = ns3.cppyy.gbl.std.vector["double"]()
    for value in values:
        vector.push_back(float(value))
    return vector


def upcoming_flow_vector(ns3: Any, flows: Iterable[Any]) -> Any:
    """A ``std::vector<UpcomingFlow>`` holding copies of ``flows`` (as FlowTracker::GetUpcomingFlows named them)."""
    vector = ns3.cppyy.gbl.std.vector[ns3.UpcomingFlow]()
    for flow in flows:
        vector.push_back(flow)
    return vector


def int_rows(vector: Any, width: int) -> list[list[int]]:
    """A ``std::vector<int64_t>`` of ``width`` fields per row, as rows of ints.

    Copied out in one piece through its buffer: read element by element, a
    lookup's few hundred upcoming flows (five fields each) cost more than the
    C++ walk that found them. Rows are lists, as numpy gives them: made tuples,
    moe-8x7b-64g-dcqcn's 2.5 million upcoming flows took 0.3 s more.
    """
    size = int(vector.size())
    if size == 0:
        return []
    rows: list[list[int]] = np.frombuffer(vector.data(), dtype=np.int64, count=size).reshape(-1, width).tolist()
    return rows


def int_values(vector: Any) -> list[int]:
    """A ``std::vector<int64_t>`` as ints, copied out in one piece (as ``int_rows``)."""
    size = int(vector.size())
    if size == 0:
        return []
    values: list[int] = np.frombuffer(vector.data(), dtype=np.int64, count=size).tolist()
    return values


def length_prefixed(vector: Any) -> list[list[int]]:
    """A ``std::vector<uint64_t>`` of runs, each its length then its numbers, as lists of ints.

    Copied out in one piece through its buffer, as ``int_rows``.
    """
    size = int(vector.size())
    if size == 0:
        return []
    flat: list[int] = np.frombuffer(vector.data(), dtype=np.uint64, count=size).tolist()
    runs, at = [], 0
    while at < size:
        length = flat[at]
        runs.append(flat[at + 1:at + 1 + length])
        at += 1 + length
    return runs


#: A row of FlowTracker::TakeCreatedFlows (CreatedFlows::FIELDS numbers, its start time a double's bits).
CREATED_FLOW = np.dtype([("flow", np.int64), ("state", np.int64), ("start_s", np.float64), ("src", np.int64),
                         ("dst", np.int64), ("size", np.int64), ("start_uid", np.int64), ("gated_ns", np.int64)])
#: The numbers before the rows: the time (ns), the running event's tag, the event count (CreatedFlows::HEADER).
CREATED_HEADER = 3


def created_flows(vector: Any) -> Creation:
    """FlowTracker::TakeCreatedFlows's ``std::vector<int64_t>`` as a Creation, copied out in one piece."""
    flat = np.frombuffer(vector.data(), dtype=np.int64, count=int(vector.size()))
    now, tag, events = flat[:CREATED_HEADER].tolist()
    rows = flat[CREATED_HEADER:].view(CREATED_FLOW).tolist()
    return Creation(now, tag, events, [CreatedFlow(flow, state, start_s, (src, dst), size, uid, gated)
                                       for flow, state, start_s, src, dst, size, uid, gated in rows])


#: Numbers per flow of FlowTracker::GetLookupFacts before its links (LookupFacts::FIELDS).
LOOKUP_FIELDS = 6


def lookup_facts(facts: Any) -> list[LookupFact]:
    """FlowTracker::GetLookupFacts's ``FlowFacts`` as one LookupFact a flow, in the order asked.

    Its numbers are copied out in one piece (``int_values``) and its texts cut
    from one string by their byte lengths.
    """
    numbers, text = int_values(facts.numbers), str(facts.text).encode()
    found, at, cut = [], 0, 0
    while at < len(numbers):
        paced, kind, fingerprint, ops, hops, reverse = numbers[at:at + LOOKUP_FIELDS]
        at += LOOKUP_FIELDS
        route = tuple(numbers[at:at + hops]), tuple(numbers[at + hops:at + hops + reverse])
        at += hops + reverse
        texts = text[cut:cut + kind], text[cut + kind:cut + kind + fingerprint], text[cut + kind + fingerprint:
                                                                                      cut + kind + fingerprint + ops]
        cut += kind + fingerprint + ops
        found.append(LookupFact(route, bool(paced), *(part.decode() for part in texts)))
    return found


def queued_packets(tracker: MemoTrackerPort, links: Sequence[int]) -> list[int]:
    """The packets queued at each of ``links`` (FlowTracker::GetQueuedPackets), in one crossing: a numpy
    array of the links that C++ overwrites with their queues (no vector made and read back)."""
    if not links:
        return []
    buffer = np.array(links, dtype=np.int64)
    tracker.ReadQueuedPackets(buffer, len(links))
    queued: list[int] = buffer.tolist()
    return queued


def unforeseen(vector: Any) -> list[tuple[int, list[int]]]:
    """A ``std::vector<int64_t>`` of FlowTracker::GetUnforeseeable's flows, each its start (ns), how many
    links it reaches and those links, as (start, links). Copied out in one piece (``int_values``)."""
    flat = int_values(vector)
    found, at = [], 0
    while at < len(flat):
        start, length = flat[at], flat[at + 1]
        found.append((start, flat[at + 2:at + 2 + length]))
        at += 2 + length
    return found


def planned_route(tracker: TrackerPort, flow: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A flow's planned data and ACK paths (``FlowTracker::GetPlannedRoute``): one call, one route walk."""
    route = list(tracker.GetPlannedRoute(flow))  # a vector of integers: Python ints, copied in one pass
    hops = route[0]
    return tuple(route[1:1 + hops]), tuple(route[1 + hops:])


def read_flow(tracker: TrackerPort, flow: int) -> FlowInfo:
    """What a flow is and where it goes, from the tracker (once the flow sends): one call, one struct."""
    return flow_info(tracker.GetFlowRecord(flow), flow)


def flow_info(record: Any, flow: int) -> FlowInfo:
    """A ``FlowRecord``'s fields as a FlowInfo (its strings and vectors converted)."""
    return FlowInfo(
        id=flow,
        kind=str(record.kind),
        src_node=int(record.srcNode),
        dst_node=int(record.dstNode),
        src=str(record.src),
        dst=str(record.dst),
        sport=int(record.sport),
        dport=int(record.dport),
        size=int(record.size),
        start=float(record.start),
        path=tuple(record.path),  # a vector of integers: Python ints, copied in one pass
        reverse_path=tuple(record.reversePath),
        congestion_control=str(record.congestionOps),
        rtt_estimator=str(record.rttEstimator),
        constant_rate=bool(record.constantRate),
        paced=bool(record.paced),
        app_rate=float(record.appRateBps) / 8.0,
        tag=int(record.tag),
    )


def read_outcome(tracker: TrackerPort, flow: int) -> FlowResult:
    """What a run produced for a flow (started or not), from the tracker: one call, one struct."""
    return flow_result(tracker.GetFlowOutcome(flow), flow)


def flow_result(outcome: Any, flow: int) -> FlowResult:
    """A ``FlowOutcome``'s fields as a FlowResult (its strings converted)."""
    start, finish = float(outcome.start), float(outcome.finish)
    return FlowResult(
        id=flow,
        kind=str(outcome.kind),
        src=str(outcome.src),
        dst=str(outcome.dst),
        sport=int(outcome.sport),
        dport=int(outcome.dport),
        bytes=int(outcome.size),
        start=start,
        rx_bytes=int(outcome.rxBytes),
        fct=(finish - start) if finish >= 0 else None,
        credited_bytes=int(outcome.credited),
        standalone_fct=float(outcome.standalone),
    )


#: FlowTracker methods the controller calls during a run (taking a flow as first argument).
CONTROLLER_METHODS = (
    "GetFlowRecord", "GetFlowOutcome", "GetState", "GetStartTime", "IsConnecting",
    "GetDelivered", "GetSendable", "GetSamples", "ClearSamples", "IsQuiet",
    "GetSentSamples", "GetSendingRateSamples", "GetNotificationSamples", "GetWindowSamples",
    "GetPlannedRoute", "ShiftTimes", "Credit", "Uncredit", "SetSampled", "GetSkipBlocker",
    # taking a link
    "GetLinkRate", "GetLinkDelay", "GetQueuedPackets", "GetLinkRandomSources",
)

#: FlowTracker methods the memo driver adds.
MEMO_METHODS = (
    "GetKind", "GetSize", "GetTag", "GetDstNode",
    "GetStartEventUid", "GetStartEventUids", "GateStart", "DecideStart", "DecideStarts", "CompleteVirtually",
    "OweEndOfTransfer", "SendOwedEndOfTransfer",
    "GetFlowFingerprint", "GetPlannedCongestionOps", "GetLookupFacts", "ReadQueuedPackets",
    "GetSnapshots", "SetSnapshotting",
    "ResumeHeld", "GetUpcomingFlows", "GetUpcomingFlowFields", "GetUpcomingFlowRoutes",
    "GetUpcomingDue", "GetUnforeseeable",
    # taking a link
    "IsLossless", "GetLinkFingerprint",
)


#: FlowTracker methods taking no flow that the controller calls inside Run() (warm_up calls them too).
SETTERS = ("SetFlowEventCallback", "ConfigureSampling", "SetSamplesReported", "GetSampleCount",
           "SetUnattributedEventsWatched", "GetNFlows", "TakeProgressedFlows", "TakeCreatedFlows")


def warm_up(ns3: Any, tracker: MemoTrackerPort, memo: bool) -> list[str]:
    """Bind the tracker methods a run calls now, not inside the timed Run(); return those bound.

    cppyy compiles a wrapper at a method's first call (tens of ms each). Each
    method is called once on flow 0 (or link 0), which does not exist yet: the
    tracker throws std::out_of_range after the wrapper exists, and that exception
    alone is expected (any other is an interface mismatch, and raised). The
    simulator itself is not touched, so a script may still choose its
    implementation. The ``SETTERS`` are called with what the tracker
    holds before Run() (the controller sets them when it starts), and an
    empty ``FlowRecord`` is read: converting its strings and vectors costs a
    JIT of its own at the first flow otherwise.
    """
    out_of_range = ns3.cppyy.gbl.std.out_of_range
    refused = (out_of_range, ns3.cppyy.gbl.std.invalid_argument)
    arguments: dict[str, tuple[Any, ...]] = {
        "SetSampled": (0, True), "Credit": (0, 0), "Uncredit": (0, 0),
        "SetSnapshotting": (0, False), "DecideStart": (0, False),
        "ShiftTimes": (0, ns3.NanoSeconds(0)), "ClearSamples": ([0],),
        "ResumeHeld": (0, double_vector(ns3, ())),
        "GetUpcomingFlows": (ns3.NanoSeconds(0), [0], [0], upcoming_flow_vector(ns3, ()), []),
        "GetUpcomingFlowFields": (upcoming_flow_vector(ns3, ()),),
        "GetUpcomingFlowRoutes": (upcoming_flow_vector(ns3, ()), []),
        # one number that is no query: refused (std::invalid_argument) once the wrapper exists
        "GetUnforeseeable": (0, 0, np.zeros(1, dtype=np.int64), 1, 0, 0),
        "GetStartEventUids": (np.zeros(1, dtype=np.int64), 1),  # flow 0: out of range
        "GetUpcomingDue": (0, np.zeros(1, dtype=np.int64), 1, 0),  # one number that is no pair: refused
        "DecideStarts": (np.zeros(1, dtype=np.int64), 1),  # one number that is no pair: refused
        "GetLookupFacts": (np.zeros(1, dtype=np.int64), 1, True, True),  # flow 0: out of range
        "ReadQueuedPackets": (np.zeros(1, dtype=np.int64), 0),  # no link: nothing read
        # no flow ever has this index: refused even once flow 0 exists (these change a flow's state)
        "OweEndOfTransfer": (2**32 - 1,), "SendOwedEndOfTransfer": (2**32 - 1,),
    }
    bound = []
    for name in CONTROLLER_METHODS + (MEMO_METHODS if memo else ()):
        method = getattr(tracker, name)
        try:
            method(*arguments.get(name, (0,)))
        except refused:
            pass  # there is no flow 0 yet (or no query): the wrapper exists all the same
        bound.append(name)
    # these take no flow: each is given what the tracker holds until Run() starts
    # (null callbacks, no sampling), so that only the wrappers remain
    tracker.SetFlowEventCallback(ns3.Callback[("void", "unsigned int", "int")]())
    tracker.ConfigureSampling(ns3.Time(), 0, ns3.Callback[("void",)]())
    tracker.SetSamplesReported(True)
    tracker.GetSampleCount()
    tracker.SetUnattributedEventsWatched(True)
    tracker.GetNFlows()
    tracker.TakeProgressedFlows()
    # Reads the flows found so far (none: the script has not run yet, or its flows are made before Run()),
    # gates none and loses none: FlowTracker::TakeCreatedFlows keeps no mark of what it handed out (it
    # reads from the number it is given), and the run's own reader (``Arrivals.take_created``) counts
    # the flows it took itself, from 0: its first call inside Run() reads every flow made before it.
    created_flows(tracker.TakeCreatedFlows(0, False))
    lookup_facts(ns3.FlowFacts())  # a batch's facts, as the memo driver reads them
    flow_info(ns3.FlowRecord(), 0)  # a record's strings and vectors, as read_flow converts them
    flow_result(ns3.FlowOutcome(), 0)  # and an outcome's, as read_outcome at Run()'s end
    ns3.NanoSeconds(1).GetSeconds()
    return bound + list(SETTERS)


def warm_up_templates(ns3: Any) -> None:
    """Instantiate now what the controller's callbacks instantiate otherwise, at their first use inside Run().

    Each is a template or a conversion cppyy compiles once: finding the
    WormholeSimulatorImpl (a ``DynamicCast`` of a null pointer here), the event
    ``Boundary.at_destroy`` schedules (made and freed here), the seeds the guard
    reads, the event timeline's vectors (of an empty timeline), a link's
    random sources as ``Network`` reads them, and the vectors of flow ids,
    routes and samples as the controller reads them.
    """
    ns3.DynamicCast[ns3.WormholeSimulatorImpl](ns3.Ptr[ns3.SimulatorImpl]())
    ns3.MakeEvent(ns3.cppyy.gbl.std.function["void()"](_nothing)).Unref()
    int(ns3.RngSeedManager.GetSeed()), int(ns3.RngSeedManager.GetRun())
    timeline = ns3.EventTimeline()
    [(float(t.GetSeconds()), int(n)) for t, n in zip(timeline.GetTimes(), timeline.GetCounts())]
    std = ns3.cppyy.gbl.std
    sources = std.vector[ns3.RandomSource]()
    sources.push_back(ns3.RandomSource())
    [(str(source.what), bool(source.needsQueue)) for source in sources]
    # the vectors of flows, routes and samples the tracker returns, read as the controller reads them
    for kind, dtype in (("unsigned int", np.int64), ("unsigned long", np.int64), ("double", np.float64)):
        vector = std.vector[kind]()
        vector.push_back(0)
        set(vector), [int(x) for x in vector], np.array(vector, dtype=dtype, copy=True)


def warm_up_simulator(ns3: Any, impl: Any) -> None:
    """Bind the methods of the run's WormholeSimulatorImpl that the controller calls inside Run(), before it.

    It is asked what changes nothing (counts of tag 0, the time, the timeline),
    and told what it refuses with an exception after its wrapper exists: tag 0
    (no flow's) in a class, a callback in the past.
    """
    std = ns3.cppyy.gbl.std
    try:
        impl.SetTagClass(0, 0)
    except std.out_of_range:
        pass
    try:
        impl.ScheduleHousekeepingCallback(ns3.NanoSeconds(-1), ns3.Callback[("void",)]())
    except std.invalid_argument:
        pass
    int(impl.GetCurrentTag()), int(impl.GetTagsEventCount([0])), int(impl.GetTagsDrawCount([0]))
    int(impl.GetSystemEventCount()), bool(impl.WatchdogFired()), impl.GetEventTimeline().GetTimes()
    float(ns3.Simulator.Now().GetSeconds()), int(ns3.Simulator.GetEventCount())


def _nothing() -> None:
    """The callable of the event ``warm_up_templates`` makes and frees."""
