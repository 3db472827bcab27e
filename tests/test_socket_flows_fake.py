"""Flows a script drives through its own sockets ("socket-tcp"), as the controller decides on them: no ns-3.

What the script does with its socket is seen only as it does it (FlowTracker::GetSkipBlocker): the
partition is asked again before each judgement, and a writer it cannot reproduce blocks it for good.
"""

import pytest
from test_accel_controller_fake import BOTTLENECK, PERIOD_NS, deliver, run_with, sample_at

from wormhole_ns3.accel.packet_level import PacketLevel
from wormhole_ns3.core.flows import FlowInfo, FlowKind, SenderBlocker, pausable_congestion_control, sender_blocker

SOCKET = FlowKind.SOCKET_TCP.value


def test_the_blocker_numbers_are_the_cxx_enums_order():
    assert sender_blocker(0) is None
    assert sender_blocker(1) is SenderBlocker.WRITES_OUTSIDE_SEND_CALLBACKS
    assert sender_blocker(2) is SenderBlocker.RECEIVER_NOT_PACKET_SINK


@pytest.mark.parametrize(("control", "estimator", "blocked"), [
    ("ns3::TcpDctcp", "ns3::SkipAwareRttEstimator", False),
    ("ns3::TcpNewReno", "ns3::SkipAwareRttEstimator", False),
    ("ns3::TcpCubic", "ns3::SkipAwareRttEstimator", True),
    ("ns3::TcpDctcp", "ns3::RttMeanDeviation", True),
])
def test_a_socket_flow_is_judged_by_the_rules_of_a_bulk_send_tcp_flow(control, estimator, blocked):
    def info(kind):
        return FlowInfo(id=0, kind=kind, src_node=0, dst_node=1, src="a", dst="b", sport=1, dport=2, size=0,
                        start=0.0, path=(1,), reverse_path=(2,), congestion_control=control, constant_rate=True,
                        paced=False, app_rate=0.0, tag=1, rtt_estimator=estimator)

    pausable = pausable_congestion_control(skip_cubic=False)
    assert info(SOCKET).skip_blocker(pausable) == info(FlowKind.BULK_TCP.value).skip_blocker(pausable)
    assert (info(SOCKET).skip_blocker(pausable) is not None) is blocked
    assert info(SOCKET).tcp and info(SOCKET).script_driven and not info(FlowKind.BULK_TCP.value).script_driven


def test_socket_flows_whose_script_writes_from_their_callbacks_are_skipped():
    controller, tracker, ns3 = run_with([(0, "ns3::TcpDctcp")] * 2, kind=SOCKET)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, 11 * PERIOD_NS)

    assert len(controller.skips) == 1 and controller.skips[0].flow_ids == (0, 1)
    assert controller.skip_blocker(0) is None


def test_a_socket_flow_whose_script_wrote_from_elsewhere_is_never_skipped_and_the_run_says_why():
    controller, tracker, ns3 = run_with([(0, "ns3::TcpDctcp")] * 2, kind=SOCKET)
    tracker.flows[1].sender_blocker = 1
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, 11 * PERIOD_NS)

    assert controller.skips == []
    assert controller.skip_blocker(1) is SenderBlocker.WRITES_OUTSIDE_SEND_CALLBACKS
    assert set(controller.packet_level_time) == {PacketLevel.UNSKIPPABLE_FLOW}


def test_a_writer_seen_only_once_the_partition_runs_blocks_it_from_its_next_judgement_on():
    controller, tracker, ns3 = run_with([(0, "ns3::TcpDctcp")] * 2, kind=SOCKET)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, 3 * PERIOD_NS)  # too few samples to judge: asked all the same
    st = next(iter(controller.partitions.values()))
    assert st.script_driven and st.blocker is None

    tracker.flows[0].sender_blocker = 1  # a timer of the script's own wrote to its socket
    sample_at(controller, ns3, 11 * PERIOD_NS)

    assert controller.skips == []
    assert st.blocker is SenderBlocker.WRITES_OUTSIDE_SEND_CALLBACKS
    tracker.flows[0].sender_blocker = 0  # sticky in C++; the partition keeps it whatever it is told
    sample_at(controller, ns3, 12 * PERIOD_NS)
    assert controller.skips == [] and st.blocker is SenderBlocker.WRITES_OUTSIDE_SEND_CALLBACKS


def test_flows_the_tracker_knows_whole_are_never_asked_about_their_sender(monkeypatch):
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
    asked = []
    monkeypatch.setattr(tracker, "GetSkipBlocker", lambda flow: asked.append(flow) or 0)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, 11 * PERIOD_NS)

    assert len(controller.skips) == 1 and asked == []
