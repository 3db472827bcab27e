"""Kept baselines and the scoreboard, on the repository's own kept results.

``experiments/baselines/gpt-small`` is a plain ns-3 run of the llm-training
preset gpt-small, kept by ``experiment keep`` (its large files gzipped);
``experiments/scoreboard/*`` are kept comparisons, and the README's table
must be what they give.
"""

import gzip
import hashlib
import json
import shutil
import subprocess
import sys
from dataclasses import replace

import pytest

from wormhole_ns3.tools.experiment import registry
from wormhole_ns3.tools.experiment.comparison import (
    VERSION_FIELDS,
    check_reusable_baseline,
    check_same_run,
    installed_versions,
)
from wormhole_ns3.tools.experiment.kept import keep_result, unpack_result
from wormhole_ns3.tools.experiment.registry import ExperimentError
from wormhole_ns3.tools.experiment.results import read_flows, read_iterations
from wormhole_ns3.tools.experiment.scoreboard import (
    HEADER,
    NO_ROWS,
    USER_SCRIPTS,
    read_entries,
    scoreboard_table,
    update_readme,
)

from conftest import REPO, child_environment, load_json

KEPT = REPO / "experiments" / "baselines" / "gpt-small"
SCOREBOARD = REPO / "experiments" / "scoreboard"
LLM = registry.get_experiment("llm-training")


@pytest.fixture
def unpacked(tmp_path):
    folder = tmp_path / "baseline"
    unpack_result(KEPT, folder)
    return folder


def test_the_kept_baseline_is_compressed_and_unpacks_to_the_run_it_kept(unpacked):
    assert (KEPT / "flows.csv.gz").is_file() and not (KEPT / "flows.csv").exists()
    assert not list(KEPT.glob("*.parquet"))
    summary = load_json(KEPT / "summary.json")
    assert summary["mode"] == "baseline" and summary["preset"] == "gpt-small"
    assert summary["script"] == "experiments/llm_training.py"  # named from the repository, not from a machine
    assert hashlib.sha256((unpacked / "workload.json").read_bytes()).hexdigest() == summary["workload_sha256"]
    run = load_json(unpacked / "run.json")
    assert run["events"] == summary["events"] > 1_000_000 and run["mode"] == "baseline"
    assert run["script"] == "experiments/llm_training.py"
    flows = read_flows(unpacked / "flows.csv")
    assert len(flows) == summary["flows_finished"] == summary["flows_total"] == 320
    assert list(read_iterations(unpacked / "iterations.csv")["time"]) == summary["iteration_times_s"]
    made_by = (KEPT / "command.txt").read_text()  # a baseline run, or a comparison's baseline side
    assert made_by.startswith("wormhole-ns3 experiment ") and " llm-training --preset gpt-small " in made_by


def test_keeping_is_deterministic_byte_for_byte(unpacked, tmp_path):
    again = keep_result(unpacked, tmp_path / "again", command=(KEPT / "command.txt").read_text())
    assert again.kind == "run"
    assert sorted(path.name for path in KEPT.iterdir()) == list(again.files)
    for name in again.files:
        assert (tmp_path / "again" / name).read_bytes() == (KEPT / name).read_bytes(), name
    with gzip.open(tmp_path / "again" / "flows.csv.gz", "rb") as packed:
        assert packed.read() == (unpacked / "flows.csv").read_bytes()


def test_a_kept_comparison_names_its_input_files_without_the_machines_paths(tmp_path):
    compared = tmp_path / "compared"
    shutil.copytree(SCOREBOARD / "gpt-small", compared)
    summary = load_json(compared / "summary.json")
    inputs = ["--simai", str(tmp_path / "checkout" / "tests" / "data" / "workload.txt"), "--transport", "dcqcn"]
    (compared / "summary.json").write_text(json.dumps({**summary, "script_args": inputs}, indent=1))
    keep_result(compared, tmp_path / "kept")
    kept = load_json(tmp_path / "kept" / "summary.json")
    assert kept["script_args"] == ["--simai", "workload.txt", "--transport", "dcqcn"]
    assert {k: v for k, v in kept.items() if k != "script_args"} == {
        k: v for k, v in summary.items() if k != "script_args"}


def test_a_kept_run_holds_no_path_of_the_machine_that_made_it(unpacked, tmp_path):
    machine_paths = {"script": str(tmp_path / "checkout" / "experiments" / "llm_training.py"),
                     "argv": ["--preset", "gpt-small", "--results-dir", str(tmp_path / "runs" / "gpt-small.partial")]}
    for name in ("run.json", "summary.json"):
        (unpacked / name).write_text(json.dumps({**load_json(unpacked / name), **machine_paths}, indent=1))
    keep_result(unpacked, tmp_path / "kept", command="wormhole-ns3 experiment run llm-training --preset gpt-small")
    for kept in (load_json(tmp_path / "kept" / "summary.json"),
                 json.loads(gzip.decompress((tmp_path / "kept" / "run.json.gz").read_bytes()))):
        assert kept["script"] == "experiments/llm_training.py"
        assert kept["argv"] == ["--preset", "gpt-small", "--results-dir", "gpt-small.partial"]


def test_keep_refuses_what_it_cannot_vouch_for(unpacked, tmp_path):
    (unpacked / "command.txt").unlink(missing_ok=True)
    with pytest.raises(ExperimentError, match=r"records no command.txt: give the command that made it with --command"):
        keep_result(unpacked, tmp_path / "k")
    (unpacked / "workload.json").write_text("{}")
    with pytest.raises(ExperimentError, match="does not match the workload_sha256 of its summary"):
        keep_result(unpacked, tmp_path / "k", command="x")
    with pytest.raises(ExperimentError, match="not a finished result"):
        keep_result(tmp_path, tmp_path / "k", command="x")
    assert not (tmp_path / "k").exists()


def test_a_matching_kept_baseline_is_accepted():
    summary = check_reusable_baseline(KEPT, LLM, "gpt-small", installed_versions())
    assert summary["events"] == load_json(KEPT / "summary.json")["events"]
    check_same_run(KEPT, summary, dict(summary, mode="accelerated"))


@pytest.mark.parametrize("field, value, message", [
    ("ns3_version", "3.40", "it was made with ns3_version 3.40, this install has 3.44: make the baseline again"),
    ("wormhole_ns3_version", "0.0.9", "it was made with wormhole_ns3_version 0.0.9, this install has 0.1.0"),
    ("preset", "moe-small", "it holds a run of llm-training preset moe-small in baseline mode"),
    ("script_args", ["--preset", "gpt-small", "--iterations", "3"], "it holds a run of llm-training preset gpt-small"),
    ("mode", "accelerated", "in accelerated mode"),
    ("workload_sha256", None, "it records no workload_sha256"),
])
def test_a_baseline_of_other_versions_or_settings_is_refused_in_one_line(tmp_path, field, value, message):
    folder = tmp_path / "baseline"
    shutil.copytree(KEPT, folder)
    summary = load_json(folder / "summary.json")
    if value is None:
        del summary[field]
    else:
        summary[field] = value
    (folder / "summary.json").write_text(json.dumps(summary))
    versions = {name: load_json(KEPT / "summary.json")[name] for name in VERSION_FIELDS}  # those it was made with
    with pytest.raises(ExperimentError) as refused:
        check_reusable_baseline(folder, LLM, "gpt-small", versions)
    text = str(refused.value)
    assert text.startswith(f"--reuse-baseline {folder}: ") and message in text and "\n" not in text


def test_a_baseline_of_an_input_file_is_recognised_by_name_and_content_in_another_checkout(tmp_path):
    """``--simai FILE`` reaches the script as an absolute path, which differs from checkout to checkout."""
    source = REPO / "tests" / "data" / "simai_workload_gpt7b_64g.txt"
    here = tmp_path / "checkout" / source.name
    here.parent.mkdir()
    shutil.copy(source, here)
    experiment, preset = LLM.with_inputs(None, {"--simai": str(here), "--transport": "dcqcn"})
    assert preset == "simai-simai_workload_gpt7b_64g-dcqcn"
    folder = tmp_path / "baseline"
    shutil.copytree(KEPT, folder)
    summary = load_json(folder / "summary.json")
    elsewhere = f"/elsewhere/tests/data/{source.name}"
    summary.update(preset=preset, script_args=["--simai", elsewhere, "--transport", "dcqcn"],
                   input_sha256={source.name: hashlib.sha256(source.read_bytes()).hexdigest()})
    (folder / "summary.json").write_text(json.dumps(summary))
    versions = {name: summary[name] for name in VERSION_FIELDS}
    assert check_reusable_baseline(folder, experiment, preset, versions)["preset"] == preset
    here.write_text(source.read_text() + "\n")
    with pytest.raises(ExperimentError, match=r"its input files differ from this run's \(input_sha256 "):
        check_reusable_baseline(folder, experiment, preset, versions)


def test_a_baseline_of_another_workload_is_refused_after_the_run_made_its_own():
    baseline = load_json(KEPT / "summary.json")
    changed = dict(baseline, mode="accelerated", workload_sha256="0" * 64)
    with pytest.raises(ExperimentError, match=r"its workload differs from this run's \(workload_sha256 "):
        check_same_run(KEPT, baseline, changed)


def test_the_readme_scoreboard_is_what_the_kept_summaries_give():
    done = subprocess.run([sys.executable, "-m", "wormhole_ns3", "experiment", "scoreboard", "--check"], cwd=REPO,
                          env=child_environment(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "the scoreboard matches the" in done.stdout


def test_a_hand_edited_scoreboard_number_fails_the_check(tmp_path):
    entries = read_entries(SCOREBOARD)
    assert {entry.summary["preset"] for entry in entries} >= {"gpt-small", "moe-small"}
    shutil.copytree(SCOREBOARD, tmp_path / "experiments" / "scoreboard")
    shutil.copytree(SCOREBOARD.parent / "recheck", tmp_path / "experiments" / "recheck")
    readme = tmp_path / "README.md"
    shutil.copy(REPO / "README.md", readme)
    update_readme(tmp_path / "experiments" / "scoreboard", readme, check=True)
    ratio = f"{entries[0].summary['events_ratio']:.1f}x"
    text = readme.read_text()
    readme.write_text(text.replace(f"| {ratio} (", f"| {ratio}5 (", 1))
    with pytest.raises(ExperimentError, match="its scoreboard differs from the kept summaries"):
        update_readme(tmp_path / "experiments" / "scoreboard", readme, check=True)
    update_readme(tmp_path / "experiments" / "scoreboard", readme, check=False)
    assert readme.read_text() == text
    assert (tmp_path / "experiments" / "scoreboard" / "scoreboard.png").read_bytes()[:4] == b"\x89PNG"


def test_a_user_script_comparison_is_a_row_of_the_user_scripts_table_with_its_sinks_and_output(tmp_path):
    """A kept comparison of a zoo experiment leaves the training table as it was and fills the user scripts'
    table, whose columns are the training table's but the paper's, then skips and whether the PacketSinks and the
    script's output were the same; a README without its markers is refused."""
    kept = tmp_path / "experiments" / "scoreboard"
    shutil.copytree(SCOREBOARD, kept)
    for entry in read_entries(kept):
        if entry.section is USER_SCRIPTS:
            shutil.rmtree(entry.folder)
    readme = tmp_path / "README.md"
    shutil.copy(REPO / "README.md", readme)
    update_readme(kept, readme, check=False)
    training = readme.read_text().split(USER_SCRIPTS.begin)[0]
    assert readme.read_text().split(USER_SCRIPTS.begin)[1].split(USER_SCRIPTS.end)[0] == "\n" + NO_ROWS
    (kept / "gpt-small").rename(kept / "two-rings")
    summary = load_json(kept / "two-rings" / "summary.json")
    (kept / "two-rings" / "summary.json").write_text(json.dumps(dict(summary, experiment="two-rings", skips=1234,
                                                                       stdout_identical=False,
                                                                       fct_max_rel_err=225.456)))
    update_readme(kept, readme, check=False)
    text = readme.read_text()
    assert text.split(USER_SCRIPTS.begin)[0] == training.replace(
        next(line for line in training.splitlines() if line.startswith("| [`gpt-small`]")) + "\n", "")
    table = text.split(USER_SCRIPTS.begin)[1].split(USER_SCRIPTS.end)[0].strip().splitlines()
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert header == [*HEADER, "skips", "PacketSink totals / output"]
    assert table[1] == "|---|" + "---:|" * (len(HEADER) - 1) + "---|---|"
    assert len(table) == 3 and table[2].startswith("| [`two-rings`](experiments/scoreboard/two-rings/summary.md) ")
    assert table[2].endswith(" | 1,234 | exact / DIFFERS |") and table[2].count("|") == len(header) + 1
    assert " / 22,546% | " in table[2]  # thousands in full, not 2.25e+04
    readme.write_text(text.replace(USER_SCRIPTS.begin + "\n", ""))
    with pytest.raises(ExperimentError, match=f"no single {USER_SCRIPTS.begin} line, then {USER_SCRIPTS.end}"):
        update_readme(kept, readme, check=True)


def test_the_scoreboard_says_how_much_packet_level_time_each_run_kept_and_its_largest_cause():
    entries = {entry.name: entry for entry in read_entries(SCOREBOARD)}
    row = scoreboard_table([entries["moe-medium"]], REPO).splitlines()[-1]
    breakdown = entries["moe-medium"].summary["packet_level_time_s"]
    total, largest = sum(breakdown.values()), max(breakdown, key=breakdown.__getitem__)
    assert f"| {total * 1e3:.3g} ms: {breakdown[largest] / total:.0%} {largest}; events: " in row
    silent = dict(entries["moe-medium"].summary, packet_level_time_s={})
    row = scoreboard_table([replace(entries["moe-medium"], summary=silent)], REPO).splitlines()[-1]
    assert "| - | MoE 135-510x |" in row


def test_the_scoreboard_names_the_phases_most_events_ran_in_where_the_comparison_has_them():
    entries = {entry.name: entry for entry in read_entries(SCOREBOARD)}
    summary = dict(entries["moe-medium"].summary, events_by_activity={"backward + grad-sync": 0.71, "forward": 0.29},
                   packet_level_time_s={"filling a window": 0.004, "flow tails": 0.001})
    row = scoreboard_table([replace(entries["moe-medium"], summary=summary)], REPO).splitlines()[-1]
    assert "| 5 ms: 80% filling a window; events: 71% backward + grad-sync, 29% other |" in row


@pytest.mark.parametrize("preset, workload, flows", [
    pytest.param("gpt-small", "gpt-small", 320, marks=[pytest.mark.slow]),
    pytest.param("moe-small-dcqcn", "moe-small", 1792, marks=[pytest.mark.long])])
def test_compare_from_the_kept_baseline_gives_the_kept_scoreboard(tmp_path, preset, workload, flows):
    """From the kept (gzipped) baseline: the baseline side as kept, the cold accelerated run as the scoreboard's.

    The product's own experiment end to end: every flow and iteration compared, every byte delivered.
    gpt-small: every episode recorded is stored: a data-parallel ring step queued behind the end
    of a replayed transfer keeps its own events. When that end of transfer was sent
    as a workload event, every packet queued behind it took the workload's tag, the
    step's recording counted 4 events of its own, and it was never stored (gpt-small
    had 4.4x fewer events than plain ns-3, and now has 9.4x).
    moe-small-dcqcn holds the memo's DCQCN mirrors to their kept counts: its
    twins mirror recordings that absorb others (``Leaders.of``), and
    a twin led to the wrong one diverged twice (max FCT error 64%).
    """
    from wormhole_ns3.models.workloads import preset_workload

    kept_baseline = REPO / "experiments" / "baselines" / preset
    done = subprocess.run(
        [sys.executable, "-m", "wormhole_ns3", "experiment", "compare", "llm-training", "--preset", preset,
         "--memo", ":memory:", "--reuse-baseline", str(kept_baseline), "--out", "cmp"],
        cwd=tmp_path, env=child_environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    summary = load_json(tmp_path / "cmp" / "summary.json")
    kept = load_json(SCOREBOARD / preset / "summary.json")
    baseline = load_json(kept_baseline / "summary.json")
    assert summary["events_baseline"] == kept["events_baseline"] == baseline["events"]
    assert summary["run_wall_baseline_s"] == kept["run_wall_baseline_s"] == baseline["run_wall_s"]
    made = preset_workload(workload)
    assert summary["flows_compared"] == kept["flows_compared"] == summary["flows_finished_baseline"] == flows
    assert flows == len(made.flows) and summary["iterations_compared"] == made.iterations
    assert summary["rx_bytes_exact"]
    assert (tmp_path / "cmp" / "accelerated" / "workload.json").read_text() == made.to_json()
    phases = {phase for label in summary["events_by_activity"] for phase in label.split(" + ")}
    assert phases <= {"forward", "backward", "grad-sync", "no flow running"} and "grad-sync" in phases
    for field in ("events_accelerated", "fct_mean_rel_err", "fct_max_rel_err", "iteration_time_rel_err",
                  "memo_hits", "memo_mirrored", "memo_misses", "memo_diverged", "skips"):
        assert summary[field] == kept[field], field
    assert (tmp_path / "cmp" / "command.txt").read_text().startswith("wormhole-ns3 experiment compare llm-training")
    scored = keep_result(tmp_path / "cmp", tmp_path / "kept")
    assert scored.kind == "comparison" and "summary.json" in scored.files and "summary.md" in scored.files
    assert not (tmp_path / "kept" / "baseline").exists()
