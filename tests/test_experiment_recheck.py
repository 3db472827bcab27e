"""``experiment recheck``: a kept row's command made runnable here, and what counts as moved."""

import sys

import pytest

from wormhole_ns3.tools.experiment.recheck import Recheck, recheck, rerun_commands
from wormhole_ns3.tools.experiment.registry import ExperimentError

KEPT = {"events_accelerated": 1_000_000, "memo_hits": 5, "memo_mirrored": 2, "memo_misses": 3, "memo_diverged": 0,
        "fct_mean_rel_err": 0.001, "fct_p99_rel_err": 0.002, "fct_max_rel_err": 0.003,
        "iteration_time_rel_err": 0.0005, "speedup": 10.0}


def test_a_kept_command_runs_here_into_the_scratch_folder_against_its_kept_baseline(tmp_path):
    (tmp_path / "baselines" / "moe-small").mkdir(parents=True)
    [command] = rerun_commands("wormhole-ns3 experiment compare llm-training --preset moe-small "
                               "--out results/scoreboard/moe-small", tmp_path / "out", tmp_path / "baselines",
                               "moe-small")
    assert command[:3] == [sys.executable, "-m", "wormhole_ns3"]
    assert command[command.index("--out") + 1] == str(tmp_path / "out")
    assert command[command.index("--reuse-baseline") + 1] == str(tmp_path / "baselines" / "moe-small")
    assert "--force" in command


def test_what_a_command_prepares_runs_first_and_a_reused_baseline_is_kept_as_given(tmp_path):
    prepare, compare = rerun_commands(
        "wormhole-ns3 experiment export-chakra --preset gpt-small --out t && wormhole-ns3 experiment compare "
        "llm-training --chakra t/gpt-small --reuse-baseline b/x --out o --force", tmp_path / "out", tmp_path, "x")
    assert prepare[3:] == ["experiment", "export-chakra", "--preset", "gpt-small", "--out", "t"]
    assert compare.count("--reuse-baseline") == 1 and compare[compare.index("--reuse-baseline") + 1] == "b/x"


def test_a_row_not_made_by_a_comparison_is_refused_in_one_line(tmp_path):
    with pytest.raises(ExperimentError, match="does not end in an 'experiment compare'"):
        rerun_commands("wormhole-ns3 experiment run llm-training --out o", tmp_path, tmp_path, "row")
    with pytest.raises(ExperimentError, match="no kept comparison named nope"):
        recheck(tmp_path, ["nope"], tmp_path, tmp_path / "out")


def test_a_row_holds_within_its_tolerances_and_says_what_moved_beyond_them():
    assert Recheck("r", KEPT, {**KEPT, "events_accelerated": 1_009_000, "speedup": 3.0}).differences() == []
    moved = Recheck("r", KEPT, {**KEPT, "events_accelerated": 1_020_000, "memo_mirrored": 0,
                                "fct_max_rel_err": 0.00302}).differences()
    assert moved == ["events 1,000,000 -> 1,020,000", "memo_mirrored 2 -> 0",
                     "fct_max_rel_err 0.3000% -> 0.3020%"]


def test_the_readme_lists_a_rechecked_row_whose_events_moved_until_it_is_kept_again(tmp_path):
    from pathlib import Path

    from wormhole_ns3.tools.experiment.scoreboard import Entry, rechecked_table

    recheck = tmp_path / "recheck.json"
    moved = Recheck("moe-x", KEPT, {**KEPT, "events_accelerated": 1_071_300, "memo_misses": 4}).as_row()
    held = Recheck("gpt-y", KEPT, {**KEPT, "events_accelerated": 1_004_000}).as_row()
    recheck.write_text(__import__("json").dumps([moved, held]))

    def kept(events: int) -> list[Entry]:
        return [Entry("moe-x", Path("."), {"events_accelerated": events}, ""),
                Entry("gpt-y", Path("."), {"events_accelerated": 1_000_000}, "")]

    table = rechecked_table(recheck, kept(1_000_000))
    assert "| moe-x | 1,000,000 | 1,071,300 | +7.13% | memo_misses 3 -> 4 |" in table
    assert "gpt-y" not in table  # within the tolerance
    assert rechecked_table(recheck, kept(1_071_300)) == "Every rechecked row holds its events.\n"  # kept again
    assert rechecked_table(tmp_path / "none.json", kept(1)) == "No kept row has been rechecked yet.\n"
    recheck.write_text("{broken")
    with pytest.raises(ExperimentError, match="not a recheck's result"):
        rechecked_table(recheck, kept(1))
