"""``wormhole-ns3 experiment compare`` on the tests' ring experiment, preset "small".

"small": 2 hosts, 2 iterations, each a 1 ms compute and a ring all-reduce of
24 MB (4 flows of 12 MB over 10 Gbps, ~10.5 ms each), so each flow is long
enough for the accelerator to skip most of it.
"""

import subprocess
import sys

import matplotlib.image
import pandas as pd
import pytest

from wormhole_ns3.core.trace import TraceKind

from conftest import EXPERIMENT_CLI, REPO, child_environment, load_json

pytestmark = pytest.mark.slow

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
SMALL_FLOWS = 8


def experiment(cwd, *args):
    done = subprocess.run([sys.executable, str(EXPERIMENT_CLI), "experiment", *map(str, args)], cwd=cwd,
                          env=child_environment(), capture_output=True, text=True, timeout=600)
    return done


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    done = experiment(folder, "compare", "ring", "--preset", "small", "--out", "cmp", "--no-memo")
    assert done.returncode == 0, done.stderr
    return folder / "cmp", done


def test_compare_reports_speed_and_accuracy_from_both_runs(compared):
    out, done = compared
    summary = load_json(out / "summary.json")
    runs = {side: load_json(out / side / "run.json") for side in ("baseline", "accelerated")}
    assert [runs[side]["mode"] for side in runs] == ["baseline", "accelerated"]
    assert summary["events_baseline"] == runs["baseline"]["events"]
    assert summary["events_accelerated"] == runs["accelerated"]["events"]
    # the ring's steps are alone on their links and meet no congestion signal: nothing holds their
    # windows, so they are not skipped (steady.py, CYCLE_UNSEEN); the summary reports what the runs did
    assert summary["events_ratio"] == summary["events_baseline"] / summary["events_accelerated"]
    assert summary["speedup"] == runs["baseline"]["run_wall_s"] / runs["accelerated"]["run_wall_s"]
    assert summary["skips"] == runs["accelerated"]["skips"]
    assert summary["flows_compared"] == summary["flows_finished_baseline"] == SMALL_FLOWS
    assert summary["iterations_compared"] == 2
    assert 0 <= summary["fct_mean_rel_err"] <= summary["fct_p99_rel_err"] <= summary["fct_max_rel_err"] < 0.005
    assert 0 <= summary["iteration_time_mean_rel_err"] <= summary["iteration_time_rel_err"] < 0.005
    assert summary["rx_bytes_exact"]
    stdouts = {(out / side / "stdout.txt").read_text() for side in ("baseline", "accelerated")}
    assert summary["stdout_identical"] == (len(stdouts) == 1)  # the script prints iteration times to 1 ns
    assert summary["memo_hits"] is None and summary["baseline_from"] is None
    assert "| events | " in (out / "summary.md").read_text()
    assert runs["baseline"]["event_timeline"] is None
    accelerated = runs["accelerated"]
    assert accelerated["event_timeline"][-1] == [accelerated["sim_time_s"], summary["events_accelerated"]]
    assert sum(summary["events_by_activity"].values()) == pytest.approx(1.0)
    assert "accelerated run's events, by the phases with flows running: " in (out / "summary.md").read_text()
    assert (out / "summary.md").read_text() in done.stdout


def test_the_joined_tables_hold_both_runs_and_the_errors(compared):
    out, _ = compared
    flows = pd.read_csv(out / "flows.csv")
    sides = {side: pd.read_csv(out / side / "flows.csv").set_index("task") for side in ("baseline", "accelerated")}
    assert len(flows) == SMALL_FLOWS and list(flows["task"]) == sorted(sides["baseline"].index)
    for side in sides:
        assert list(flows[f"fct_{side}"]) == list(sides[side].loc[flows["task"], "fct"])
    recomputed = (flows["fct_accelerated"] - flows["fct_baseline"]).abs() / flows["fct_baseline"]
    assert list(flows["rel_err"]) == list(recomputed)
    assert load_json(out / "summary.json")["fct_max_rel_err"] == flows["rel_err"].max()
    iterations = pd.read_csv(out / "iterations.csv")
    assert list(iterations["iteration"]) == [0, 1]
    assert list(iterations["time_baseline"]) == list(pd.read_csv(out / "baseline" / "iterations.csv")["time"])
    assert load_json(out / "summary.json")["iteration_time_rel_err"] == iterations["rel_err"].max()
    labels = {"collective": str, "group": str, "phase": str}
    pd.testing.assert_frame_equal(pd.read_parquet(out / "flows.parquet"),
                                  pd.read_csv(out / "flows.csv", dtype=labels, keep_default_na=False),
                                  check_dtype=False)


def test_the_plots_are_pngs_a_person_can_open(compared):
    out, _ = compared
    names = load_json(out / "summary.json")["plots"]
    assert names == ["events.png", "fct_cdf.png", "fct_error.png", "iterations.png", "speedup.png"]
    for name in names:
        assert (out / name).read_bytes()[:8] == PNG_SIGNATURE
        height, width, _ = matplotlib.image.imread(out / name).shape
        assert height > 200 and width > 400


def test_a_reused_baseline_is_copied_and_not_run_again(compared, tmp_path):
    first, _ = compared
    done = experiment(tmp_path, "compare", "ring", "--preset", "small", "--out", "again", "--no-memo",
                      "--reuse-baseline", first / "baseline")
    assert done.returncode == 0, done.stderr
    assert "running baseline" not in done.stderr and "running accelerated ring small" in done.stderr
    again, before = load_json(tmp_path / "again" / "summary.json"), load_json(first / "summary.json")
    assert again["baseline_from"] == str(first / "baseline")
    for field in ("events_baseline", "run_wall_baseline_s", "sim_time_baseline_s", "flows_finished_baseline"):
        assert again[field] == before[field]
    copied = tmp_path / "again" / "baseline" / "flows.csv"
    assert copied.read_bytes() == (first / "baseline" / "flows.csv").read_bytes()
    # the accelerated run is deterministic too: the same events and flow times as the first comparison's
    assert again["events_accelerated"] == before["events_accelerated"]
    assert again["fct_max_rel_err"] == before["fct_max_rel_err"]


def test_only_a_finished_baseline_of_the_same_preset_is_reused(compared, tmp_path):
    first, _ = compared
    for folder, found in ((first / "accelerated", "a run of ring preset small in accelerated mode"),
                          (first / "baseline", "a run of ring preset small in baseline mode")):
        done = experiment(tmp_path, "compare", "ring", "--preset", "tiny" if folder.name == "baseline" else "small",
                          "--out", "x", "--reuse-baseline", folder)
        assert done.returncode == 2
        (line,) = [line for line in done.stderr.splitlines() if line.startswith("wormhole-ns3")]
        assert line.startswith(f"wormhole-ns3: error: --reuse-baseline {folder}: it holds {found} (args [")
        assert not (tmp_path / "x").exists()


def test_a_kept_baseline_of_another_workload_is_refused_once_the_run_made_its_own(compared, tmp_path):
    """The workload is made by the script: a changed generator shows only in the accelerated run's workload.json."""
    import json

    first, _ = compared
    kept = experiment(tmp_path, "keep", first / "baseline", "--into", "kept", "--command", "ring baseline")
    assert kept.returncode == 0, kept.stderr
    summary = load_json(tmp_path / "kept" / "summary.json")
    assert summary["workload_sha256"] == load_json(first / "accelerated" / "summary.json")["workload_sha256"]
    (tmp_path / "kept" / "summary.json").write_text(json.dumps(dict(summary, workload_sha256="0" * 64)))
    done = experiment(tmp_path, "compare", "ring", "--preset", "small", "--out", "x", "--reuse-baseline", "kept")
    assert done.returncode == 2
    assert "running accelerated ring small" in done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("wormhole-ns3")]
    assert line == (f"wormhole-ns3: error: --reuse-baseline kept: its workload differs from this run's "
                    f"(workload_sha256 {'0' * 64} vs {summary['workload_sha256']}): make the baseline again")
    assert not (tmp_path / "x").exists()


def test_memoized_moe_all_to_alls_are_replayed_exactly_cold_and_warm(tmp_path):
    """MoE all-to-alls open apart and meet one another (a flow between them starts).

    A recording absorbs what it meets, so the overlap is recorded as one episode,
    and the parallel groups' all-to-alls mirror one recording. A continuation whose
    joiners the run cannot know of in advance is not replayed: a joiner made in
    another order runs differently, and only its arrival tells. The next step of an
    all-to-all, started by completions of the one before, is known when those are
    replayed (their completions scheduled, or the record's own played forward on
    the workload). The twins of pipeline sends due to meet mirror their leaders and
    follow their leaders' meeting. Every flow ends as in plain ns-3, with every
    byte, at 3.3x fewer events (2.6x before replays foresaw the steps they release).
    """
    import csv

    # plain ns-3's side is the kept run of the preset (test_experiment_kept: a kept baseline is reused as kept)
    kept = REPO / "experiments" / "baselines" / "moe-small"
    cold = experiment(tmp_path, "compare", "llm-training", "--preset", "moe-small", "--memo", "memo",
                      "--reuse-baseline", kept, "--out", "cold")
    assert cold.returncode == 0, cold.stderr
    warm = experiment(tmp_path, "compare", "llm-training", "--preset", "moe-small", "--memo", "memo",
                      "--reuse-baseline", "cold/baseline", "--out", "warm")
    assert warm.returncode == 0, warm.stderr
    summaries = [load_json(tmp_path / name / "summary.json") for name in ("cold", "warm")]
    for summary in summaries:
        assert summary["fct_max_rel_err"] <= 1e-6
        assert summary["iteration_time_rel_err"] <= 1e-6
        assert summary["memo_diverged"] == 0 and summary["rx_bytes_exact"]
    assert summaries[0]["events_ratio"] >= 3.3
    assert summaries[1]["events_ratio"] >= summaries[0]["events_ratio"]
    rows = list(csv.DictReader((tmp_path / "cold" / "accelerated" / "skips.csv").open()))
    absorbed = [row["reason"] for row in rows if row["kind"] == TraceKind.MEMO_ABSORBED]
    assert any("opened apart" in reason for reason in absorbed)
    assert any("takes in 1 mirror(s) of what its leader absorbed" in reason for reason in absorbed)
    assert summaries[0]["memo_mirrored"] >= 10  # the parallel groups' all-to-alls follow one recording
    for name, summary in zip(("cold", "warm"), summaries):
        # each iteration counts the episodes it replayed and simulated; together, the run's
        table = pd.read_csv(tmp_path / name / "iterations.csv")
        assert table["memo_replayed"].sum() == summary["memo_hits"] + summary["memo_mirrored"]
        assert table["memo_simulated"].sum() == summary["memo_misses"] + summary["memo_distrusted"]
        later = table[table["iteration"] > 0]
        replayed = later["memo_replayed"].sum()
        assert summary["memo_hit_rate_after_first_iteration"] == replayed / (replayed + later["memo_simulated"].sum())


def test_seed_runs_are_kept_and_a_preset_that_draws_nothing_is_seed_free(compared, tmp_path):
    first, _ = compared
    done = experiment(tmp_path, "compare", "ring", "--preset", "small", "--out", "seeded", "--no-memo",
                      "--seeds", "2", "--reuse-baseline", first / "baseline")
    assert done.returncode == 0, done.stderr
    assert "running baseline ring small under RngRun 2" in done.stderr
    out = tmp_path / "seeded"
    run = load_json(out / "seeds" / "run-2" / "run.json")
    assert (run["mode"], run["rng_run"]) == ("baseline", 2)
    summary = load_json(out / "summary.json")
    # a star of DCTCP flows on RED step markers draws no random number: RngRun 2 changes nothing
    assert summary["seeds"]["case"] == "seed-free" and summary["seeds"]["rng_run"] == [1, 2]
    assert (out / "seeds" / "run-2" / "flows.csv").read_bytes() == (first / "baseline" / "flows.csv").read_bytes()
    assert pd.read_csv(out / "flows.csv")["fct_spread"].tolist() == [0.0] * SMALL_FLOWS
    assert pd.read_csv(out / "iterations.csv")["time_spread"].tolist() == [0.0, 0.0]
    assert ("- ns-3 seed spread: none: the 2 plain runs under RngRun 1, 2 are identical, events included"
            in (out / "summary.md").read_text())
    assert "seed_spread.png" not in summary["plots"]  # a zero spread is not drawn
