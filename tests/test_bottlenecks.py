"""Which flows a flow event leaves alone (accel/bottlenecks.py), and the controller keeping their samples."""

from dataclasses import replace

import pytest

from wormhole_ns3.accel.bottlenecks import contexts, undisturbed
from wormhole_ns3.accel.controller import ACTIVE, FINISHED, Controller
from wormhole_ns3.accel.steady import Limit
from wormhole_ns3.config import AcceleratorConfig

from fakes import FakeBoundary, FakeFlow, FakeNs3, FakeTracker, link_id

PERIOD_NS = 1_000_000
WINDOW = 10

# Two receivers behind one switch (50): port 1 to receiver A (60), port 2 to receiver B (61),
# both 1 Gb/s; every sender's uplink is 10 Gb/s. ``SHARED`` is a 10 Gb/s link every flow also
# crosses (a spine uplink): it ties both bottlenecks into one partition without ever saturating.
TO_A, TO_B, SHARED = link_id(50, 1), link_id(50, 2), link_id(40, 1)
ACK_A, ACK_B = link_id(60, 1), link_id(61, 1)
GBPS = 1.25e8  # bytes/s


def test_an_arrival_on_one_bottleneck_leaves_the_flows_of_another_alone():
    capacity = {TO_A: 1.0, TO_B: 1.0, SHARED: 10.0}
    paths = {0: frozenset({SHARED, TO_A}), 1: frozenset({SHARED, TO_A}), 2: frozenset({SHARED, TO_B}),
             3: frozenset({SHARED, TO_B})}
    before = contexts(paths, {}, capacity)
    after = contexts({**paths, 4: frozenset({SHARED, TO_A})}, {}, capacity)
    assert undisturbed(before, after) == {2, 3}
    assert after[2].rate == before[2].rate == 0.5 and after[0].rate == pytest.approx(1 / 3)
    assert set(after[2].congested) == {TO_B}  # the shared link never saturates: it holds no queue


def test_a_share_change_that_propagates_through_max_min_disturbs_flows_the_newcomer_never_crosses():
    """Flow 9 crosses both bottlenecks, limited on A: a newcomer on A lowers it, and B's flows take what it left."""
    capacity = {TO_A: 1.0, TO_B: 1.2, SHARED: 10.0}
    paths = {0: frozenset({TO_A}), 1: frozenset({TO_A}), 9: frozenset({TO_A, TO_B}),
             2: frozenset({TO_B}), 3: frozenset({TO_B})}
    before = contexts(paths, {}, capacity)
    after = contexts({**paths, 4: frozenset({TO_A})}, {}, capacity)
    assert before[2].rate == pytest.approx((1.2 - 1 / 3) / 2) and after[2].rate == pytest.approx((1.2 - 0.25) / 2)
    assert undisturbed(before, after) == frozenset()


def test_a_flow_keeps_its_rate_but_not_its_samples_when_its_congested_link_changes_hands():
    """Flow 2's rate is its own uplink's; the newcomer joins a link where it also is a saturating flow."""
    capacity = {TO_A: 1.0, TO_B: 2.0, SHARED: 1.0}
    paths = {0: frozenset({TO_A}), 2: frozenset({SHARED})}
    before = contexts(paths, {}, capacity)
    after = contexts({**paths, 5: frozenset({TO_B})}, {5: frozenset({SHARED})}, capacity)
    assert undisturbed(before, after) == {0}  # ACKs of a newcomer now cross flow 2's congested link
    assert after[2].rate == before[2].rate


def two_bottlenecks(config: AcceleratorConfig):
    """A controller over two 1 Gb/s bottlenecks tied by an unsaturated shared link; no flow yet."""
    rates = {TO_A: 1e9, TO_B: 1e9, SHARED: 10e9, ACK_A: 10e9, ACK_B: 10e9}
    rates |= {link_id(host, 1): 10e9 for host in range(1, 8)}
    tracker = FakeTracker(rates)
    ns3 = FakeNs3()
    controller = Controller(ns3, config, accelerate=True, tracker=tracker, boundary=FakeBoundary())
    controller.attach()
    ns3.RunObserver.on_start()
    return controller, tracker, ns3


def start(controller, tracker, host: int, to: int, size: int = 10**9, kind: str = "bulk-tcp",
          cc: str = "ns3::TcpDctcp") -> int:
    ack = ACK_A if to == TO_A else ACK_B
    flow = tracker.add_flow(FakeFlow(src_node=host, dst_node=60, size=size, path=(link_id(host, 1), SHARED, to),
                                     reverse_path=(ack,), kind=kind, congestion_control=cc))
    tracker.on_flow_event(flow, ACTIVE)
    return flow


def history(rate: float, samples: int) -> list[int]:
    return [round(i * rate * PERIOD_NS * 1e-9) for i in range(samples)]


@pytest.mark.parametrize("keep", [True, False])
def test_an_arrival_on_bottleneck_a_keeps_bottleneck_bs_flows_judged_on_their_history(keep):
    config = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, keep_undisturbed=keep)
    controller, tracker, ns3 = two_bottlenecks(config)
    a0 = start(controller, tracker, 1, TO_A)
    b = [start(controller, tracker, host, TO_B) for host in (2, 3)]
    for f in b:
        tracker.flows[f].samples = history(0.49 * GBPS, 30)
    tracker.flows[a0].samples = history(0.49 * GBPS, 30)
    ns3.now_ns = 30 * PERIOD_NS
    a1 = start(controller, tracker, 4, TO_A)  # a newcomer on A: A's flows change share, B's do not
    (st,) = controller.partitions.values()
    assert st.partition.flows == {a0, a1, *b}
    assert [len(tracker.flows[f].samples) for f in b] == ([30, 30] if keep else [0, 0])
    assert st.kept == (frozenset(b) if keep else frozenset())
    assert tracker.flows[a0].samples == []
    assert st.window_from == pytest.approx(30 * PERIOD_NS * 1e-9)  # A's flows sample anew from the arrival


def test_a_departure_that_changes_no_share_keeps_every_sample_and_judges_at_once():
    """A flow alone on A leaves: B's flows neither share nor congest with it, and their partition is judged now."""
    config = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, tail_rtts=20, keep_undisturbed=True)
    controller, tracker, ns3 = two_bottlenecks(config)
    a0 = start(controller, tracker, 1, TO_A, size=10**6)
    b = [start(controller, tracker, host, TO_B) for host in (2, 3)]
    for f in b:
        tracker.flows[f].samples = history(0.49 * GBPS, 30)
    tracker.flows[a0].samples = history(0.98 * GBPS, 30)
    ns3.now_ns = 30 * PERIOD_NS
    tracker.flows[a0].state = FINISHED
    tracker.on_flow_event(a0, FINISHED)
    st = controller.partitions[frozenset(b)]
    assert st.window_from == 0.0 and st.kept == frozenset(b)
    assert all(len(tracker.flows[f].samples) == 30 for f in b)
    ns3.now_ns = 31 * PERIOD_NS
    controller.on_sample()
    assert st.last_verdict is not None and st.last_verdict.limit is not Limit.WINDOW_NOT_FULL
    assert st.last_verdict.steady and len(controller.skips) == 1

    plain = replace(config, keep_undisturbed=False)
    controller, tracker, ns3 = two_bottlenecks(plain)
    a0 = start(controller, tracker, 1, TO_A, size=10**6)
    b = [start(controller, tracker, host, TO_B) for host in (2, 3)]
    ns3.now_ns = 30 * PERIOD_NS
    tracker.flows[a0].state = FINISHED
    tracker.on_flow_event(a0, FINISHED)
    st = controller.partitions[frozenset(b)]
    assert st.window_from == pytest.approx(0.03) and all(tracker.flows[f].samples == [] for f in b)


def test_a_partition_with_a_paced_flow_restarts_every_sample_at_a_flow_event():
    """DCQCN's rate is its congestion state: its partition keeps the rule it had, every flow anew."""
    config = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW)
    controller, tracker, ns3 = two_bottlenecks(config)
    b = [start(controller, tracker, host, TO_B, kind="rdma-dcqcn") for host in (2, 3)]
    start(controller, tracker, 1, TO_A, kind="rdma-dcqcn")
    for f in b:
        tracker.flows[f].samples = history(0.49 * GBPS, 30)
    ns3.now_ns = 30 * PERIOD_NS
    start(controller, tracker, 4, TO_A, kind="rdma-dcqcn")
    (st,) = controller.partitions.values()
    assert st.kept == frozenset() and all(tracker.flows[f].samples == [] for f in b)


def test_a_partition_never_judged_keeps_no_sample():
    """An H-TCP flow (time-based state, never skipped) runs its partition packet by packet: no sample matters.

    Its flows' samples are neither read nor cleared while it lasts; the partition that
    follows it, judged, keeps none of them.
    """
    config = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, keep_undisturbed=True)
    controller, tracker, ns3 = two_bottlenecks(config)
    b = [start(controller, tracker, host, TO_B) for host in (2, 3)]
    htcp = start(controller, tracker, 1, TO_A, cc="ns3::TcpHtcp")
    for f in b:
        tracker.flows[f].samples = history(0.49 * GBPS, 30)
    ns3.now_ns = 30 * PERIOD_NS
    start(controller, tracker, 4, TO_A)
    (st,) = controller.partitions.values()
    assert st.blocker is not None and st.kept == frozenset()
    assert all(len(tracker.flows[f].samples) == 30 for f in b)  # never read: left where they are
    tracker.flows[htcp].state = FINISHED
    tracker.on_flow_event(htcp, FINISHED)
    ns3.now_ns = 40 * PERIOD_NS
    controller.on_drained()
    (st,) = controller.partitions.values()
    assert st.blocker is None and htcp not in st.partition.flows and st.kept == frozenset()
    assert all(tracker.flows[f].samples == [] for f in b)
