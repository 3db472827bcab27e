"""runtime.boundary against fakes of cppyy's constructs: what crosses into C++, and how."""

import struct
from types import SimpleNamespace

import pytest

from wormhole_ns3.core.flows import ACK_CLOCKED_CONGESTION_CONTROL, FlowKind
from wormhole_ns3.core.ports import CreatedFlow
from wormhole_ns3.runtime import boundary

from fakes import BufferVector, FakeFlow, FakeTime, dumbbell


class OutOfRange(Exception):
    """Stands for cppyy.gbl.std.out_of_range."""


class InvalidArgument(Exception):
    """Stands for cppyy.gbl.std.invalid_argument."""


class _Templates:
    """``std.function[sig]`` / ``std.vector[T]`` / ``ns3.Callback[...]``: record what was instantiated."""

    def __init__(self, make):
        self.make = make
        self.instantiated = []

    def __getitem__(self, arguments):
        self.instantiated.append(arguments)
        return self.make


def fake_ns3():
    std = SimpleNamespace(
        out_of_range=OutOfRange,
        invalid_argument=InvalidArgument,
        function=_Templates(lambda f: ("std::function", f)),
        vector=_Templates(Vector),
    )
    return SimpleNamespace(
        cppyy=SimpleNamespace(gbl=SimpleNamespace(std=std)),
        Callback=_Templates(lambda *wrapped: ("ns3::Callback", *wrapped)),  # no argument: a null callback
        NanoSeconds=FakeTime,
        Time=lambda: FakeTime(0),
        UpcomingFlow="ns3::UpcomingFlow",
        FlowRecord=lambda: SimpleNamespace(
            kind="", srcNode=0, dstNode=0, src="", dst="", sport=0, dport=0, size=0, start=0.0, path=Vector(),
            reversePath=Vector(), congestionOps="", rttEstimator="", constantRate=False, paced=False, appRateBps=0,
            tag=0),
        FlowFacts=lambda: SimpleNamespace(numbers=BufferVector([]), text=""),
        FlowOutcome=lambda: SimpleNamespace(
            kind="", src="", dst="", sport=0, dport=0, size=0, start=0.0, finish=-1.0, rxBytes=0, credited=0,
            standalone=0.0),
    )


class Vector(list):
    def push_back(self, value):
        self.append(value)


def test_read_flow_and_read_outcome_take_every_field_from_one_record():
    tracker, routes = dumbbell(1)
    path, reverse = routes[0]
    tracker.add_flow(FakeFlow(src_node=1, dst_node=60, size=4096, path=path, reverse_path=reverse,
                              start_ns=2_500_000, congestion_control="ns3::TcpNewReno"))
    info = boundary.read_flow(tracker, 0)
    assert (info.id, info.kind, info.src_node, info.dst_node, info.size) == (0, FlowKind.BULK_TCP, 1, 60, 4096)
    assert (info.src, info.dst, info.sport, info.dport) == ("10.0.0.1", "10.0.0.60", 49152, 5000)
    assert info.path == path and info.reverse_path == reverse and info.start == pytest.approx(2.5e-3)
    assert info.congestion_control == "ns3::TcpNewReno" and info.tag == 100
    assert info.skip_blocker(ACK_CLOCKED_CONGESTION_CONTROL) is None

    tracker.GetSinkTotalRx = lambda f: 4096
    tracker.GetCredited = lambda f: 1000
    tracker.GetFinishTime = lambda f: FakeTime(7_500_000)
    outcome = boundary.read_outcome(tracker, 0)
    assert (outcome.bytes, outcome.rx_bytes, outcome.credited_bytes) == (4096, 4096, 1000)
    assert outcome.fct == pytest.approx(5e-3)
    tracker.GetFinishTime = lambda f: FakeTime(-1_000_000_000)
    assert boundary.read_outcome(tracker, 0).fct is None  # unfinished


def test_a_callback_keeps_the_first_exception_and_then_does_nothing():
    ns3 = fake_ns3()
    side = boundary.Boundary(ns3)
    calls = []

    def on_event(flow, state):
        calls.append((flow, state))
        if state == 2:
            raise ValueError("boom")

    callback = side.callback(on_event, "unsigned int", "int")
    assert ns3.cppyy.gbl.std.function.instantiated == ["void(unsigned int,int)"]
    assert ns3.Callback.instantiated == [("void", "unsigned int", "int")]
    guarded = callback[1][1]  # ns3::Callback(std::function(guarded))
    guarded(0, 1)
    guarded(0, 2)
    guarded(1, 1)
    assert calls == [(0, 1), (0, 2)]
    assert isinstance(side.error, ValueError)


def test_double_vector_holds_the_values_as_floats():
    ns3 = fake_ns3()
    vector = boundary.double_vector(ns3, (1, 2.5))
    assert vector == [1.0, 2.5] and all(isinstance(v, float) for v in vector)
    assert ns3.cppyy.gbl.std.vector.instantiated == ["double"]


def test_warm_up_calls_every_method_of_a_run_and_expects_only_what_it_refuses():
    ns3 = fake_ns3()
    called = []

    class Tracker:
        def __getattr__(self, name):
            def method(*args):
                called.append((name, args))
                if name in ("GetUnforeseeable", "GetUpcomingDue", "DecideStarts"):
                    raise InvalidArgument(name)  # a query that does not add up
                if name == "TakeCreatedFlows":
                    return BufferVector([0, 0, 0])  # the header alone: no flow yet
                if name not in boundary.SETTERS:
                    raise OutOfRange(name)

            return method

    bound = boundary.warm_up(ns3, Tracker(), memo=True)
    assert "GetFlowRecord" in bound and "GetKind" in bound and "ResumeHeld" in bound
    assert bound == [*boundary.CONTROLLER_METHODS, *boundary.MEMO_METHODS, *boundary.SETTERS]
    assert ("Credit", (0, 0)) in called
    assert ("TakeCreatedFlows", (0, False)) in called  # reads the flows found so far, gating none
    (_, _, query, size, links, own), = [args for name, args in called if name == "GetUnforeseeable"]
    assert (len(query), size, links, own) == (1, 1, 0, 0)  # one number that is no pair: refused
    # what a tracker holds before Run(): null callbacks, no sampling
    assert ("SetFlowEventCallback", (("ns3::Callback",),)) in called
    (period, window, on_window), = [args for name, args in called if name == "ConfigureSampling"]
    assert (period.ns, window, on_window) == (0, 0, ("ns3::Callback",))
    assert boundary.warm_up(ns3, Tracker(), memo=False) == [*boundary.CONTROLLER_METHODS, *boundary.SETTERS]

    class Missing:
        def __getattr__(self, name):
            raise AttributeError(name)

    with pytest.raises(AttributeError):  # a method the shim lacks is an interface mismatch
        boundary.warm_up(ns3, Missing(), memo=False)

    class Mismatched:
        def __getattr__(self, name):
            def method(*args):
                raise TypeError(f"{name}: no overload takes {args}")

            return method

    with pytest.raises(TypeError):  # an interface mismatch is not swallowed
        boundary.warm_up(ns3, Mismatched(), memo=False)




def test_length_prefixed_reads_runs_of_their_length_and_int_rows_reads_rows():
    routes = BufferVector([2, 65536, 65537, 0, 3, 1, 2, 2**40], "Q")
    assert boundary.length_prefixed(routes) == [[65536, 65537], [], [1, 2, 2**40]]
    assert boundary.length_prefixed(BufferVector([], "Q")) == []
    assert boundary.int_rows(BufferVector([0, 5, -1, 1, 6, 7]), 3) == [[0, 5, -1], [1, 6, 7]]


def test_unforeseen_reads_each_flows_start_then_its_links_and_int_values_reads_numbers():
    # FlowTracker::GetUnforeseeable: each flow's start (ns), how many links it reaches, those links
    found = BufferVector([5_000, 2, 65536, 65537, 7_000, 1, 131072])
    assert boundary.unforeseen(found) == [(5_000, [65536, 65537]), (7_000, [131072])]
    assert boundary.unforeseen(BufferVector([])) == []
    assert boundary.int_values(BufferVector([3, 0, 2**40])) == [3, 0, 2**40]
    assert boundary.int_values(BufferVector([])) == []


def test_created_flows_reads_the_event_then_each_flow_its_start_time_a_doubles_bits():
    def bits(seconds: float) -> int:
        return int.from_bytes(struct.pack("<d", seconds), "little", signed=True)

    # the header (now, tag, event count), then CreatedFlows::FIELDS numbers a flow
    vector = BufferVector([2_000, 7, 41,
                           3, 0, bits(0.002), 1, 2, 1_000_000, 77, 2_000,
                           4, 1, bits(1e-9 * 3), 2, 2**32 - 1, 0, 0, -1])
    created = boundary.created_flows(vector)
    assert (created.now_ns, created.tag, created.event_count) == (2_000, 7, 41)
    assert created.flows == [CreatedFlow(3, 0, 0.002, (1, 2), 1_000_000, 77, 2_000),
                             CreatedFlow(4, 1, 1e-9 * 3, (2, 2**32 - 1), 0, 0, -1)]
    assert boundary.created_flows(BufferVector([0, 0, 0])).flows == []
