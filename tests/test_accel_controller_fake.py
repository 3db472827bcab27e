"""The controller's decisions against a fake tracker and simulator: no ns-3, no cppyy."""

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from wormhole_ns3.accel.controller import ACTIVE, FINISHED, PENDING, Controller
from wormhole_ns3.accel.fastforward import SkipEnd
from wormhole_ns3.accel.packet_level import PacketLevel
from wormhole_ns3.accel.steady import Limit
from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.core.draws import DrawCase, Fidelity, RandomSource
from wormhole_ns3.core.trace import TraceKind

from fakes import FakeBoundary, FakeFlow, FakeNs3, dumbbell, link_id

PERIOD_NS = 1_000_000  # 1 ms between samples
WINDOW = 10
BOTTLENECK = 1.25e8  # bytes/s: 1 Gb/s
BOTTLENECK_LINK = link_id(50, 1)  # the dumbbell's switch port towards the receiver
RED_BETWEEN_THRESHOLDS = RandomSource("ns3::RedQueueDisc marks or drops at random between MinTh and MaxTh", True)


def run_with(flows, config=None, bottleneck_bps=1e9, kind="bulk-tcp", bottleneck_sources=()):
    """A controller attached to a fake run whose flows (of ``kind``) are all sending at t=0.

    ``bottleneck_sources``: the models on the bottleneck that may draw random numbers.
    """
    tracker, routes = dumbbell(len(flows), bottleneck_bps)
    tracker.random_sources[BOTTLENECK_LINK] = tuple(bottleneck_sources)
    ns3 = FakeNs3()
    boundary = FakeBoundary()
    config = config or AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, tail_rtts=20)
    controller = Controller(ns3, config, accelerate=True, tracker=tracker, boundary=boundary)
    controller.attach()
    ns3.RunObserver.on_start()
    for (path, reverse), (size, cc) in zip(routes, flows):
        flow = tracker.add_flow(FakeFlow(src_node=path[0] >> 16, dst_node=60, size=size, path=path,
                                         reverse_path=reverse, kind=kind, congestion_control=cc))
        tracker.on_flow_event(flow, ACTIVE)
    return controller, tracker, ns3


def deliver(tracker, rates, samples=WINDOW + 1):
    """Give each flow ``samples`` delivered-bytes samples at constant rates (bytes/s)."""
    for flow, rate in rates.items():
        tracker.flows[flow].samples = [round(i * rate * PERIOD_NS * 1e-9) for i in range(samples)]


def sample_at(controller, ns3, t_ns):
    ns3.now_ns = t_ns
    controller.on_sample()


def test_the_controller_runs_without_ns3_and_binds_its_callbacks():
    controller, tracker, ns3 = run_with([(10**7, "ns3::TcpDctcp")] * 2)
    assert controller.boundary.warmed_up
    assert controller.impl is ns3.impl
    period_ns, samples_per_call, on_sample = tracker.sampling
    assert (period_ns, samples_per_call) == (PERIOD_NS, 1) and on_sample == controller.on_sample
    assert len(controller.partitions) == 1  # both flows cross the bottleneck


def test_the_controller_the_memo_and_their_fakes_import_neither_ns3_nor_cppyy():
    """In a fresh interpreter: in this one, other tests may have loaded ns-3."""
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import fakes, wormhole_ns3.accel.controller, wormhole_ns3.memo.driver, wormhole_ns3.runtime.boundary\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('cppyy', 'ns', 'ns3'))\n"
        "assert not loaded, loaded\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_steady_fair_partition_is_skipped_to_the_first_flows_tail():
    controller, tracker, ns3 = run_with([(5 * 10**6, "ns3::TcpDctcp"), (10**7, "ns3::TcpDctcp")])
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    now_ns = 11 * PERIOD_NS
    sample_at(controller, ns3, now_ns)

    assert len(controller.skips) == 1
    skip = controller.skips[0]
    st = next(iter(controller.partitions.values()))
    assert st.last_verdict.steady and st.last_verdict.limit is None
    assert skip.kind is TraceKind.STEADY and skip.flow_ids == (0, 1) and skip.partition == "0 1"
    assert st.end is SkipEnd.FLOW_TAIL and skip.limit == "flow 0 tail"
    # both delivered 49% of the link: each is credited that rate, up to flow 0's tail
    rate = 0.49 * BOTTLENECK
    delivered = tracker.flows[0].samples[-1]
    tail = controller.config.tail_rtts * st.rtt
    assert skip.dt == pytest.approx((5 * 10**6 - delivered) / rate - tail, abs=1e-9)
    assert tracker.flows[0].credited == pytest.approx(rate * skip.dt, rel=1e-6)
    assert skip.credited_bytes == tracker.flows[0].credited + tracker.flows[1].credited
    assert ns3.impl.moved == [(st.tag_class, round(skip.dt * 1e9), [])]
    assert tracker.flows[0].shifted_ns == round(skip.dt * 1e9) and not tracker.flows[0].sampled
    assert skip.reason.startswith("aggregate spread 0.0% < 5.0% over 10 samples, shares within 0.0% of fair; ")
    assert controller.packet_level_time == {}  # the window was skipped, not run packet by packet


def test_an_unfair_partition_is_refused_and_its_window_charged_to_unfair_shares():
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.75 * BOTTLENECK, 1: 0.23 * BOTTLENECK})
    sample_at(controller, ns3, 11 * PERIOD_NS)

    st = next(iter(controller.partitions.values()))
    assert controller.skips == []
    assert st.last_verdict.limit is Limit.UNFAIR and st.last_verdict.flow == 0
    assert controller.packet_level_time == {PacketLevel.UNFAIR_SHARES: pytest.approx(PERIOD_NS * 1e-9)}


def test_the_window_slides_a_refused_partition_is_judged_again_at_the_next_sample():
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.75 * BOTTLENECK, 1: 0.23 * BOTTLENECK})
    st = next(iter(controller.partitions.values()))
    sample_at(controller, ns3, 11 * PERIOD_NS)
    assert st.last_verdict.limit is Limit.UNFAIR and st.held_back_by is Limit.UNFAIR
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, 12 * PERIOD_NS)  # judged at a sample that ends no multiple of the window
    assert st.last_verdict.steady and st.held_back_by is None
    (skip,) = controller.skips
    assert skip.time == pytest.approx(12 * PERIOD_NS * 1e-9)
    assert skip.reason.endswith("RTTs since last flow event, held back until then by unfair share")


def test_no_judgement_before_the_shortest_window_of_samples_can_have_been_taken():
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, (controller.config.min_window - 1) * PERIOD_NS)
    st = next(iter(controller.partitions.values()))
    assert st.last_verdict is None and controller.skips == []
    assert controller.packet_level_time == {PacketLevel.FILLING_WINDOW: pytest.approx(PERIOD_NS * 1e-9)}


def test_a_short_window_is_judged_on_a_spread_scaled_down_with_it():
    """Five samples after the flows started: steady only if the aggregate varies by under 5% * 5 / 10."""
    def aggregate_varying_by(spread):
        controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
        rates = [0.49 * BOTTLENECK * (1 + spread * (i % 2)) for i in range(5)]
        for flow in (0, 1):
            tracker.flows[flow].samples = [0] + [round(sum(rates[:i + 1]) * PERIOD_NS * 1e-9) for i in range(5)]
        sample_at(controller, ns3, 5 * PERIOD_NS)
        return next(iter(controller.partitions.values())).last_verdict, controller.skips

    verdict, skips = aggregate_varying_by(0.02)
    assert verdict.steady and len(skips) == 1
    assert skips[0].reason.startswith("aggregate spread 2.0% < 2.5% over 5 samples")
    verdict, skips = aggregate_varying_by(0.03)  # steady over a whole window, not over half of one
    assert verdict.limit is Limit.SPREAD and verdict.reason == "aggregate spread 3.0% >= 2.5%" and skips == []


def test_packet_level_time_is_charged_by_the_verdicts_limit():
    settling = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, tail_rtts=20, settle_rtts=30)
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2, settling)
    sample_at(controller, ns3, PERIOD_NS)  # right after the flows started, within --settle-rtts
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK}, samples=3)
    sample_at(controller, ns3, 11 * PERIOD_NS)
    tracker.flows[0].samples = [i * 90_000 if i % 2 else i * 30_000 for i in range(WINDOW + 1)]
    tracker.flows[1].samples = [i * 60_000 for i in range(WINDOW + 1)]
    sample_at(controller, ns3, 13 * PERIOD_NS)  # two samples on

    period = PERIOD_NS * 1e-9  # each sample charges its period
    assert controller.packet_level_time == {
        PacketLevel.SETTLING: pytest.approx(period),
        PacketLevel.FILLING_WINDOW: pytest.approx(period),
        PacketLevel.AGGREGATE_UNSTEADY: pytest.approx(period),
    }
    st = next(iter(controller.partitions.values()))
    assert st.last_verdict.limit is Limit.SPREAD
    # run.json prints the categories as they always read
    assert sorted(map(str, controller.packet_level_time)) == [
        "aggregate rate unsteady", "filling a window", "settling after a flow event"]


def test_a_flow_whose_congestion_control_keeps_time_based_state_is_never_skipped():
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpHtcp"), (10**8, "ns3::TcpDctcp")])
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, 11 * PERIOD_NS)

    assert controller.skips == []
    assert controller.skip_blocker(0) == "ns3::TcpHtcp keeps time-based state"
    assert set(controller.packet_level_time) == {PacketLevel.UNSKIPPABLE_FLOW}


def test_same_seed_never_skips_where_a_model_that_draws_once_a_queue_stands_can_get_one():
    """RED between its thresholds at a bottleneck the flows can overload: its draws cannot be left out."""
    flows = [(10**8, "ns3::TcpDctcp")] * 2
    controller, tracker, ns3 = run_with(flows, bottleneck_sources=[RED_BETWEEN_THRESHOLDS])
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, 11 * PERIOD_NS)
    st = next(iter(controller.partitions.values()))
    assert controller.skips == [] and st.draws_at == f"{RED_BETWEEN_THRESHOLDS.what} (link {BOTTLENECK_LINK})"
    assert set(controller.packet_level_time) == {PacketLevel.DRAWING}

    statistical = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, tail_rtts=20,
                                    fidelity=Fidelity.STATISTICAL)
    controller, tracker, ns3 = run_with(flows, statistical, bottleneck_sources=[RED_BETWEEN_THRESHOLDS])
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, 11 * PERIOD_NS)
    assert len(controller.skips) == 1


def test_same_seed_judges_a_partition_that_drew_afresh_over_a_window_that_draws_nothing():
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK}, samples=30)
    st = next(iter(controller.partitions.values()))
    ns3.impl.draws_per_tag[controller.flows[0].tag] = 5  # an application's jitter, say
    sample_at(controller, ns3, 11 * PERIOD_NS)
    assert controller.skips == [] and st.last_verdict.limit is Limit.DRAWS
    assert (st.mark_time, st.mark_draws) == (pytest.approx(11e-3), 5)
    sample_at(controller, ns3, 12 * PERIOD_NS)
    assert controller.skips == []  # the fresh window is not full yet
    sample_at(controller, ns3, 21 * PERIOD_NS)
    assert len(controller.skips) == 1 and controller.skips[0].draws is DrawCase.DREW_NOTHING


def test_cubic_ns3s_default_is_skipped_by_default_and_its_clocks_move_with_the_skip():
    config = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, tail_rtts=20)
    refused, tracker, ns3 = run_with([(10**8, "ns3::TcpCubic")] * 2, replace(config, skip_cubic=False))
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(refused, ns3, 11 * PERIOD_NS)
    assert refused.skips == []
    assert refused.skip_blocker(0) == "ns3::TcpCubic keeps time-based state (--no-skip-cubic)"

    # flows that met no congestion signal: their windows are held, nothing to cut to whole cycles
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpCubic")] * 2, config)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, 11 * PERIOD_NS)

    assert len(controller.skips) == 1 and controller.skips[0].cycles == 0
    skip_ns = round(controller.skips[0].dt * 1e9)
    assert skip_ns > 0
    # BulkSendFlow::ShiftTimes moves Cubic's epoch and HyStart's clocks by as much
    assert [tracker.flows[f].shifted_ns for f in (0, 1)] == [skip_ns, skip_ns]


def cycling(tracker, flows, cycle, samples, offset=0, rate=0.49 * BOTTLENECK):
    """Samples of Cubic flows cut by a congestion signal every ``cycle`` samples, their windows rising between."""
    deliver(tracker, {f: rate for f in flows}, samples=samples)
    for f in flows:
        starts = range(5 + offset, samples, cycle)
        tracker.flows[f].notifications = [sum(s <= i for s in starts) for i in range(samples)]
        tracker.flows[f].windows = [100_000 + 1000 * ((i - 5 - offset) % cycle) for i in range(samples)]


def test_a_cubic_skip_spans_whole_congestion_cycles_and_ends_where_the_next_one_would_not_fit():
    """Cut at every 20th sample, 6 cycles seen: the skip before an event 150 samples on spans 7 cycles, not 7.5."""
    controller, tracker, ns3 = run_with([(10**9, "ns3::TcpCubic")] * 2)
    cycling(tracker, (0, 1), cycle=20, samples=131)
    ns3.impl.next_unattributed_ns = 280 * PERIOD_NS
    sample_at(controller, ns3, 130 * PERIOD_NS)

    (skip,) = controller.skips
    st = next(iter(controller.partitions.values()))
    assert st.cycles[0].period == pytest.approx(20 * PERIOD_NS * 1e-9) and st.cycles[0].measured == 6
    assert skip.cycles == 7 and skip.dt == pytest.approx(140 * PERIOD_NS * 1e-9)
    assert st.end is SkipEnd.WHOLE_CYCLES and skip.limit == "whole cycles"
    assert [tracker.flows[f].shifted_ns for f in (0, 1)] == [140 * PERIOD_NS] * 2
    # each flow's share for as long
    assert skip.credited_bytes == pytest.approx(2 * 0.49 * BOTTLENECK * 140e-3, abs=2)
    ns3.now_ns = 270 * PERIOD_NS
    controller.on_resume()
    assert st.rates is None  # judged afresh: the period's error grows with each cycle counted on it


def test_a_cubic_skip_spans_no_more_cycles_than_its_measured_period_keeps_within_the_phase_tolerance():
    """2 cycles of 20 samples seen: the period is known within half a sample, so 4 cycles keep the phase within
    2 samples (PHASE_TOLERANCE of a cycle), whatever the room."""
    controller, tracker, ns3 = run_with([(10**9, "ns3::TcpCubic")] * 2)
    cycling(tracker, (0, 1), cycle=20, samples=51)
    ns3.impl.next_unattributed_ns = 500 * PERIOD_NS
    sample_at(controller, ns3, 50 * PERIOD_NS)
    (skip,) = controller.skips
    assert skip.cycles == 4 and skip.dt == pytest.approx(80 * PERIOD_NS * 1e-9)


def test_a_cubic_skip_is_refused_while_its_cycles_do_not_repeat_and_when_no_whole_cycle_fits():
    controller, tracker, ns3 = run_with([(10**9, "ns3::TcpCubic")] * 2)
    cycling(tracker, (0, 1), cycle=20, samples=51)
    tracker.flows[1].notifications = [n + (i >= 12) for i, n in enumerate(tracker.flows[1].notifications)]
    tracker.flows[1].windows[12] = tracker.flows[1].windows[13] = 90_000  # cut at 12 and at 25: 7 then 20
    ns3.impl.next_unattributed_ns = 200 * PERIOD_NS
    sample_at(controller, ns3, 50 * PERIOD_NS)
    st = next(iter(controller.partitions.values()))
    assert controller.skips == [] and st.last_verdict.limit is Limit.CYCLE_UNSEEN and st.last_verdict.flow == 1

    controller, tracker, ns3 = run_with([(10**9, "ns3::TcpCubic")] * 2)
    cycling(tracker, (0, 1), cycle=20, samples=51)
    ns3.impl.next_unattributed_ns = 65 * PERIOD_NS  # 15 samples on: no whole cycle of 20
    sample_at(controller, ns3, 50 * PERIOD_NS)
    assert controller.skips == []
    assert set(controller.packet_level_time) == {PacketLevel.SKIP_TOO_SHORT}


def test_a_skip_never_crosses_an_unattributed_event_and_is_judged_afresh_after_it():
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    ns3.impl.next_unattributed_ns = 20 * PERIOD_NS
    sample_at(controller, ns3, 11 * PERIOD_NS)

    (skip,) = controller.skips
    st = next(iter(controller.partitions.values()))
    assert st.end is SkipEnd.UNATTRIBUTED_EVENT and skip.limit == "unattributed event"
    assert skip.dt == pytest.approx(9 * PERIOD_NS * 1e-9)
    ns3.now_ns = 20 * PERIOD_NS
    controller.on_resume()
    assert not st.paused and st.rates is None  # something outside the flows ran


def test_a_flow_starting_on_a_skipped_partitions_links_cuts_the_skip_short():
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    ns3.impl.next_unattributed_ns = 31 * PERIOD_NS
    sample_at(controller, ns3, 11 * PERIOD_NS)
    (skip,) = controller.skips
    credited = skip.credited_bytes

    ns3.now_ns = 16 * PERIOD_NS  # a quarter of the way through the skip
    newcomer = tracker.add_flow(FakeFlow(src_node=1, dst_node=60, size=10**6,
                                         path=tracker.flows[0].path, reverse_path=tracker.flows[0].reverse_path))
    tracker.on_flow_event(newcomer, ACTIVE)

    (cut,) = controller.skips
    assert controller.reverts == 1
    assert cut.limit == f"skip-back: flow {newcomer} started on its links"
    assert cut.dt == pytest.approx(5 * PERIOD_NS * 1e-9)
    assert cut.credited_bytes == pytest.approx(credited / 4, rel=1e-6)
    assert tracker.flows[0].credited + tracker.flows[1].credited == cut.credited_bytes
    assert ns3.Simulator.cancelled  # the resume event of the skip
    assert cut.kind is TraceKind.STEADY and cut.flow_ids == (0, 1)


def test_a_skip_back_leaves_its_flows_unsampled_until_a_flow_event_anywhere_samples_them():
    """As a pass over every partition at every flow event did: the incremental one must too."""
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    ns3.impl.next_unattributed_ns = 31 * PERIOD_NS
    sample_at(controller, ns3, 11 * PERIOD_NS)
    assert len(controller.skips) == 1 and not tracker.flows[0].sampled

    ns3.now_ns = 16 * PERIOD_NS
    tracker.after_unattributed(True)  # an unattributed event ran: every skip is cut short
    assert controller.reverts == 1 and not any(tracker.flows[f].sampled for f in (0, 1))

    up, down = link_id(7, 1), link_id(8, 1)
    tracker.link_rates_bps.update({up: 1e9, down: 1e9})
    other = tracker.add_flow(FakeFlow(src_node=7, dst_node=8, size=10**6, path=(up,), reverse_path=(down,)))
    tracker.on_flow_event(other, ACTIVE)  # on links of its own: a partition of its own
    assert [sorted(k) for k in controller.partitions] == [[0, 1], [other]]
    assert all(tracker.flows[f].sampled for f in (0, 1, other))


def test_unattributed_events_reach_python_only_while_a_skip_could_be_cut_short():
    """A script of unattributed events (a UDP echo) must not call into Python at every event."""
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    ns3.impl.next_unattributed_ns = 31 * PERIOD_NS
    sample_at(controller, ns3, 11 * PERIOD_NS)
    assert len(controller.skips) == 1 and tracker.unattributed_watched

    ns3.now_ns = 16 * PERIOD_NS
    tracker.after_unattributed(True)
    assert controller.reverts == 1 and not tracker.unattributed_watched


def test_a_flow_whose_bytes_in_flight_grow_is_not_skipped_though_it_delivers_steadily():
    """The controller hands the judge each sender's bytes on the network: a filling queue refuses the window."""
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    # flow 0 sends half as much again as it delivers: its window, and the queue behind it, grow
    tracker.flows[0].sent = [round(1.5 * b) for b in tracker.flows[0].samples]
    sample_at(controller, ns3, 11 * PERIOD_NS)
    st = next(iter(controller.partitions.values()))
    assert st.last_verdict.limit is Limit.FILLING_OR_DRAINING and st.last_verdict.flow == 0
    assert controller.skips == []
    assert controller.packet_level_time == {PacketLevel.QUEUES_FILLING_OR_DRAINING: pytest.approx(PERIOD_NS * 1e-9)}


def test_a_flow_connecting_on_a_steady_partitions_links_holds_its_skip_off_until_it_sends():
    """seed1-0036: a flow started 0.6 ms before a skip, its SYN queued among the partition's packets.

    Moved with them, the handshake completed only when the 247 ms skip ended, and the flow's 560 KB
    took 256 ms instead of 12.5 ms. A connecting flow on other links holds nothing back.
    """
    for on_its_links in (True, False):
        controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
        deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
        ns3.now_ns = 5 * PERIOD_NS
        if on_its_links:
            path, reverse = tracker.flows[0].path, tracker.flows[0].reverse_path
        else:
            path, reverse = (link_id(7, 1),), (link_id(8, 1),)
            tracker.link_rates_bps.update({path[0]: 1e9, reverse[0]: 1e9})
        newcomer = tracker.add_flow(FakeFlow(src_node=7, dst_node=60, size=10**6, path=path, reverse_path=reverse,
                                             state=PENDING, start_ns=6 * PERIOD_NS))
        tracker.after_unattributed(True)  # the event that created it: its start is known
        tracker.flows[newcomer].connecting = True  # it started at 6 ms, and has sent no data yet
        sample_at(controller, ns3, 11 * PERIOD_NS)
        st = next(st for st in controller.partitions.values() if 0 in st.partition.flows)
        assert st.last_verdict.steady
        if on_its_links:
            assert controller.skips == []
            assert controller.packet_level_time == {PacketLevel.FLOW_CONNECTING: pytest.approx(PERIOD_NS * 1e-9)}
        else:
            (skip,) = controller.skips
            assert skip.flow_ids == (0, 1)


def test_a_tcp_partition_is_not_skipped_while_a_flow_is_due_on_its_links_before_its_flows_end():
    """seed1-0057: a lone DCTCP flow skipped 28 ms to a newcomer's start put it 5.5% off, and mice after it 56%.

    The skip freezes the congestion cycle in the phase it started in, and the newcomer meets
    that phase, not plain ns-3's. A flow due elsewhere, or after the partition's flows end
    (10**8 B at 61 MB/s: some 1.6 s), holds nothing back.
    """
    for start_ns, on_its_links, skipped in ((30 * PERIOD_NS, True, False), (30 * PERIOD_NS, False, True),
                                            (5000 * PERIOD_NS, True, True)):
        controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
        deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
        ns3.now_ns = 5 * PERIOD_NS
        if on_its_links:
            path, reverse = tracker.flows[0].path, tracker.flows[0].reverse_path
        else:
            path, reverse = (link_id(7, 1),), (link_id(8, 1),)
            tracker.link_rates_bps.update({path[0]: 1e9, reverse[0]: 1e9})
        tracker.add_flow(FakeFlow(src_node=7, dst_node=60, size=10**6, path=path, reverse_path=reverse,
                                  state=PENDING, start_ns=start_ns))
        tracker.after_unattributed(True)  # the event that created it: its start is known
        sample_at(controller, ns3, 11 * PERIOD_NS)
        st = next(st for st in controller.partitions.values() if 0 in st.partition.flows)
        assert st.last_verdict.steady
        if skipped:
            (skip,) = controller.skips
            assert skip.flow_ids == (0, 1)
        else:
            assert controller.skips == []
            assert controller.packet_level_time == {PacketLevel.NEWCOMER_DUE: pytest.approx(PERIOD_NS * 1e-9)}


def test_a_flow_a_workload_may_release_on_a_tcp_partitions_links_before_its_flows_end_holds_the_skip_off():
    """What a workload may release (FlowDag, at the earliest it may) is due as surely as a created flow.

    flow_dag_star: a flow released 27 ms after a skip was cut short at its release met
    the phase the skip froze and ended 12.9% off. A release elsewhere, or after the
    partition's flows end, holds nothing back.
    """
    for start_ns, on_its_links, skipped in ((30 * PERIOD_NS, True, False), (30 * PERIOD_NS, False, True),
                                            (5000 * PERIOD_NS, True, True)):
        controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2)
        deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
        ns3.now_ns = 5 * PERIOD_NS
        links = frozenset(tracker.flows[0].path) if on_its_links else frozenset({link_id(7, 1)})
        tracker.releases.append((start_ns, links))
        sample_at(controller, ns3, 11 * PERIOD_NS)
        st = next(st for st in controller.partitions.values() if 0 in st.partition.flows)
        assert st.last_verdict.steady
        if skipped:
            (skip,) = controller.skips
            assert skip.flow_ids == (0, 1)
        else:
            assert controller.skips == []
            assert controller.packet_level_time == {PacketLevel.NEWCOMER_DUE: pytest.approx(PERIOD_NS * 1e-9)}


def test_a_paced_flow_alone_at_line_rate_is_skipped_from_min_window_samples_with_no_settling():
    """RDMA flows wait for whole windows of the run's sampling, unless alone at line rate (judge_paced)."""
    settling = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, tail_rtts=20, settle_rtts=30)
    controller, tracker, ns3 = run_with([(10**9, "")], settling, bottleneck_bps=10e9, kind="rdma-dcqcn")
    deliver(tracker, {0: 0.99 * 1.25e9}, samples=controller.config.min_window + 1)
    st = next(iter(controller.partitions.values()))
    assert controller.config.settle_rtts * st.rtt > 0  # it would still be settling
    sample_at(controller, ns3, controller.config.min_window * PERIOD_NS)  # the run's first sample
    (skip,) = controller.skips
    assert "no flow contending, at line rate over 4 samples" in skip.reason
    assert tracker.flows[0].credited > 0


def test_paced_flows_below_line_rate_or_contending_still_wait_for_a_whole_window():
    controller, tracker, ns3 = run_with([(10**9, "")], bottleneck_bps=10e9, kind="rdma-dcqcn")
    deliver(tracker, {0: 0.8 * 1.25e9}, samples=controller.config.min_window + 1)
    tracker.flows[0].pacing = [0.8 * 1.25e9] * (controller.config.min_window + 1)
    sample_at(controller, ns3, controller.config.min_window * PERIOD_NS)
    st = next(iter(controller.partitions.values()))
    assert controller.skips == [] and st.last_verdict.limit is Limit.WINDOW_NOT_FULL
    assert st.held_back_by is None  # not refused: the whole window comes as it always did
    assert controller.packet_level_time == {PacketLevel.FILLING_WINDOW: pytest.approx(PERIOD_NS * 1e-9)}

    controller, tracker, ns3 = run_with([(10**9, "")] * 2, kind="rdma-dcqcn")  # sharing the 1 Gb/s link
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK}, samples=controller.config.min_window + 1)
    sample_at(controller, ns3, controller.config.min_window * PERIOD_NS)
    st = next(iter(controller.partitions.values()))
    assert controller.skips == [] and st.last_verdict is None


def judged_samples(controller, ns3, samples):
    """The samples (of ``samples``) at which the controller judged a partition."""
    judged = []
    for k in samples:
        before = controller.ledger.judgements
        sample_at(controller, ns3, k * PERIOD_NS)
        if controller.ledger.judgements > before:
            judged.append(k)
    return judged


def test_a_partition_refused_at_every_judgement_is_judged_ever_more_rarely_while_no_shortcut_paid():
    controller, tracker, ns3 = run_with([(10**9, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.75 * BOTTLENECK, 1: 0.23 * BOTTLENECK}, samples=400)
    st = next(iter(controller.partitions.values()))
    patience = st.patience.patience
    judged = judged_samples(controller, ns3, range(11, 400))
    # judged at every sample until its patience ran out, then after waits of 1, 2, 4, ... 64 samples
    first = list(range(11, 11 + patience))
    waits = [1, 2, 4, 8, 16, 32, 64, 64]
    later = [first[-1]]
    for wait in waits:
        later.append(later[-1] + wait + 1)
    assert judged[:patience + len(waits)] == first + later[1:]
    assert st.last_verdict.limit is Limit.UNFAIR and controller.skips == []
    (row,) = [r for r in controller.trace_records() if r.kind is TraceKind.BACK_OFF]
    assert row.limit == "judging backed off" and row.flow_ids == (0, 1)
    assert row.time == pytest.approx(first[-1] * PERIOD_NS * 1e-9)
    assert row.reason.startswith(f"refused at its last {patience} judgements (unfair share last)")
    assert f"({patience} judgements of {2 * patience} flows" in row.reason
    assert "against 0 events its shortcuts avoided" in row.reason
    # the samples it was not judged at are still charged to why it ran packet by packet
    assert controller.packet_level_time == {PacketLevel.UNFAIR_SHARES: pytest.approx(389 * PERIOD_NS * 1e-9)}


def test_while_the_runs_shortcuts_have_paid_for_its_bets_a_refused_partition_is_judged_at_every_sample(
        monkeypatch):
    controller, tracker, ns3 = run_with([(10**9, "ns3::TcpDctcp")] * 2)
    deliver(tracker, {0: 0.75 * BOTTLENECK, 1: 0.23 * BOTTLENECK}, samples=200)
    monkeypatch.setattr(controller.skip_engine, "events_saved", lambda: 10**9)
    assert judged_samples(controller, ns3, range(11, 200)) == list(range(11, 200))
    assert not [r for r in controller.trace_records() if r.kind is TraceKind.BACK_OFF]


def test_a_partition_whose_flow_set_changes_is_judged_afresh_at_every_sample():
    controller, tracker, ns3 = run_with([(10**9, "ns3::TcpDctcp")] * 3)
    deliver(tracker, {0: 0.75 * BOTTLENECK, 1: 0.2 * BOTTLENECK, 2: 0.03 * BOTTLENECK}, samples=200)
    judged_samples(controller, ns3, range(11, 100))
    backed_off = next(iter(controller.partitions.values()))
    assert backed_off.patience.wait > 0
    ns3.now_ns = 100 * PERIOD_NS
    tracker.on_flow_event(2, FINISHED)
    (st,) = controller.partitions.values()
    assert st is not backed_off and st.partition.flows == {0, 1}
    assert (st.patience.losses, st.patience.wait) == (0, 0)
    deliver(tracker, {0: 0.75 * BOTTLENECK, 1: 0.23 * BOTTLENECK}, samples=200)
    assert judged_samples(controller, ns3, range(111, 140)) == list(range(111, 140))


def test_no_progress_is_read_from_cpp_at_a_sample_while_no_partition_may_be_judged(monkeypatch):
    """Only a partition that may be judged can stall: with none, its flows' progress is not asked for."""
    flows = [(10**8, "ns3::TcpDctcp")] * 2
    for sources, reads in (([RED_BETWEEN_THRESHOLDS], 0), ((), 3)):
        controller, tracker, ns3 = run_with(flows, bottleneck_sources=sources)
        taken = []
        monkeypatch.setattr(tracker, "TakeProgressedFlows", lambda taken=taken: taken.append(1) or [])
        deliver(tracker, {0: 0.75 * BOTTLENECK, 1: 0.23 * BOTTLENECK}, samples=20)
        for k in (11, 12, 13):
            sample_at(controller, ns3, k * PERIOD_NS)
        assert len(taken) == reads and controller.skips == []


def samples_at(controller, tracker, ns3, times_ns):
    """The tracker's sampling events at these instants: counted, reported to the controller if it listens."""
    reported = []
    for t_ns in times_ns:
        ns3.now_ns = t_ns
        before = controller.skip_engine.samples_taken
        tracker.take_sample()
        reported.append(controller.skip_engine.samples_taken > before)
    return reported


def test_samples_are_not_reported_while_every_partition_draws_and_are_charged_at_the_next_flow_event():
    """RED between its thresholds under same-seed: no sample can decide anything until the flows change.

    The tracker keeps sampling, but calls no Python; the flow event that ends the
    stretch charges the samples it took to the reason each would have been charged to.
    """
    flows = [(10**8, "ns3::TcpDctcp")] * 2
    controller, tracker, ns3 = run_with(flows, bottleneck_sources=[RED_BETWEEN_THRESHOLDS])
    assert not tracker.samples_reported
    assert samples_at(controller, tracker, ns3, [k * PERIOD_NS for k in range(1, 8)]) == [False] * 7
    assert controller.packet_level_time == {}
    ns3.now_ns = 8 * PERIOD_NS
    tracker.on_flow_event(1, FINISHED)
    assert controller.skip_engine.samples_taken == 7
    assert controller.packet_level_time == {PacketLevel.DRAWING: pytest.approx(7 * PERIOD_NS * 1e-9)}
    # a run that reports every sample charges the same
    reporting, tracker, ns3 = run_with(flows, bottleneck_sources=[RED_BETWEEN_THRESHOLDS])
    reporting.skip_engine.report_samples(0.0, wanted=True)
    for k in range(1, 8):
        sample_at(reporting, ns3, k * PERIOD_NS)
    assert reporting.packet_level_time == controller.packet_level_time


def test_samples_are_reported_while_a_partition_may_be_judged_or_someone_listens():
    flows = [(10**8, "ns3::TcpDctcp")] * 2
    controller, tracker, ns3 = run_with(flows)
    deliver(tracker, {0: 0.75 * BOTTLENECK, 1: 0.23 * BOTTLENECK}, samples=20)
    assert samples_at(controller, tracker, ns3, [k * PERIOD_NS for k in (11, 12)]) == [True, True]
    assert controller.packet_level_time == {PacketLevel.UNFAIR_SHARES: pytest.approx(2 * PERIOD_NS * 1e-9)}
    # the progress line wants every sample, whatever the partitions
    config = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, tail_rtts=20)
    tracker, routes = dumbbell(2, 1e9)
    tracker.random_sources[BOTTLENECK_LINK] = (RED_BETWEEN_THRESHOLDS,)
    ns3 = FakeNs3()
    progress = Controller(ns3, config, accelerate=True, progress=True, tracker=tracker, boundary=FakeBoundary())
    progress.attach()
    ns3.RunObserver.on_start()
    for path, reverse in routes:
        flow = tracker.add_flow(FakeFlow(src_node=path[0] >> 16, dst_node=60, size=10**8, path=path,
                                         reverse_path=reverse, congestion_control="ns3::TcpDctcp"))
        tracker.on_flow_event(flow, ACTIVE)
    assert tracker.samples_reported and samples_at(progress, tracker, ns3, [PERIOD_NS]) == [True]


def test_a_partition_that_settles_is_reported_samples_until_its_settling_ends():
    """Its time is charged to settling, then to drawing: the sample that changes the reason is seen."""
    config = AcceleratorConfig(sample_period=PERIOD_NS * 1e-9, window=WINDOW, tail_rtts=20, settle_rtts=1000)
    controller, tracker, ns3 = run_with([(10**8, "ns3::TcpDctcp")] * 2, config,
                                        bottleneck_sources=[RED_BETWEEN_THRESHOLDS])
    st = next(iter(controller.partitions.values()))
    settled_ns = round(1000 * st.rtt * 1e9)
    assert tracker.samples_reported
    before, after = settled_ns // PERIOD_NS, settled_ns // PERIOD_NS + 2
    reported = samples_at(controller, tracker, ns3, [k * PERIOD_NS for k in range(1, after + 3)])
    assert all(reported[:before]) and not any(reported[after:])
    assert not tracker.samples_reported
    controller.on_run_end()
    charged = controller.packet_level_time
    assert set(charged) == {PacketLevel.SETTLING, PacketLevel.DRAWING}
    assert charged[PacketLevel.SETTLING] + charged[PacketLevel.DRAWING] == pytest.approx((after + 2) * PERIOD_NS * 1e-9)


def test_the_simulator_is_attached_and_its_methods_bound_before_run_not_inside_it():
    """RunObserver::RunWatched calls before_run before Simulator::Run(): Run()'s start then finds it done."""
    tracker, _ = dumbbell(1, 1e9)
    ns3, boundary = FakeNs3(), FakeBoundary()
    controller = Controller(ns3, AcceleratorConfig(), accelerate=True, tracker=tracker, boundary=boundary)
    controller.attach()
    ns3.RunObserver.before_run()
    assert controller.impl is ns3.impl and boundary.simulator_warmed_up is ns3.impl
    assert tracker.on_flow_event == controller._on_flow_event and len(boundary.destroy_hooks) == 1
    ns3.RunObserver.on_start()
    ns3.RunObserver.before_run()  # a second Run() of the same simulation attaches nothing again
    assert controller.runs == 1 and len(boundary.destroy_hooks) == 1


def test_a_simulator_the_script_chose_is_not_attached_before_run():
    """Its Run() announces nothing: the controller leaves it alone, as it would without the before-run callback."""
    tracker, _ = dumbbell(1, 1e9)
    ns3, boundary = FakeNs3(), FakeBoundary()
    ns3.impl = object()  # ns3::DefaultSimulatorImpl, say
    controller = Controller(ns3, AcceleratorConfig(), accelerate=True, tracker=tracker, boundary=boundary)
    controller.attach()
    ns3.RunObserver.before_run()
    assert controller.impl is None and controller.fallback is None and controller.accelerate
    assert boundary.destroy_hooks == [] and boundary.simulator_warmed_up is None


def test_tag_classes_are_told_to_the_simulator_only_when_a_skip_moves_one():
    """Flow events keep the classes in Python; the simulator hears of them right before a move."""
    controller, tracker, ns3 = run_with([(5 * 10**6, "ns3::TcpDctcp"), (10**7, "ns3::TcpDctcp")])
    st = next(iter(controller.partitions.values()))
    assert ns3.impl.classes == {} and st.tag_class == tracker.flows[0].tag
    deliver(tracker, {0: 0.49 * BOTTLENECK, 1: 0.49 * BOTTLENECK})
    sample_at(controller, ns3, 11 * PERIOD_NS)
    assert len(controller.skips) == 1
    # the class is named by its smallest tag, which is in it already: only the other tag is told
    assert ns3.impl.classes == {tracker.flows[1].tag: tracker.flows[0].tag}
    assert ns3.impl.moved[0][0] == tracker.flows[0].tag


def test_a_partition_never_judged_reads_no_event_or_draw_count_and_clears_no_sample(monkeypatch):
    """Its queues draw (same-seed): nothing it would count or sample is ever read, so nothing crosses."""
    flows = [(10**8, "ns3::TcpDctcp")] * 3
    for sources, judged in (([RED_BETWEEN_THRESHOLDS], False), ((), True)):
        controller, tracker, ns3 = run_with(flows, bottleneck_sources=sources)
        calls: list[str] = []
        for name in ("GetTagsEventCount", "GetTagsDrawCount"):
            monkeypatch.setattr(ns3.impl, name, lambda tags, name=name, calls=calls: calls.append(name) or 0)
        monkeypatch.setattr(tracker, "ClearSamples", lambda flows, calls=calls: calls.append("ClearSamples"))
        tracker.on_flow_event(2, FINISHED)
        (st,) = controller.partitions.values()
        assert st.partition.flows == {0, 1} and bool(st.draws_at) is not judged
        assert calls == (["GetTagsEventCount", "GetTagsDrawCount", "ClearSamples"] if judged else [])
