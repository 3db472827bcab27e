"""A fresh accelerator for each simulation of a process, and one report of them all (run/session.py).

Against fakes: no ns-3, no cppyy. The end-to-end runs are in test_simulations_in_one_process.py.
"""

from types import SimpleNamespace

from wormhole_ns3.accel.controller import ACTIVE, Controller, RunSnapshot
from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.core.flows import FlowResult
from wormhole_ns3.core.trace import SkipRecord
from wormhole_ns3.memo.decisions import MemoStats
from wormhole_ns3.run.session import Session, SimulationReport
from wormhole_ns3.runtime.implementation import GLOBAL_VALUES, Selection, chosen_by_user
from wormhole_ns3.runtime.queues import PortQueue, queue_comparison
from wormhole_ns3.tools.report import comparison, format_table

from fakes import FakeBoundary, FakeFlow, FakeNs3, dumbbell


def fake_session(unobserved=()):
    """A session over fake runs; each controller gets a tracker of its own, as a real one makes."""
    ns3 = FakeNs3()
    trackers = []

    def make_controller(after_destroy):
        tracker, routes = dumbbell(2)
        tracker.routes = routes
        trackers.append(tracker)
        return Controller(ns3, AcceleratorConfig(sample_period=1e-3), accelerate=True, tracker=tracker,
                          boundary=FakeBoundary(), after_destroy=after_destroy)

    return Session(make_controller, unobserved_runs=lambda: list(unobserved)), ns3, trackers


def start_flow(tracker):
    path, reverse = tracker.routes[0]
    flow = tracker.add_flow(FakeFlow(src_node=path[0] >> 16, dst_node=60, size=10**6, path=path,
                                     reverse_path=reverse))
    tracker.on_flow_event(flow, ACTIVE)


def test_a_destroyed_simulation_leaves_the_next_one_a_controller_in_its_first_state():
    session, ns3, trackers = fake_session()
    first = session.controller
    ns3.RunObserver.on_start()
    start_flow(trackers[0])
    assert first.active and first.partitions and first.runs == 1
    first.guard = guard = SimpleNamespace(fraction=0)

    first.boundary.destroy_hooks[-1]()  # Simulator::Destroy()

    second = session.controller
    assert second is not first and trackers[1] is not trackers[0]
    assert second.tracker is trackers[1]
    assert not second.flows and not second.active and not second.partitions and second.runs == 0
    assert second.impl is None and second.sample_period is None
    assert second.guard is guard  # a kind of decision the guard stopped stays stopped
    assert ns3.RunObserver.on_start == second.on_run_start  # the next Run() reaches the fresh controller


def test_the_report_numbers_flows_on_across_simulations_and_sums_what_they_counted():
    def report(flows, events, sim_time, skips=(), fallback=(), memo=None, runs=1):
        return SimulationReport(
            runs=runs, run_wall=1.0,
            snapshot=RunSnapshot(events=events, system_events=1, sim_time=sim_time,
                                 flows=[FlowResult(id=i, kind="bulk-tcp", src="10.0.0.1", dst="10.0.0.2",
                                                   sport=49153, dport=9, bytes=100, start=0.0, rx_bytes=100,
                                                   fct=0.5, credited_bytes=0) for i in range(flows)],
                                 queues=[PortQueue(link=65536, p50=1, p99=2, occupied_s=0.1)],
                                 event_timeline=[(sim_time, events)]),
            skips=tuple(skips), reverts=0, packet_level_time={"flow tails": 0.25}, unskippable={0: "why"},
            fallback=fallback, watchdog=(), sample_period=1e-3, memo=memo, trace=tuple(skips), error=None)

    skip = SkipRecord(time=0.1, flow_ids=(0, 1), dt=0.2, events_moved=3, events_avoided=50, credited_bytes=9,
                      queue_packets=1, limit="horizon", reason="steady")
    combined = SimulationReport.combine(
        [report(1, 10, 2.0, memo=MemoStats(hits=1)), report(2, 30, 3.0, skips=[skip], memo=MemoStats(hits=2))],
        unobserved=["ns3::DefaultSimulatorImpl", "ns3::DefaultSimulatorImpl"])

    assert combined.runs == 2 and combined.run_wall == 2.0
    assert [(f.id, f.simulation) for f in combined.snapshot.flows] == [(0, 0), (1, 1), (2, 1)]
    assert combined.snapshot.events == 40 and combined.snapshot.sim_time == 5.0
    assert combined.snapshot.event_timeline == [(2.0, 10), (5.0, 40)]
    assert [(q.simulation, q.link) for q in combined.snapshot.queues] == [(0, 65536), (1, 65536)]
    assert [s.flow_ids for s in combined.skips] == [(1, 2)]
    assert [s.flow_ids for s in combined.trace] == [(1, 2)]
    assert combined.unskippable == {0: "why", 1: "why"}
    assert combined.packet_level_time == {"flow tails": 0.5}
    assert combined.memo.hits == 3
    assert combined.fallback == (
        "2 Simulator::Run() calls ran under ns3::DefaultSimulatorImpl, which the script selected "
        "(GlobalValue::Bind, --SimulatorImplementationType or NS_GLOBAL_VALUE): they were not accelerated",)


def test_a_run_no_controller_saw_makes_the_process_report_a_fallback():
    session, ns3, _ = fake_session(unobserved=["ns3::RealtimeSimulatorImpl"])
    report = session.report()
    assert report.runs == 0
    assert report.fallback == (
        "1 Simulator::Run() call ran under ns3::RealtimeSimulatorImpl, which the script selected "
        "(GlobalValue::Bind, --SimulatorImplementationType or NS_GLOBAL_VALUE): it was not accelerated",)


def test_an_accelerated_run_that_simulated_nothing_says_so_and_a_plain_one_needs_not():
    from wormhole_ns3.run.harness import ACCELERATED, BASELINE, NOTHING_SIMULATED, fallback_reason

    session, ns3, _ = fake_session()
    assert session.report().runs == 0
    assert fallback_reason(session.report(), ACCELERATED) == NOTHING_SIMULATED
    assert fallback_reason(session.report(), BASELINE) is None
    ns3.RunObserver.on_start()
    assert fallback_reason(session.report(), ACCELERATED) is None
    unobserved, _, _ = fake_session(unobserved=["ns3::RealtimeSimulatorImpl"])
    reason = fallback_reason(unobserved.report(), ACCELERATED)
    assert reason.startswith("1 Simulator::Run() call ran under ns3::RealtimeSimulatorImpl")


def test_the_harness_implementation_is_the_initial_one_while_ns3_loads_and_the_environment_is_restored(monkeypatch):
    monkeypatch.setenv(GLOBAL_VALUES, "RngRun=3")
    selection = Selection("ns3::WormholeSimulatorImpl")
    import os

    with selection.preselected():
        assert os.environ[GLOBAL_VALUES] == "RngRun=3;SimulatorImplementationType=ns3::WormholeSimulatorImpl"
    assert os.environ[GLOBAL_VALUES] == "RngRun=3"
    monkeypatch.delenv(GLOBAL_VALUES)
    with selection.preselected():
        assert os.environ[GLOBAL_VALUES] == "SimulatorImplementationType=ns3::WormholeSimulatorImpl"
    assert GLOBAL_VALUES not in os.environ


def test_a_users_own_choice_of_implementation_in_the_environment_wins(monkeypatch):
    monkeypatch.setenv(GLOBAL_VALUES, "SimulatorImplementationType=ns3::RealtimeSimulatorImpl")
    assert chosen_by_user("RngRun=1; SimulatorImplementationType=ns3::RealtimeSimulatorImpl")
    assert not chosen_by_user("RngRun=1") and not chosen_by_user(None)
    with Selection("ns3::WormholeSimulatorImpl").preselected():
        import os

        assert os.environ[GLOBAL_VALUES] == "SimulatorImplementationType=ns3::RealtimeSimulatorImpl"


def _results(flows, fallback=None):
    return {"script": "s.py", "argv": [], "run_wall_s": 1.0, "process_wall_s": 2.0, "events": 10,
            "system_events": 0, "skips": 0, "skip_backs": 0, "skipped_time_s": 0.0, "sim_time_s": 1.0,
            "config": {}, "fallback": fallback, "flows": flows}


def test_a_comparison_pairs_flows_of_the_same_simulation_and_shows_each_sides_fallback():
    def flow(simulation, fct):
        return {"id": simulation, "simulation": simulation, "src": "10.0.0.1", "dst": "10.0.0.2", "sport": 1,
                "dport": 9, "bytes": 10, "start": 0.0, "fct": fct, "rx_bytes": 10, "credited_bytes": 0}

    baseline = _results([flow(0, 1.0), flow(1, 2.0)], fallback="plain reason")
    summary = comparison(baseline, _results([flow(0, 1.0), flow(1, 2.2)], fallback="accelerated reason"))
    assert [round(r["rel_err"], 6) for r in summary["flows"]] == [0.0, 0.1]
    table = format_table(summary)
    assert "fallback              accelerated reason" in table
    assert "baseline fallback     plain reason" in table


def test_ports_of_two_simulations_with_the_same_link_id_are_compared_apart():
    base = [{"link": 1, "p50": 5, "p99": 9, "occupied_s": 1.0, "simulation": 0},
            {"link": 1, "p50": 2, "p99": 3, "occupied_s": 1.0, "simulation": 1}]
    assert queue_comparison(base, base)["p99_abs_err_max"] == 0
