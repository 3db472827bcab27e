"""What the memo driver reads of C++ in one crossing: a creating event's flows, the flows a lookup knows of,
a batch's flows' facts, links' queues; and what it tells in one: a batch's decided starts.

``FlowTracker::TakeCreatedFlows`` hands the driver each new flow with its start gated
already (``MemoDriver.take_over``); ``FlowTracker::GetUpcomingDue`` the workloads' flows
to come, each route named by a number and sent once (``MemoDriver.upcoming``);
``FlowTracker::GetLookupFacts`` a batch's routes and identities (``MemoDriver._learn``),
``ReadQueuedPackets`` the queues of a key's or a join's links, and ``DecideStarts`` takes a
batch's decisions once it is decided.
"""

from types import SimpleNamespace

from wormhole_ns3.core.ports import CreatedFlow, Creation, DueFlow
from wormhole_ns3.core.transport import DCQCN, TCP
from wormhole_ns3.memo.driver import MemoDriver
from wormhole_ns3.memo.store import MemoStore

from fakes import BufferVector, FakeNs3, FakeTime


class _Tracker:
    """Flow 8's node is initialized after one more event: its start is gated then, at 6 ms. The workload
    answers two questions with the same two flows to come, over routes numbered 0 and 1."""

    def __init__(self) -> None:
        self.gated: list[int] = []
        self.asked: list[tuple[int, list[int], int]] = []

    def SetGatedStartCallback(self, callback) -> None:
        pass

    def GetState(self, flow: int) -> int:
        return 0  # pending

    def GetStartEventUid(self, flow: int) -> int:
        return 80 + flow

    def GateStart(self, flow: int) -> FakeTime:
        self.gated.append(flow)
        return FakeTime(6_000_000)

    def GetUpcomingDue(self, horizon_ns, ends, size, known_routes) -> BufferVector:
        self.asked.append((horizon_ns, [int(x) for x in ends[:size]], known_routes))
        routes = [[2, 65536, 65537], [1, 131072]][known_routes:]  # the routes the driver has not seen yet
        return BufferVector([len(routes), *(n for route in routes for n in route),
                             7_000, 0, 1, 0, 9_000, 2, 3, 1])


def _driver() -> tuple[MemoDriver, _Tracker]:
    ns3 = FakeNs3()
    ns3.WormholeSimulatorImpl = SimpleNamespace(UNATTRIBUTED=0, SYSTEM=2**32 - 1, WORKLOAD=2**32 - 2)
    tracker = _Tracker()
    run = SimpleNamespace(ns3=ns3, tracker=tracker, impl=None, boundary=None,
                          callback=lambda function, *signature: function)
    return MemoDriver(run, MemoStore.in_memory(), "context"), tracker


def test_flows_gated_as_they_were_read_are_kept_and_one_not_gated_yet_is_gated_after_the_next_event():
    driver, tracker = _driver()
    workload = 2**32 - 2
    driver.take_over(Creation(0, workload, 0, [CreatedFlow(7, 0, 0.005, (0, 1), 1000, 77, 5_000_000),
                                               CreatedFlow(8, 0, 0.006, (2, 3), 2000, 0, -1)]))
    assert driver._gated == {7: (5_000_000, 77)} and tracker.gated == []  # gated by FlowTracker::TakeCreatedFlows
    assert (driver.flow_nodes(8), driver._size(8)) == ((2, 3), 2000)  # known from their creation
    driver.take_over(Creation(0, workload, 1, []))
    assert driver._gated == {7: (5_000_000, 77), 8: (6_000_000, 88)} and tracker.gated == [8]


def test_the_flows_to_come_carry_their_routes_numbers_and_each_route_crosses_once():
    driver, tracker = _driver()
    expected = [DueFlow(7_000, frozenset({65536, 65537}), (0, 1)), DueFlow(9_000, frozenset({131072}), (2, 3))]
    assert driver.upcoming(0, 10_000) == expected
    driver._completion_of = {4: (8_000, 0), 3: (6_000, 1)}  # scheduled completions: known ends, by flow
    assert driver.upcoming(0, 20_000) == expected
    assert tracker.asked == [(10_000, [], 0), (20_000, [3, 6_000, 4, 8_000], 2)]


class _LookupTracker:
    """Flows 0 to 3: flow f runs from node f to node f + 1 over links 10 f and 10 f + 1 (ACKs back over
    10 f + 2), flow 1 is paced (DCQCN), the others TCP; link l holds l packets. Counts what crosses."""

    def __init__(self) -> None:
        self.facts: list[tuple[list[int], bool, bool]] = []  #: (flows, routes, identities) of each read
        self.queues: list[list[int]] = []
        self.decisions: list[list[int]] = []
        self.decided: list[tuple[int, bool]] = []

    def SetGatedStartCallback(self, callback) -> None:
        pass

    def GetLookupFacts(self, flows, size, routes, identities) -> SimpleNamespace:
        asked = [int(f) for f in flows[:size]]
        self.facts.append((asked, routes, identities))
        numbers, text = [], ""
        for f in asked:
            kind = "rdma-dcqcn" if f == 1 else "bulk-tcp"
            print_, ops = f"{kind} size={1000 * (f + 1)}", "" if f == 1 else "ns3::TcpDctcp"
            numbers += [int(f == 1), len(kind), len(print_), len(ops)] if identities else [0, 0, 0, 0]
            text += kind + print_ + ops if identities else ""
            numbers += [2, 1, 10 * f, 10 * f + 1, 10 * f + 2] if routes else [0, 0]
        return SimpleNamespace(numbers=BufferVector(numbers), text=text)

    def ReadQueuedPackets(self, links, size) -> None:
        self.queues.append([int(link) for link in links[:size]])
        links[:size] = links[:size]  # link l holds l packets

    def DecideStarts(self, decisions, size) -> None:
        self.decisions.append([int(x) for x in decisions[:size]])

    def DecideStart(self, flow, held) -> None:
        self.decided.append((flow, held))

    def GetStartEventUids(self, flows, size) -> BufferVector:
        return BufferVector([1] * size)

    def GetUpcomingDue(self, horizon_ns, ends, size, known_routes) -> BufferVector:
        return BufferVector([0])  # no workload: no route, no flow


def _lookup_driver() -> tuple[MemoDriver, _LookupTracker]:
    ns3 = FakeNs3()
    tracker = _LookupTracker()
    run = SimpleNamespace(ns3=ns3, tracker=tracker, impl=None, boundary=None, callback=lambda function, *s: function,
                          replay_guard=lambda: (frozenset(), False))
    return MemoDriver(run, MemoStore.in_memory(), "context"), tracker


def test_a_batchs_routes_and_identities_cross_once_and_a_route_read_before_is_not_read_again():
    driver, tracker = _lookup_driver()
    driver._gated, driver._nodes[2] = {2: (0, 1)}, (2, 3)
    assert driver.upcoming(0, 10)[0].links == frozenset({20, 21, 22})  # a flow to come: its route only
    driver._learn([0, 1, 2])
    driver._learn([1, 2])  # known: nothing crosses
    assert tracker.facts == [([2], True, False), ([0, 1, 2], True, True)]
    assert driver.flow_route(0) == ((0, 1), (2,)) and driver.flow_attributes(1) == "rdma-dcqcn size=2000"
    assert driver.flow_route(2) == ((20, 21), (22,)) and driver.flow_attributes(2) == "bulk-tcp size=3000"
    # pacing is the tracker's word (FlowTracker::IsPaced), and so is the policy it gives
    assert [driver.flow_transport(f) for f in (0, 1)] == [TCP, DCQCN]
    assert driver.flow_attributes(3) == "bulk-tcp size=4000" and tracker.facts[-1] == ([3], True, True)


def test_links_queues_cross_once_and_a_batchs_decisions_are_told_once_it_is_decided():
    driver, tracker = _lookup_driver()
    assert driver.link_queues([11, 12, 13]) == [11, 12, 13] and tracker.queues == [[11, 12, 13]]
    assert driver.link_queues([]) == [] and len(tracker.queues) == 1

    def arrive(now, batch):
        driver.hold_flow(batch[0])
        driver.hold_flow(batch[1])
        assert tracker.decisions == []  # told once the batch is decided, before its start events run

    driver.memo.arrive = arrive
    driver._gated = {0: (0, 1), 1: (0, 2)}
    driver._decide_starts(0)
    assert tracker.decisions == [[0, 1, 1, 1]] and tracker.decided == []
    driver.hold_flow(3)  # outside a batch: at once
    assert tracker.decided == [(3, True)] and len(tracker.decisions) == 1
