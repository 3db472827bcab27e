"""Where an accelerated run spent its events: the simulator's event timeline, and its shares by phase."""

import pandas as pd
import pytest

from wormhole_ns3.tools.experiment.timeline import NO_FLOW, UNNAMED_PHASE, activity_line, events_by_activity

from conftest import REPO, load_json


def flows(*rows):
    return pd.DataFrame(rows, columns=["start", "finish", "phase"])


def test_each_stretch_is_charged_to_the_phases_running_in_it():
    timeline = [(0.0, 0), (1.0, 10), (2.0, 40), (3.0, 100), (4.0, 100), (5.0, 200)]
    table = flows((0.5, 1.5, "forward"), (1.2, 2.5, "grad-sync"), (4.2, None, "backward"))
    shares = events_by_activity(timeline, table)
    # [0,1): forward; [1,2): forward + grad-sync; [2,3): grad-sync; [3,4): nothing ran, no event;
    # [4,5): the unfinished backward flow
    assert shares == {"backward": 0.5, "grad-sync": 0.3, "forward + grad-sync": 0.15, "forward": 0.05}
    assert sum(shares.values()) == pytest.approx(1.0)


def test_events_with_no_flow_running_and_flows_of_no_phase_are_named_so():
    timeline = [(0.0, 0), (1.0, 30), (2.0, 40)]
    assert events_by_activity(timeline, flows((1.5, 1.8, ""))) == {NO_FLOW: 0.75, UNNAMED_PHASE: 0.25}
    assert events_by_activity([(0.0, 0), (1.0, 0)], flows((0.0, 1.0, "forward"))) == {}


def test_the_line_names_the_largest_shares_and_sums_the_rest():
    summary = {"events_by_activity": {"a": 0.5, "b": 0.3, "c": 0.15, "d": 0.05}}
    assert activity_line(summary, largest=2) == "50% a, 30% b, 20% other"
    assert activity_line(summary, largest=1) == "50% a, 50% other"
    assert activity_line({"events_by_activity": {"a": 0.996, "b": 0.004}}, largest=1) == "100% a"


def test_an_accelerated_run_marks_its_events_over_simulated_time_and_a_baseline_does_not(wormhole, tmp_path):
    script = REPO / "wormhole_ns3" / "examples" / "dctcp_dumbbell.py"
    args = [script, "--flows", "2", "--min-mb", "5", "--max-mb", "5"]
    for mode, results in (([], "a.json"), (["--baseline"], "b.json")):
        done = wormhole("run", *mode, "--results", results, *args)
        assert done.returncode == 0, done.stderr
    accelerated, baseline = load_json(tmp_path / "a.json"), load_json(tmp_path / "b.json")
    assert baseline["event_timeline"] is None
    timeline = accelerated["event_timeline"]
    times, counts = [t for t, _ in timeline], [n for _, n in timeline]
    assert times == sorted(times) and counts == sorted(counts)
    assert 50 < len(timeline) <= 513  # at most 512 marks, then the end
    assert timeline[-1] == [accelerated["sim_time_s"], accelerated["events"]]
    # the flows start at 0.1 s: the events before are the set-up's few
    before_flows = max(n for t, n in timeline if t <= 0.1)
    assert before_flows < 100 < accelerated["events"]
