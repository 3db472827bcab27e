"""The shim's primitives, exercised directly on ns-3's real simulator and models."""

import pytest

from wormhole_ns3.runtime import native

HELPERS = r"""
#include "ns3/core-module.h"
#include "ns3/wormhole-module.h"
namespace wormhole_test {
using namespace ns3;
std::vector<std::pair<int, double>> fired;
void Mark(int id) { fired.emplace_back(id, Simulator::Now().GetSeconds()); }
EventId ScheduleMark(double at, int id) { return Simulator::Schedule(Seconds(at), &Mark, id); }
WormholeSimulatorImpl* Impl()
{
    return dynamic_cast<WormholeSimulatorImpl*>(PeekPointer(Simulator::GetImplementation()));
}
Ptr<SkipAwareRttEstimator> estimator;
void MeasureRtt(double seconds) { estimator->Measurement(Seconds(seconds)); }
EventId ScheduleMeasure(double at, double rtt) { return Simulator::Schedule(Seconds(at), &MeasureRtt, rtt); }
}
"""


@pytest.fixture(scope="module")
def ns3():
    shim = native.load()
    cppyy = shim.ns3.cppyy
    cppyy.cppdef(HELPERS)
    shim.ns3.GlobalValue.Bind(
        "SimulatorImplementationType", shim.ns3.StringValue("ns3::WormholeSimulatorImpl")
    )
    return shim.ns3


@pytest.fixture
def sim(ns3):
    ns3.Simulator.Destroy()
    test = ns3.cppyy.gbl.wormhole_test
    test.fired.clear()
    yield ns3, test
    ns3.Simulator.Destroy()


def _python_callback(ns3, function, keep):
    std_function = ns3.cppyy.gbl.std.function["void()"](function)
    callback = ns3.Callback["void"](std_function)
    keep += [function, std_function, callback]
    return callback


def _fired(test):
    return [(int(p.first), round(float(p.second), 9)) for p in test.fired]


def test_moving_a_class_delays_its_events_and_leaves_the_others(sim):
    ns3, test = sim
    impl = test.Impl()
    untagged = test.ScheduleMark(1.5, 0)
    tag = impl.NewTag()
    impl.AdoptTag(tag)  # set-up code is unattributed: from now on, events carry the tag
    a = test.ScheduleMark(1.0, 1)
    test.ScheduleMark(2.0, 2)
    checks, keep = {}, []

    def move():
        checks["moved"] = impl.MoveClass(impl.GetTagClass(tag), ns3.Seconds(1))
        checks["a_left"] = ns3.Simulator.GetDelayLeft(a).GetSeconds()
        checks["a_pending"] = a.IsPending()
        checks["untagged_left"] = ns3.Simulator.GetDelayLeft(untagged).GetSeconds()
        checks["next_unattributed"] = impl.NextUnattributedEventTime().GetSeconds()

    impl.ScheduleSystemCallback(ns3.Seconds(0.5), _python_callback(ns3, move, keep))
    ns3.Simulator.Run()
    assert checks == {
        "moved": 2,
        "a_left": pytest.approx(1.5),
        "a_pending": True,
        "untagged_left": pytest.approx(1.0),
        "next_unattributed": pytest.approx(1.5),
    }
    assert _fired(test) == [(0, 1.5), (1, 2.0), (2, 3.0)]
    # system events are the accelerator's own: not counted as model events
    assert ns3.Simulator.GetEventCount() == 3
    assert impl.GetSystemEventCount() == 1


def test_event_ids_stay_exact_after_a_move(sim):
    ns3, test = sim
    impl = test.Impl()
    tag = impl.NewTag()
    impl.AdoptTag(tag)
    cancelled = test.ScheduleMark(1.0, 1)
    removed = test.ScheduleMark(1.2, 2)
    kept = test.ScheduleMark(1.4, 3)
    keep, states = [], {}

    def move_then_touch():
        impl.MoveClass(tag, ns3.Seconds(2))
        # the EventIds still carry their old timestamps (1.0 .. 1.4 s): all must act on the moved events
        ns3.Simulator.Cancel(cancelled)
        ns3.Simulator.Remove(removed)
        states["cancelled"] = cancelled.IsExpired()
        states["removed"] = removed.IsExpired()
        states["kept_pending"] = kept.IsPending()

    def at_two_seconds():  # past the old timestamps, before the new ones
        states["kept_pending_later"] = kept.IsPending()
        states["kept_left"] = round(ns3.Simulator.GetDelayLeft(kept).GetSeconds(), 9)

    impl.ScheduleSystemCallback(ns3.Seconds(0.5), _python_callback(ns3, move_then_touch, keep))
    impl.ScheduleSystemCallback(ns3.Seconds(2.0), _python_callback(ns3, at_two_seconds, keep))
    ns3.Simulator.Run()
    assert states == {
        "cancelled": True,
        "removed": True,
        "kept_pending": True,
        "kept_pending_later": True,
        "kept_left": 1.4,
    }
    assert _fired(test) == [(3, 3.4)]
    assert kept.IsExpired()


def test_a_move_back_restores_the_original_times(sim):
    ns3, test = sim
    impl = test.Impl()
    tag = impl.NewTag()
    impl.AdoptTag(tag)
    test.ScheduleMark(1.0, 1)
    keep = []

    def forward():
        impl.MoveClass(tag, ns3.Seconds(3))

    def back():  # skip-back at t=0.8: 3 s were planned, cut to 0.3 s
        impl.MoveClass(tag, ns3.Seconds(-2.7))

    impl.ScheduleSystemCallback(ns3.Seconds(0.5), _python_callback(ns3, forward, keep))
    impl.ScheduleSystemCallback(ns3.Seconds(0.8), _python_callback(ns3, back, keep))
    ns3.Simulator.Run()
    assert _fired(test) == [(1, 1.3)]


def test_tags_of_one_class_move_together_and_classes_split_again(sim):
    ns3, test = sim
    impl = test.Impl()
    first, second, other = impl.NewTag(), impl.NewTag(), impl.NewTag()
    impl.SetTagClass(second, first)
    assert impl.GetTagClass(second) == impl.GetTagClass(first) == first != impl.GetTagClass(other)
    impl.AdoptTag(second)
    test.ScheduleMark(1.0, 2)
    keep = []

    def move_other():
        assert impl.MoveClass(impl.GetTagClass(other), ns3.Seconds(5)) == 0

    def move_first():
        assert impl.MoveClass(first, ns3.Seconds(1)) == 1

    def split():  # the partitions separated: the second flow's events move on their own
        impl.SetTagClass(second, second)
        assert impl.MoveClass(first, ns3.Seconds(1)) == 0
        assert impl.MoveClass(second, ns3.Seconds(0.5)) == 1

    for at, action in ((0.1, move_other), (0.2, move_first), (0.3, split)):
        impl.ScheduleSystemCallback(ns3.Seconds(at), _python_callback(ns3, action, keep))
    ns3.Simulator.Run()
    assert _fired(test) == [(2, 2.5)]


def test_a_transmission_is_attributed_to_its_packets_flow_not_the_dequeuing_one(sim):
    ns3, test = sim
    impl = test.Impl()
    dequeuing, packet_flow = impl.NewTag(), impl.NewTag()
    impl.AdoptTag(dequeuing)
    seen = {}
    keep = []

    def transmission_start():  # what the flow tracker does at a device's PhyTxBegin
        impl.SetCurrentTag(packet_flow)
        seen["tag"] = int(impl.GetCurrentTag())
        test.ScheduleMark(0.5, 7)  # the transmission's completion

    def move():
        seen["moved"] = int(impl.MoveClass(packet_flow, ns3.Seconds(1)))

    flow_event = ns3.cppyy.gbl.std.function["void()"](transmission_start)
    keep.append(flow_event)
    ns3.Simulator.Schedule(ns3.Seconds(0.1), flow_event)
    impl.ScheduleSystemCallback(ns3.Seconds(0.2), _python_callback(ns3, move, keep))
    ns3.Simulator.Run()
    assert seen == {"tag": packet_flow, "moved": 1}
    assert _fired(test) == [(7, 1.6)]


def test_workload_events_are_never_moved_nor_a_bound_and_the_hook_sees_them(sim):
    ns3, test = sim
    impl = test.Impl()
    workload = int(ns3.WormholeSimulatorImpl.WORKLOAD)
    hooked, keep = [], []
    impl.SetAfterUnattributedHook(
        _python_callback(ns3, lambda: hooked.append(int(impl.GetCurrentTag())), keep)
    )
    tag = impl.NewTag()
    release = test.ScheduleMark(1.0, 3)
    assert impl.Retag(release, workload)
    impl.AdoptTag(tag)
    test.ScheduleMark(2.0, 4)
    checks = {}

    def move():
        checks["moved"] = int(impl.MoveClass(tag, ns3.Seconds(1)))
        checks["next_unattributed"] = impl.NextUnattributedEventTime().GetSeconds()

    impl.ScheduleSystemCallback(ns3.Seconds(0.5), _python_callback(ns3, move, keep))
    ns3.Simulator.Run()
    assert checks["moved"] == 1
    assert checks["next_unattributed"] > 1e9  # none: the workload event is not a bound
    assert _fired(test) == [(3, 1.0), (4, 3.0)]
    assert hooked == [workload]


def _every(ns3, impl, schedule, period, keep):
    """A self-rescheduling accelerator event (a sampler), scheduled with ``schedule``; its times."""
    times = []

    def tick():
        times.append(round(ns3.Simulator.Now().GetSeconds(), 9))
        getattr(impl, schedule)(ns3.Seconds(period), callback)

    callback = _python_callback(ns3, tick, keep)
    getattr(impl, schedule)(ns3.Seconds(period), callback)
    return times


def test_housekeeping_events_alone_keep_no_run_alive(sim):
    ns3, test = sim
    impl = test.Impl()
    keep = []
    ticks = _every(ns3, impl, "ScheduleHousekeepingCallback", 0.3, keep)
    test.ScheduleMark(1.0, 1)
    test.ScheduleMark(2.0, 2)
    ns3.Simulator.Run()
    # Run() returns after the last model event, as plain ns-3's does when its queue is empty
    assert ns3.Simulator.Now().GetSeconds() == 2.0
    assert ns3.Simulator.IsFinished()
    assert ticks == [0.3, 0.6, 0.9, 1.2, 1.5, 1.8]
    assert not impl.WatchdogFired()
    # a later Run() with more to do picks the pending housekeeping up where it was
    test.ScheduleMark(1.0, 3)
    assert not ns3.Simulator.IsFinished()
    ns3.Simulator.Run()
    assert ticks[6:] == [2.1, 2.4, 2.7]
    assert _fired(test) == [(1, 1.0), (2, 2.0), (3, 3.0)]
    assert ns3.Simulator.GetEventCount() == 3
    assert impl.GetSystemEventCount() == 9


def test_the_watchdog_ends_a_run_only_system_events_keep_going(sim):
    ns3, test = sim
    impl = test.Impl()
    impl.SetWatchdogLimit(50)
    keep = []
    # the old hang: an accelerator event that reschedules itself for ever
    ticks = _every(ns3, impl, "ScheduleSystemCallback", 1.0, keep)
    test.ScheduleMark(100.5, 1)
    ns3.Simulator.Run()
    assert impl.WatchdogFired()
    assert _fired(test) == [(1, 100.5)]  # while a model event is pending, system events run freely
    assert len(ticks) == 150  # 100 before the model event, then the limit
    assert ns3.Simulator.GetEventCount() == 1


def test_housekeeping_counts_nothing_towards_the_watchdog(sim):
    """A memo's start waits as a system event; samplers of idle flows tick meanwhile: no hang."""
    ns3, test = sim
    impl = test.Impl()
    impl.SetWatchdogLimit(5)
    keep = []
    ticks = _every(ns3, impl, "ScheduleHousekeepingCallback", 0.1, keep)
    impl.ScheduleSystemCallback(ns3.Seconds(3), _python_callback(ns3, lambda: test.ScheduleMark(1.0, 1), keep))
    ns3.Simulator.Run()
    assert not impl.WatchdogFired()
    assert _fired(test) == [(1, 4.0)]
    assert len(ticks) == 39


def test_rtt_samples_spanning_a_skip_do_not_count_the_skipped_time(sim):
    ns3, test = sim
    impl = test.Impl()
    test.estimator = ns3.CreateObject[ns3.SkipAwareRttEstimator]()
    reference = ns3.CreateObject[ns3.RttMeanDeviation]()
    tag = impl.NewTag()
    impl.AdoptTag(tag)
    # a segment sent at 0.999 s is acknowledged at 1.0 s; the skip delays the ACK to 3.0 s,
    # so TCP's raw sample (now - sent) is 2.001 s
    test.ScheduleMeasure(1.0, 2.001)
    keep = []
    impl.ScheduleSystemCallback(
        ns3.Seconds(0.9995), _python_callback(ns3, lambda: impl.MoveClass(tag, ns3.Seconds(2)), keep)
    )
    ns3.Simulator.Run()
    reference.Measurement(ns3.Seconds(0.001))
    assert test.estimator.GetEstimate().GetSeconds() == pytest.approx(
        reference.GetEstimate().GetSeconds()
    )
    assert test.estimator.GetCorrectedSamples() == 1


def _small_dumbbell(ns3, flows=1, mb=20):
    """The demo's dumbbell, built in this process, with the tracker attached."""
    import argparse
    import importlib.util

    from wormhole_ns3.runtime import loader

    from conftest import DUMBBELL

    loader.install_ns_module()
    spec = importlib.util.spec_from_file_location("dumbbell_for_test", DUMBBELL)
    dumbbell = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(dumbbell)
    args = argparse.Namespace(flows=flows, min_mb=mb, max_mb=mb, stagger_ms=0, rate="10Gbps",
                              delay="10us", stop=0, del_ack_count=1)
    dumbbell.configure_tcp(1)
    senders, receivers, addresses = dumbbell.build_topology(flows, args.rate, args.delay)
    sinks = dumbbell.install_flows(senders, receivers, addresses, args)
    tracker = ns3.CreateObject[ns3.FlowTracker]()
    tracker.Discover()
    return tracker, sinks


def test_crediting_moves_bytes_from_sender_to_sink_and_totals_stay_exact(sim):
    ns3, test = sim
    tracker, sinks = _small_dumbbell(ns3)
    ns3.Simulator.Stop(ns3.Seconds(0.105))
    ns3.Simulator.Run()
    assert tracker.GetState(0) == 1  # sending
    size = tracker.GetSize(0)
    rx, sendable = sinks[0].GetTotalRx(), tracker.GetSendable(0)
    assert tracker.Credit(0, 5_000_000) == 5_000_000
    assert sinks[0].GetTotalRx() == rx + 5_000_000  # what the user's script reads
    assert tracker.GetSendable(0) == sendable - 5_000_000
    assert tracker.Uncredit(0, 1_000_000) == 1_000_000
    assert sinks[0].GetTotalRx() == rx + 4_000_000
    ns3.Simulator.Stop(ns3.Seconds(10))
    ns3.Simulator.Run()
    assert sinks[0].GetTotalRx() == size
    assert tracker.GetState(0) == 2 and tracker.GetCredited(0) == 4_000_000


def test_crediting_past_the_application_trims_tcps_unsent_buffer(sim):
    ns3, test = sim
    tracker, sinks = _small_dumbbell(ns3, mb=6)
    ns3.Simulator.Stop(ns3.Seconds(0.1015))
    ns3.Simulator.Run()
    sendable = tracker.GetSendable(0)
    # ask for everything the sender still holds, application counter and socket buffer alike
    assert tracker.Credit(0, sendable) == sendable
    assert tracker.GetSendable(0) == 0
    ns3.Simulator.Stop(ns3.Seconds(10))
    ns3.Simulator.Run()
    assert sinks[0].GetTotalRx() == tracker.GetSize(0)


def test_a_flow_s_congestion_control_is_known_before_its_socket_exists(sim):
    ns3, test = sim
    tracker, sinks = _small_dumbbell(ns3)
    assert tracker.GetCongestionOps(0) == ""  # no socket before the application starts
    assert tracker.GetPlannedCongestionOps(0) == "ns3::TcpDctcp"
    ns3.Simulator.Stop(ns3.Seconds(0.101))
    ns3.Simulator.Run()
    assert tracker.GetCongestionOps(0) == tracker.GetPlannedCongestionOps(0) == "ns3::TcpDctcp"


def test_fingerprints_name_every_parameter_that_shapes_a_flow_and_a_link(sim):
    ns3, test = sim
    tracker, sinks = _small_dumbbell(ns3, flows=2)
    ns3.Simulator.Stop(ns3.Seconds(0.101))
    ns3.Simulator.Run()
    flow = str(tracker.GetFlowFingerprint(0))
    for part in ("bulk-tcp", "size=20000000", "SendSize=1448", "SegmentSize=1448",
                 "ns3::TcpDctcp{", "DctcpShiftG=0.0625", "SndBufSize=4194304",
                 "RttEstimatorType=ns3::RttMeanDeviation"):
        assert part in flow, part
    assert "Remote=" not in flow  # identities differ between equal flows; they are left out
    assert tracker.GetFlowFingerprint(1) == tracker.GetFlowFingerprint(0)  # same size and stack
    bottleneck = [int(x) for x in tracker.GetPath(0)][1]
    link = str(tracker.GetLinkFingerprint(bottleneck))
    for part in ("DataRate=10000000000bps", "Delay=+10000ns", "ns3::RedQueueDisc{", "MinTh=65",
                 "UseEcn=true", "MaxSize=100p"):
        assert part in link, part
    assert "Address=" not in link
    assert tracker.IsLossless(bottleneck)


def test_a_restored_tcp_state_is_what_the_sender_then_has(sim):
    ns3, test = sim
    tracker, sinks = _small_dumbbell(ns3)
    ns3.Simulator.Stop(ns3.Seconds(0.1005))
    ns3.Simulator.Run()  # the flow is sending: sampling can start
    tracker.SetSnapshotting(0, True)
    tracker.ConfigureSampling(ns3.MicroSeconds(100), 10, ns3.Callback["void"]())
    tracker.SetSampled(0, True)
    ns3.Simulator.Stop(ns3.Seconds(0.0055))
    ns3.Simulator.Run()
    snapshots = list(tracker.GetSnapshots(0))
    assert len(snapshots) == 54  # one per 100 us sample, until the stop at 0.106 s
    assert [s.time for s in snapshots] == [100_600_000 + 100_000 * i for i in range(54)]
    delivered = [s.delivered for s in snapshots]
    assert delivered == sorted(delivered) and delivered[-1] <= tracker.GetDelivered(0)
    assert all(s.tcp.cwnd > 0 and s.tcp.srtt > 0 for s in snapshots)
    state = tracker.GetTcpState(0)
    assert state.cwnd > 10 * 1448 and 0 <= state.alpha <= 1 and state.srtt > 0
    wanted = ns3.TcpFlowState()
    wanted.cwnd, wanted.ssthresh, wanted.alpha = 123 * 1448, 100 * 1448, 0.25
    wanted.srtt, wanted.rttvar, wanted.rto = 80_000, 5_000, 200_000_000
    assert tracker.SetTcpState(0, wanted)
    got = tracker.GetTcpState(0)
    assert (got.cwnd, got.ssthresh, got.alpha) == (123 * 1448, 100 * 1448, 0.25)
    assert (got.srtt, got.rttvar, got.rto) == (80_000, 5_000, 200_000_000)
    tracker.SetSnapshotting(0, False)
    assert len(tracker.GetSnapshots(0)) == 0
    ns3.Simulator.Stop(ns3.Seconds(10))
    ns3.Simulator.Run()
    assert sinks[0].GetTotalRx() == tracker.GetSize(0)  # the flow carries on and completes


def test_a_flow_record_and_outcome_hold_what_the_per_field_getters_return(sim):
    ns3, test = sim
    tracker, sinks = _small_dumbbell(ns3, flows=2, mb=2)

    def per_field(flow):
        return dict(
            id=flow, kind=str(tracker.GetKind(flow)), srcNode=int(tracker.GetSrcNode(flow)),
            dstNode=int(tracker.GetDstNode(flow)), src=str(tracker.GetSrcAddress(flow)),
            dst=str(tracker.GetDstAddress(flow)), sport=int(tracker.GetSrcPort(flow)),
            dport=int(tracker.GetDstPort(flow)), size=int(tracker.GetSize(flow)),
            start=tracker.GetStartTime(flow).GetSeconds(),
            path=[int(x) for x in tracker.GetPath(flow)],
            reversePath=[int(x) for x in tracker.GetReversePath(flow)],
            congestionOps=str(tracker.GetCongestionOps(flow)),
            constantRate=bool(tracker.IsConstantRate(flow)), paced=bool(tracker.IsPaced(flow)),
            appRateBps=float(tracker.GetAppRate(flow)), tag=int(tracker.GetTag(flow)),
        )

    def batched(flow):
        r = tracker.GetFlowRecord(flow)
        return dict(
            id=int(r.id), kind=str(r.kind), srcNode=int(r.srcNode), dstNode=int(r.dstNode),
            src=str(r.src), dst=str(r.dst), sport=int(r.sport), dport=int(r.dport),
            size=int(r.size), start=float(r.start), path=[int(x) for x in r.path],
            reversePath=[int(x) for x in r.reversePath], congestionOps=str(r.congestionOps),
            constantRate=bool(r.constantRate), paced=bool(r.paced), appRateBps=float(r.appRateBps),
            tag=int(r.tag),
        )

    def outcome(flow):
        o = tracker.GetFlowOutcome(flow)
        return (int(o.id), str(o.kind), str(o.src), str(o.dst), int(o.sport), int(o.dport),
                int(o.size), float(o.start), float(o.finish), int(o.rxBytes), int(o.credited))

    def outcome_per_field(flow):
        return (flow, str(tracker.GetKind(flow)), str(tracker.GetSrcAddress(flow)),
                str(tracker.GetDstAddress(flow)), int(tracker.GetSrcPort(flow)),
                int(tracker.GetDstPort(flow)), int(tracker.GetSize(flow)),
                tracker.GetStartTime(flow).GetSeconds(), tracker.GetFinishTime(flow).GetSeconds(),
                int(tracker.GetSinkTotalRx(flow)), int(tracker.GetCredited(flow)))

    for until in (0.0, 0.1005, 10):  # before any flow starts, while sending, finished
        ns3.Simulator.Stop(ns3.Seconds(until))
        ns3.Simulator.Run()
        for flow in range(int(tracker.GetNFlows())):
            assert batched(flow) == per_field(flow)
            assert outcome(flow) == outcome_per_field(flow)
    assert batched(0)["path"] and outcome(0)[8] > 0  # a routed flow that finished


def test_a_lookups_batched_reads_hold_what_the_per_flow_and_per_link_getters_return(sim):
    """FlowTracker::GetLookupFacts (a batch's routes and identities), ReadQueuedPackets (a join's queues, in
    place) and DecideStarts (a batch's decisions) against the getters and setter they stand for."""
    import numpy as np

    from wormhole_ns3.runtime import boundary

    ns3, test = sim
    tracker, sinks = _small_dumbbell(ns3, flows=2, mb=2)
    flows = np.array([1, 0], dtype=np.int64)
    for until in (0.0, 0.1005):  # before the flows start (planned routes), while they send
        ns3.Simulator.Stop(ns3.Seconds(until))
        ns3.Simulator.Run()
        facts = boundary.lookup_facts(tracker.GetLookupFacts(flows, 2, True, True))
        assert facts == [(boundary.planned_route(tracker, flow), bool(tracker.IsPaced(flow)),
                          str(tracker.GetKind(flow)), str(tracker.GetFlowFingerprint(flow)),
                          str(tracker.GetPlannedCongestionOps(flow))) for flow in (1, 0)]
        assert facts[0].route[0] and facts[0].kind == "bulk-tcp" and not facts[0].paced  # TCP is not paced
        routes = boundary.lookup_facts(tracker.GetLookupFacts(flows, 2, True, False))
        assert routes == [(fact.route, False, "", "", "") for fact in facts]
        identities = boundary.lookup_facts(tracker.GetLookupFacts(flows, 2, False, True))
        assert identities == [(((), ()), *fact[1:]) for fact in facts]
        links = [int(link) for link in tracker.GetPath(0)] + [int(link) for link in tracker.GetReversePath(0)]
        assert boundary.queued_packets(tracker, links) == [int(tracker.GetQueuedPackets(link)) for link in links]
    assert any(boundary.queued_packets(tracker, links))  # packets queued while the flows send
    with pytest.raises(ns3.cppyy.gbl.std.invalid_argument):
        tracker.DecideStarts(np.array([0, 1, 1], dtype=np.int64), 3)  # no pairs
    tracker.DecideStarts(np.zeros(1, dtype=np.int64), 0)  # no decision: nothing told


def test_the_warm_up_reads_no_flow_made_before_run_away_from_the_run(sim):
    """boundary.warm_up reads the created flows once (TakeCreatedFlows(0, False)) to bind it: with flows made
    before Run(), the run's own first read from flow 0 (Arrivals.take_created) still has every one."""
    from wormhole_ns3.runtime import boundary

    ns3, test = sim
    tracker, sinks = _small_dumbbell(ns3, flows=2, mb=2)
    boundary.warm_up(ns3, tracker, memo=True)
    created = boundary.created_flows(tracker.TakeCreatedFlows(0, True))
    flows = int(tracker.GetNFlows())  # this process's earlier tests' nodes are still listed, their flows too
    assert flows >= 2 and [(flow.flow, flow.state, flow.size) for flow in created.flows] == [
        (flow, int(tracker.GetState(flow)), int(tracker.GetSize(flow))) for flow in range(flows)]


def test_a_tcp_senders_bytes_on_the_network_lead_its_delivery_by_what_is_in_flight(sim):
    """BulkSendFlow::GetSent: each byte once, credits included; in slow start it runs ahead of delivery."""
    ns3, test = sim
    tracker, sinks = _small_dumbbell(ns3)
    ns3.Simulator.Stop(ns3.Seconds(0.1005))
    ns3.Simulator.Run()
    tracker.ConfigureSampling(ns3.MicroSeconds(100), 10, ns3.Callback["void"]())
    tracker.SetSampled(0, True)
    ns3.Simulator.Stop(ns3.Seconds(0.001))
    ns3.Simulator.Run()
    sent, delivered = list(tracker.GetSentSamples(0)), list(tracker.GetSamples(0))
    in_flight = [s - d for s, d in zip(sent, delivered)]
    assert sent == sorted(sent) and all(b > 0 for b in in_flight)
    # alone on its links, the flow's window (and its own host queue) grows faster than it delivers
    assert in_flight[-1] > 2 * in_flight[0]
    # a credit counts as sent and as delivered alike: what is in flight carries on from where it was
    assert tracker.Credit(0, 1_000_000) == 1_000_000
    ns3.Simulator.Stop(ns3.MicroSeconds(100))
    ns3.Simulator.Run()
    after = int(tracker.GetSentSamples(0)[-1]) - int(tracker.GetSamples(0)[-1])
    assert in_flight[-1] <= after < in_flight[-1] + 1_000_000, (in_flight[-1], after)
    ns3.Simulator.Stop(ns3.Seconds(10))
    ns3.Simulator.Run()
    assert sinks[0].GetTotalRx() == tracker.GetSize(0)


def test_what_warm_up_binds_before_run_is_refused_with_an_exception_and_changes_nothing(sim):
    """A link, a tag class and a housekeeping callback the simulation cannot have raise, not abort:
    the boundary binds their wrappers so before Run() (boundary.warm_up, warm_up_simulator)."""
    from wormhole_ns3.runtime import boundary

    ns3, test = sim
    impl = test.Impl()
    std = ns3.cppyy.gbl.std
    tracker = ns3.CreateObject[ns3.FlowTracker]()
    for getter in ("GetLinkRate", "GetLinkDelay", "GetQueuedPackets", "GetLinkRandomSources", "IsLossless"):
        with pytest.raises(std.out_of_range):
            getattr(tracker, getter)(0)  # there is no node 0
    with pytest.raises(std.out_of_range):
        impl.SetTagClass(0, 0)  # tag 0 is no flow's
    with pytest.raises(std.invalid_argument):
        impl.ScheduleHousekeepingCallback(ns3.NanoSeconds(-1), ns3.Callback["void"]())
    boundary.warm_up(ns3, tracker, memo=True)
    boundary.warm_up_templates(ns3)
    boundary.warm_up_simulator(ns3, impl)
    test.ScheduleMark(1.0, 1)
    ns3.Simulator.Run()
    assert _fired(test) == [(1, 1.0)] and ns3.Simulator.GetEventCount() == 1 and impl.GetSystemEventCount() == 0
