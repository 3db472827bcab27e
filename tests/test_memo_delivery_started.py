"""Which flows the memo driver takes as started by a callback on a flow's delivery (``MemoDriver.take_over``).

Such flows are known to no workload oracle: once the run made one, the Memoizer
replays and mirrors nothing (``Admission.unforeseeable``). A flow made in a
workload's event (a FlowDag release) or at time 0 (the script's set-up) is not one.
"""

from types import SimpleNamespace

from wormhole_ns3.core.ports import CreatedFlow, Creation
from wormhole_ns3.memo.driver import MemoDriver
from wormhole_ns3.memo.store import MemoStore

from fakes import FakeNs3

FLOW_TAG = 7  #: a flow's own events (its packets, a sink's Rx trace on them)


class _Tracker:
    """Flows waiting for their start are found decided (not PENDING): the driver gates nothing."""

    def SetGatedStartCallback(self, callback) -> None:
        pass

    def GetState(self, flow: int) -> int:
        return 1

    def GetSrcNode(self, flow: int) -> int:
        return 0

    def GetDstNode(self, flow: int) -> int:
        return 1

    def CompleteVirtually(self, flow: int) -> None:
        pass


class _Impl:
    """The running event: its tag and the simulator's event count."""

    UNATTRIBUTED, SYSTEM, WORKLOAD = 0, 2**32 - 1, 2**32 - 2

    def __init__(self) -> None:
        self.tag, self.events = 0, 0

    def GetCurrentTag(self) -> int:
        return self.tag

    def GetEventCount(self) -> int:
        return self.events

    def ScheduleCallbackWithTagAt(self, time_ns, context, tag, callback) -> None:
        pass


def _created(ns3: FakeNs3, impl: _Impl, *flows: int) -> Creation:
    """Pending flows the running event created, as the controller hands them over (their starts not gated:
    they wait, and are found decided after the next event)."""
    return Creation(ns3.now_ns, impl.tag, impl.events,
                    [CreatedFlow(flow, 0, 0.0, (0, 1), 1000, 0, -1) for flow in sorted(flows)])


def _driver() -> tuple[MemoDriver, _Impl, FakeNs3]:
    ns3, impl = FakeNs3(), _Impl()
    ns3.WormholeSimulatorImpl = _Impl
    run = SimpleNamespace(ns3=ns3, tracker=_Tracker(), impl=impl, boundary=None,
                          callback=lambda function, *signature: function,
                          completed_virtually=lambda flow: None)
    return MemoDriver(run, MemoStore.in_memory(), "context"), impl, ns3


def test_flows_made_at_set_up_or_by_a_workload_are_not_started_by_a_delivery():
    driver, impl, ns3 = _driver()
    impl.tag = _Impl.UNATTRIBUTED
    driver.take_over(_created(ns3, impl, 0, 1))  # time 0: the script's set-up
    ns3.now_ns, impl.tag = 2_000_000, _Impl.WORKLOAD
    driver.take_over(_created(ns3, impl, 2))  # a FlowDag's release
    impl.tag = _Impl.UNATTRIBUTED
    driver.take_over(_created(ns3, impl, 3))  # a timer of the script's
    assert driver.delivery_started() is None


def test_a_flow_made_in_a_flows_packet_event_is_started_by_a_delivery_and_the_first_is_kept():
    driver, impl, ns3 = _driver()
    ns3.now_ns, impl.tag = 3_000_000, FLOW_TAG
    driver.take_over(_created(ns3, impl, 5, 4))
    ns3.now_ns = 4_000_000
    driver.take_over(_created(ns3, impl, 6))
    assert driver.delivery_started() == (f"flow 4, created at 0.003000000 s by a callback on a packet of the "
                                         f"flow tagged {FLOW_TAG}")


def _created_after_a_completion(events_since: int) -> str | None:
    """Held flow 9 completes at 5 ms (an injected completion, a workload event); flow 10 is created
    ``events_since`` events later at the same instant."""
    driver, impl, ns3 = _driver()
    ns3.now_ns, impl.tag, impl.events = 5_000_000, _Impl.WORKLOAD, 41
    driver.complete_flow_at(9, 5_000_000)
    driver.memo.completing = lambda now_ns, flow: True  # type: ignore[method-assign]  # the Memoizer lets it end
    driver._run_completion()
    impl.events += events_since
    driver.take_over(_created(ns3, impl, 10))
    return driver.delivery_started()


def test_a_flow_made_in_a_held_flows_injected_completion_is_started_by_a_delivery():
    """The driver's completions run as workload events, but a sink's Rx callback runs in them."""
    assert _created_after_a_completion(0) == ("flow 10, created at 0.005000000 s by a callback on a held "
                                              "flow's completion")
    assert _created_after_a_completion(1) is None  # the next event of the instant: a workload's release

