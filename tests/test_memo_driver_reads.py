"""What the memo driver reads of C++ in one crossing: a creating event's flows, and the flows a lookup knows of.

``FlowTracker::TakeCreatedFlows`` hands the driver each new flow with its start gated
already (``MemoDriver.take_over``); ``FlowTracker::GetUpcomingDue`` the workloads' flows
to come, each route named by a number and sent once (``MemoDriver.upcoming``).
"""

from types import SimpleNamespace

from wormhole_ns3.core.ports import CreatedFlow, Creation, DueFlow
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
