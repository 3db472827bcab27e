"""``--seeds N``: ns-3's seed-to-seed spread beside the accelerated error, computed and reported (no ns-3 here)."""

import json

import numpy as np
import pandas as pd
import pytest

from wormhole_ns3.tools import cli
from wormhole_ns3.tools.compare import add_seed_spread
from wormhole_ns3.tools.experiment.plots import seed_spread as draw_seed_spread
from wormhole_ns3.tools.experiment.results import FLOW_COLUMNS
from wormhole_ns3.tools.experiment.seed_runs import seed_folder, seed_markdown, seed_spread
from wormhole_ns3.tools.report import fidelity_hint, format_table
from wormhole_ns3.tools.seeds import (
    ItemSpread,
    Matched,
    PlainRun,
    Quantity,
    SeedCase,
    SeedReport,
    SpreadSummary,
    seed_case,
    seed_lines,
    seed_problem,
    seed_runs,
    seeded_environment,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_a_seed_run_asks_ns3_for_its_run_and_keeps_the_users_other_global_values():
    user = {"HOME": "/h", "NS_GLOBAL_VALUE": "ChecksumEnabled=1;RngRun=7"}
    assert seeded_environment(user, 3) == {"HOME": "/h", "NS_GLOBAL_VALUE": "ChecksumEnabled=1;RngRun=3"}
    assert seeded_environment({}, 2) == {"NS_GLOBAL_VALUE": "RngRun=2"}
    assert user["NS_GLOBAL_VALUE"] == "ChecksumEnabled=1;RngRun=7"


def test_the_seed_runs_are_the_runs_after_the_baselines():
    assert seed_runs(1, 5) == [2, 3, 4, 5]
    assert seed_runs(None, 3) == [2, 3]  # a baseline that recorded no run ran under ns-3's default, 1
    assert seed_runs(7, 2) == [8]


@pytest.mark.parametrize("seeds", [0, -2, 1])
def test_fewer_than_two_plain_runs_have_no_spread(seeds):
    assert seed_problem(seeds) == (f"--seeds {seeds}: ns-3's seed spread needs at least 2 plain runs "
                                   "(the baseline's and one more under another RngRun)")


def test_two_runs_are_enough_and_a_plot_needs_seeds(tmp_path):
    assert seed_problem(2) is None and seed_problem(None) is None
    assert seed_problem(None, tmp_path / "p.png") == ("--plot draws the accelerated error against ns-3's "
                                                      "seed spread: give --seeds N too")


@pytest.mark.parametrize("argv", [
    ["compare", "--seeds", "0", "script.py"],
    ["compare", "--plot", "p.png", "script.py"],
    ["experiment", "compare", "llm-training", "--preset", "gpt-small", "--seeds", "-1", "--out", "x"],
])
def test_bad_seed_options_are_one_line_before_anything_runs(argv, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("wormhole-ns3: error: --") and not list(tmp_path.iterdir())


def matched_example() -> Matched:
    # flow "a" moves 10 -> 12 -> 11, "b" never moves, "c" is missing from run 3, "d" has no accelerated error
    runs = [{"a": 10.0, "b": 4.0, "c": 1.0, "d": 2.0}, {"a": 12.0, "b": 4.0, "c": 1.5, "d": 2.0},
            {"b": 4.0, "a": 11.0, "d": 3.0}]
    return Matched.of(Quantity.FCT, runs, {"a": 0.05, "b": 0.01, "c": 0.0, "d": None})


def test_each_item_spread_is_its_range_over_its_median_and_its_std_over_its_mean():
    matched = matched_example()
    assert matched.keys == ("a", "b")
    assert matched.values.tolist() == [[10.0, 12.0, 11.0], [4.0, 4.0, 4.0]]
    assert matched.spread.tolist() == [2 / 11, 0.0]
    assert matched.cv.tolist() == [pytest.approx(1 / 11), 0.0]  # sample std of 10, 12, 11 is 1
    assert matched.error.tolist() == [0.05, 0.01]
    assert matched.by_key()["a"] == ItemSpread([10.0, 12.0, 11.0], 2 / 11, pytest.approx(1 / 11))


def test_the_summary_sets_the_spread_beside_the_error_on_the_same_items():
    summary = SpreadSummary.of(matched_example())
    assert summary.items == 2
    assert (summary.spread.mean, summary.spread.max) == (1 / 11, 2 / 11)
    assert summary.spread.p99 == pytest.approx(0.99 * 2 / 11)
    assert (summary.error.mean, summary.error.max) == (pytest.approx(0.03), 0.05)
    assert summary.within == 1  # "a": 5% <= 18.2%; "b": 1% > 0%
    assert summary.within_noise is True
    assert summary.as_dict()["within_fraction"] == 0.5


def test_an_error_above_the_spread_is_said_to_be_above_the_noise():
    matched = Matched.of(Quantity.ITERATION_TIME, [{0: 1.0, 1: 2.0}, {0: 1.01, 1: 2.0}], {0: 0.2, 1: 0.0})
    summary = SpreadSummary.of(matched)
    assert summary.within == 1 and summary.within_noise is False


def test_no_common_items_give_no_verdict():
    summary = SpreadSummary.of(Matched.of(Quantity.FCT, [{"a": 1.0}, {"b": 1.0}], {"a": 0.0}))
    assert summary.items == 0 and summary.within_noise is None and summary.spread.max is None


def runs_of(outcomes, asked, ran, events=(100, 100, 100)):
    return [PlainRun(a, r, e, o) for a, r, e, o in zip(asked, ran, events, outcomes)]


def test_a_run_that_ran_under_another_rngrun_than_asked_pins_its_own():
    pinned = runs_of("xxx", [None, 2, 3], [1, 1, 1])
    assert seed_case(pinned) is SeedCase.PINNED
    assert seed_case(runs_of("xyz", [None, 2, 3], [1, 1, 1])) is SeedCase.PINNED


def test_identical_runs_under_different_rngruns_are_seed_free_unless_their_events_differ():
    assert seed_case(runs_of("xxx", [None, 2, 3], [1, 2, 3])) is SeedCase.SEED_FREE
    assert seed_case(runs_of("xxx", [None, 2, 3], [1, 2, 3], events=(100, 100, 101))) is SeedCase.VARIES
    assert seed_case(runs_of("xxy", [None, 2, 3], [None, 2, 3])) is SeedCase.VARIES


def report_of(runs, matched=None) -> dict:
    quantities = (SpreadSummary.of(matched or matched_example()),)
    return json.loads(json.dumps(SeedReport(tuple(runs), quantities).as_dict()))


def test_the_report_says_in_one_line_whether_the_error_is_within_the_noise():
    seeds = report_of(runs_of("xyz", [None, 2, 3], [1, 2, 3]))
    assert seeds["case"] == "varies" and seeds["asked"] == [None, 2, 3] and seeds["events"] == [100] * 3
    lines = seed_lines(seeds)
    assert lines[0] == ("ns-3 seed spread", "over the 3 plain runs under RngRun 1, 2, 3")
    assert lines[1] == ("  FCT", "accelerated error p99 4.960% vs ns-3 seed spread p99 18.000%: within ns-3's own "
                                 "noise; 1 of 2 flows within their own spread")
    assert lines[2][1].startswith("seed spread (max-min)/median mean 9.091% p99 18.000% max 18.182%; std/mean")
    assert lines[3][1] == "accelerated error mean 3.000% p99 4.960% max 5.000%"
    above = report_of(runs_of("xy", [None, 2], [1, 2]),
                      Matched.of(Quantity.FCT, [{0: 1.0}, {0: 1.01}], {0: 0.2}))
    assert "ABOVE ns-3's own noise" in seed_lines(above)[1][1]


def test_a_pinned_or_seed_free_script_gets_one_line_instead_of_a_zero_spread():
    pinned = seed_lines(report_of(runs_of("xxx", [None, 2, 3], [1, 1, 1])))
    assert pinned == [("ns-3 seed spread", "not measured: asked for RngRun 2, 3, the plain runs ran under 1: the "
                                           "script sets RngRun itself (RngSeedManager.SetRun), so their spread is "
                                           "not ns-3's noise")]
    free = seed_lines(report_of(runs_of("xxx", [None, 2, 3], [1, 2, 3])))
    assert free == [("ns-3 seed spread", "none: the 3 plain runs under RngRun 1, 2, 3 are identical, events "
                                         "included: this script's outcome does not depend on ns-3's random draws")]
    reused = seed_lines(report_of(runs_of("xxx", [None, 2, 3], [None, 2, 3])))  # a baseline kept before rng_run
    assert reused[0][1].startswith("none: the 3 plain runs under RngRun (not recorded), 2, 3 are identical")


def harness_results(fcts: dict, rng_run: int | None, events: int) -> dict:
    flows = [{"id": k, "src": "10.0.0.1", "dst": "10.0.1.1", "sport": 49152 + k, "dport": 9, "start": 0.0,
              "fct": fct, "rx_bytes": 100} for k, fct in fcts.items()]
    return {"flows": flows, "rng_run": rng_run, "events": events}


def test_compare_puts_each_flows_spread_beside_its_error_and_prints_it():
    plain = [(None, harness_results({0: 1.0, 1: 2.0, 2: None}, 1, 50)),
             (2, harness_results({0: 1.2, 1: 2.0, 2: 3.0}, 2, 52))]
    rows = [{"id": k, "src": "10.0.0.1", "dst": "10.0.1.1", "sport": 49152 + k, "dport": 9, "bytes": 100,
             "start": 0.0, "fct_baseline": fct, "fct_accelerated": fct, "rel_err": 0.0 if fct else None}
            for k, fct in ((0, 1.0), (1, 2.0), (2, None))]
    summary = {"flows": rows}
    matched = add_seed_spread(summary, plain)
    assert matched.keys == ((0, "10.0.0.1", "10.0.1.1", 9, 0), (0, "10.0.0.1", "10.0.1.1", 9, 1))
    assert rows[0]["fct_seeds"] == [1.0, 1.2] and rows[0]["seed_spread"] == pytest.approx(0.2 / 1.1)
    assert rows[1]["seed_spread"] == 0.0 and rows[2]["seed_spread"] is None
    assert summary["seeds"]["case"] == "varies" and summary["seeds"]["fct"]["within"] == 2
    table = format_table({**summary, **TOTALS})
    assert table.splitlines()[0].endswith("error seed spread")
    assert table.splitlines()[1].endswith("0.000%     18.182%")
    assert table.splitlines()[3].endswith(" -% -%")


#: What format_table reads of a comparison besides its flows.
TOTALS = {"speedup": 1.0, "run_wall_baseline_s": 1.0, "run_wall_accelerated_s": 1.0, "process_speedup": None,
          "process_wall_baseline_s": None, "process_wall_accelerated_s": None, "events_baseline": 1,
          "events_accelerated": 1, "events_ratio": 1.0, "system_events": 0, "skips": 0, "skipped_time_s": 0.0,
          "skip_backs": 0, "fct_mean_rel_err": 0.0, "fct_p99_rel_err": 0.0, "fct_max_rel_err": 0.0,
          "rx_bytes_exact": True, "config": {"fidelity": "same-seed"}}


def test_statistical_fidelity_without_seeds_is_told_how_to_judge_the_run():
    statistical = {"config": {"fidelity": "statistical"}, "seeds": None}
    assert fidelity_hint(statistical) == ("statistical: the errors above are against one seed of plain ns-3; "
                                          "judge the run against ns-3's seed spread with --seeds N")
    assert fidelity_hint({**statistical, "seeds": {"case": "varies"}}) is None
    assert fidelity_hint({"config": {"fidelity": "same-seed"}}) is None
    assert "fidelity              statistical: " in format_table({"flows": [], **TOTALS, **statistical})


def write_plain_run(folder, fcts: dict, times: list, rng_run: int, events: int) -> None:
    folder.mkdir(parents=True)
    rows = [(task, 0, "ring", "", 0, "", 0, 1, 100, 0.0, fct, fct) for task, fct in fcts.items()]
    pd.DataFrame(rows, columns=FLOW_COLUMNS).to_csv(folder / "flows.csv", index=False)
    pd.DataFrame({"iteration": range(len(times)), "start": 0.0, "finish": times, "time": times}).to_csv(
        folder / "iterations.csv", index=False)
    (folder / "run.json").write_text(json.dumps({"rng_run": rng_run, "events": events}))


def test_an_experiments_seed_runs_add_spread_columns_per_flow_and_per_iteration(tmp_path):
    write_plain_run(tmp_path / "baseline", {0: 1.0, 1: 2.0}, [3.0, 3.0], 1, 10)
    write_plain_run(seed_folder(tmp_path, 2), {0: 1.5, 1: 2.0}, [3.3, 3.0], 2, 11)
    write_plain_run(seed_folder(tmp_path, 3), {0: 1.0, 1: 2.0}, [3.0, 3.0], 3, 10)
    flows = pd.DataFrame({"task": [1, 0], "rel_err": [0.0, 0.1]})
    iterations = pd.DataFrame({"iteration": [0, 1], "rel_err": [0.2, 0.0]})
    report, matched = seed_spread(tmp_path, [2, 3], flows, iterations)
    assert [m.quantity for m in matched] == [Quantity.FCT, Quantity.ITERATION_TIME]
    assert flows["fct_spread"].tolist() == [0.0, 0.5] and flows["fct_cv"].tolist()[0] == 0.0
    assert iterations["time_spread"].tolist() == [pytest.approx(0.1), 0.0]
    assert report.case is SeedCase.VARIES and [run.ran for run in report.runs] == [1, 2, 3]
    seeds = report.as_dict()
    assert seeds["fct"]["within"] == 2 and seeds["iteration_time"]["within"] == 1
    assert seeds["iteration_time"]["within_noise"] is False
    markdown = seed_markdown(seeds)
    assert markdown[0] == "- ns-3 seed spread: over the 3 plain runs under RngRun 1, 2, 3"
    assert markdown[1].startswith("  - FCT: accelerated error p99 ")
    assert markdown[4].startswith("  - iteration time: accelerated error p99 19.800% vs ns-3 seed spread "
                                  "p99 9.900%: ABOVE")
    assert markdown[5].startswith("  - seed spread (max-min)/median mean 5.000% ")


def test_the_spread_plot_is_a_png_made_the_same_every_time(tmp_path):
    quantities = [matched_example(), Matched.of(Quantity.ITERATION_TIME, [{0: 1.0}, {0: 1.1}], {0: 0.01})]
    first = draw_seed_spread(quantities, tmp_path / "a.png").read_bytes()
    assert first.startswith(PNG_SIGNATURE)
    assert draw_seed_spread(quantities, tmp_path / "b.png").read_bytes() == first
    assert np.isfinite(quantities[0].spread).all()
