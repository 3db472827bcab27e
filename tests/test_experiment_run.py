"""``wormhole-ns3 experiment run`` on real ns-3 runs of the tests' ring experiment (tests/scripts/flow_dag_ring.py).

Preset "tiny": 2 hosts, one iteration (compute, then a ring all-reduce of 8 MB:
4 flows of 4 MB), a few seconds. Preset "long": 8 iterations of 24 MB, run
as the baseline so that it is still going when a test stops it.
"""

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.tools.experiment.child import ChildOptions, harness_command
from wormhole_ns3.tools.experiment.registry import Experiment, ExperimentError
from wormhole_ns3.tools.experiment.results import read_flows
from wormhole_ns3.tools.experiment.run import run_experiment

from conftest import EXPERIMENT_CLI, child_environment, load_json

TINY_FLOWS = 4
TABLES = ("workload.json", "flows.csv", "iterations.csv", "fct.txt")


def flow_rows(path):
    """Data rows of a flows.csv that may still be growing: complete lines only."""
    if not path.exists():
        return []
    lines = path.read_text().split("\n")[1:-1]
    return [line.split(",") for line in lines]


@pytest.mark.slow
def test_run_writes_the_tables_the_harness_results_and_a_summary(experiment_cli, tmp_path):
    done = experiment_cli("experiment", "run", "ring", "--preset", "tiny", "--out", "out", "--progress", "--no-memo")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    assert not list(tmp_path.glob("out.partial*"))  # staged, then renamed
    summary, run = load_json(out / "summary.json"), load_json(out / "run.json")
    flows = pd.read_csv(out / "flows.csv")
    iterations = pd.read_csv(out / "iterations.csv")
    assert len(flows) == summary["flows_finished"] == summary["flows_total"] == TINY_FLOWS
    assert (flows["fct"] == flows["finish"] - flows["start"]).all()
    assert set(flows["bytes"]) == {4_000_000}
    assert summary["iterations"] == len(iterations) == 1
    assert summary["iteration_times_s"] == list(iterations["time"])
    assert iterations.loc[0, "finish"] == flows["finish"].max()  # the iteration ends with its last flow
    assert summary["mode"] == run["mode"] == "accelerated"
    assert summary["events"] == run["events"] > 100_000
    assert summary["run_wall_s"] == run["run_wall_s"] > 0
    assert summary["script_args"] == ["--hosts", "2", "--mb", "8", "--iterations", "1", "--compute-ms", "1"]
    for field in ("memo_hits", "memo_misses", "memo_recorded", "memo_entries", "events_avoided_by_memo"):
        assert summary[field] is None  # no memo store
    assert summary["events_avoided_by_skip"] == run["events_avoided_by_skip"]
    assert summary["skips"] == run["skips"] == len(pd.read_csv(out / "skips.csv"))
    pd.testing.assert_frame_equal(pd.read_parquet(out / "flows.parquet"), read_flows(out / "flows.csv"),
                                  check_dtype=False)
    fct_lines = (out / "fct.txt").read_text().splitlines()
    assert sorted(int(line.split()[4]) for line in fct_lines) == [4_000_000] * TINY_FLOWS
    assert (out / "stdout.txt").read_text() == (
        f"iteration 0 time {iterations.loc[0, 'time']:.9f}\ntasks finished 7 of 7\n")
    assert f"wrote out: {TINY_FLOWS} flows, 1 iteration (mean " in done.stdout
    assert f"{TINY_FLOWS}/{TINY_FLOWS} flows" in done.stderr  # the progress bar's last state


@pytest.mark.slow
def test_the_same_run_twice_gives_the_same_tables(experiment_cli, tmp_path):
    for out in ("first", "second"):
        done = experiment_cli("experiment", "run", "ring", "--preset", "tiny", "--out", out)
        assert done.returncode == 0, done.stderr
    for name in TABLES:
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes(), name
    assert len(flow_rows(tmp_path / "first" / "flows.csv")) == TINY_FLOWS


def start_long_baseline(tmp_path):
    """The runner on the long preset, in the background; returns it once the child has written 2 flows."""
    runner = subprocess.Popen(
        [sys.executable, str(EXPERIMENT_CLI), "experiment", "run", "ring", "--preset", "long", "--baseline",
         "--out", "out"],
        cwd=tmp_path, env=child_environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    partial = tmp_path / "out.partial" / "flows.csv"
    deadline = time.monotonic() + 120
    while len(flow_rows(partial)) < 2:
        assert runner.poll() is None, runner.communicate()
        assert time.monotonic() < deadline, "the run wrote no flows in 2 minutes"
        time.sleep(0.1)
    return runner


def ns3_child_of(runner: subprocess.Popen) -> int:
    (child,) = open(f"/proc/{runner.pid}/task/{runner.pid}/children").read().split()
    return int(child)


def assert_rows_survived(tmp_path, at_least: int):
    rows = flow_rows(tmp_path / "out.partial" / "flows.csv")
    assert len(rows) >= at_least
    assert all(len(row) == 12 and float(row[-1]) > 0 for row in rows)
    assert not (tmp_path / "out").exists()  # never a result folder for an unfinished run


@pytest.mark.slow
def test_sigterm_stops_the_run_and_keeps_the_rows_it_finished(tmp_path):
    runner = start_long_baseline(tmp_path)
    child = ns3_child_of(runner)
    runner.send_signal(signal.SIGTERM)
    _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == 130
    assert "interrupted; the baseline ring long run's rows so far are in out.partial" in stderr
    assert not os.path.exists(f"/proc/{child}")  # the ns-3 child was stopped too
    assert_rows_survived(tmp_path, 2)


@pytest.mark.slow
def test_a_killed_child_is_reported_and_its_rows_survive(tmp_path):
    runner = start_long_baseline(tmp_path)
    os.kill(ns3_child_of(runner), signal.SIGKILL)
    _, stderr = runner.communicate(timeout=60)
    assert runner.returncode == 128 + signal.SIGKILL
    assert "error: the baseline ring long run failed (killed by SIGKILL)" in stderr
    assert_rows_survived(tmp_path, 2)


@pytest.mark.slow
def test_a_failing_script_shows_its_last_stderr_lines(experiment_cli, tmp_path):
    done = experiment_cli("experiment", "run", "ring", "--preset", "crash", "--out", "out")
    assert done.returncode == 1
    lines = [line for line in done.stderr_lines if line.startswith("wormhole-ns3: error:") or line.startswith("  | ")]
    assert lines[0] == ("wormhole-ns3: error: the accelerated ring crash run failed (exit code 1); "
                        "what it finished is in out.partial")
    assert lines[-1].startswith("  | ") and lines[-1].endswith("RuntimeError: crash asked for after 3 flows")
    assert "  |     ns.Simulator.Run()" in lines  # the traceback, as the script printed it
    assert len(flow_rows(tmp_path / "out.partial" / "flows.csv")) == 2  # the third raised before its row


@pytest.mark.slow
def test_force_replaces_a_finished_result_only_once_the_new_one_is_complete(experiment_cli, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "summary.json").write_text("{}\n")  # an earlier result
    refused = experiment_cli("experiment", "run", "ring", "--out", "out")
    assert refused.returncode == 2
    assert refused.stderr_lines == [
        "wormhole-ns3: error: out already holds results; choose another --out or pass --force to replace them"]
    done = experiment_cli("experiment", "run", "ring", "--out", "out", "--force")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        ["command.txt", "flows.csv", "flows.parquet", "iterations.csv", "iterations.parquet", "fct.txt", "run.json",
         "skips.csv", "stderr.txt", "stdout.txt", "summary.json", "workload.json"])
    assert (tmp_path / "out" / "command.txt").read_text() == "wormhole-ns3 experiment run ring --out out --force\n"


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "nope"], "unknown experiment 'nope'; known experiments: llm-training, dctcp-dumbbell, two-rings, "
                          "moe-alltoall, hierarchical-allreduce, pipeline-1f1b, background-traffic, two-jobs, ring"),
        (["run", "ring", "--preset", "huge"], "experiment ring has no preset 'huge'; its presets: tiny, small, long, "
                                              "crash"),
        (["run", "ring", "--baseline", "--memo", "m"], "--memo is for accelerated runs; a --baseline run uses no "
                                                      "memo store"),
        (["run", "ring", "--theta", "2"], "theta must be in (0, 1), got 2.0"),
        (["run", "ring", "--out", "file.txt/out"], "cannot write results to file.txt/out: file.txt is a file"),
        (["compare", "ring", "--out", "c", "--reuse-baseline", "nowhere"],
         "--reuse-baseline nowhere: not a finished run (no readable summary.json)"),
        (["sweep", "ring", "--presets", "tiny", "--out", "s", "--jobs", "0"], "--jobs must be at least 1, got 0"),
        (["sweep", "ring", "--presets", "tiny,huge", "--out", "s"],
         "experiment ring has no preset 'huge'; its presets: tiny, small, long, crash"),
    ],
)
def test_bad_requests_are_one_line_and_exit_2(experiment_cli, tmp_path, args, message):
    (tmp_path / "file.txt").write_text("")
    done = experiment_cli("experiment", *args)
    assert (done.returncode, done.stderr_lines) == (2, [f"wormhole-ns3: error: {message}"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]  # nothing made


def test_an_unknown_option_is_refused_by_the_parser(experiment_cli):
    done = experiment_cli("experiment", "run", "ring", "--frobnicate")
    assert done.returncode == 2
    assert done.stderr_lines[-1].endswith("error: unrecognized arguments: --frobnicate")


def test_experiment_list_shows_every_experiment_and_its_presets(experiment_cli):
    done = experiment_cli("experiment", "list")
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0].startswith("llm-training ")
    workloads = ["gpt-small", "moe-small", "gpt-medium", "moe-medium", "gpt-7b-64g", "gpt-13b-128g", "moe-8x7b-64g"]
    listed = [name.rstrip(",") for name in lines[1].split()[1:] if name != "(default),"]
    assert listed == workloads + [f"{w}-dcqcn" for w in workloads] + [f"{w}-hpcc" for w in workloads]
    assert lines[1].split()[1:3] == ["gpt-small", "(default),"]
    assert any(line.split()[:2] == ["presets:", "tiny"] for line in lines)


def test_a_missing_script_is_named(tmp_path):
    ghost = Experiment("ghost", tmp_path / "ghost.py", "", {"p": []}, "p")
    with pytest.raises(ExperimentError, match=f"experiment ghost: its script {tmp_path / 'ghost.py'} does not exist"):
        run_experiment(ghost, "p", tmp_path / "out", ChildOptions())
    assert list(tmp_path.iterdir()) == []


def test_the_memo_store_goes_to_the_accelerated_run_only(tmp_path):
    script = tmp_path / "s.py"
    options = ChildOptions(memo=tmp_path / "memo", config=AcceleratorConfig(theta=0.1))
    command = harness_command(script, ["--a"], tmp_path, options)
    assert command[-4:] == ["--memo", str(tmp_path / "memo"), str(script), "--a"]
    assert "--theta=0.1" in command
    baseline = harness_command(script, ["--a"], tmp_path, ChildOptions(baseline=True))
    assert baseline[3:] == ["run", "--results", str(tmp_path / "run.json"), "--trace", str(tmp_path / "skips.csv"),
                            "--baseline", str(script), "--a"]


@pytest.mark.slow
def test_a_script_without_tables_gets_them_from_the_harness(wormhole, tmp_path):
    """The dumbbell demo writes no tables: flows.csv comes from the flows the harness tracked."""
    done = wormhole("experiment", "run", "dctcp-dumbbell", "--out", "out")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out"
    run, summary = load_json(out / "run.json"), load_json(out / "summary.json")
    flows = pd.read_csv(out / "flows.csv")
    assert list(flows["task"]) == [f["id"] for f in run["flows"]] == [0, 1, 2, 3]
    assert list(flows["src"]) == [f["src"] for f in run["flows"]]
    assert list(flows["fct"]) == [f["fct"] for f in run["flows"]]
    assert list(flows["bytes"]) == [30_000_000, 40_000_000, 50_000_000, 60_000_000]
    assert not (out / "iterations.csv").exists() and not (out / "workload.json").exists()
    assert (summary["flows_finished"], summary["flows_total"], summary["iterations"]) == (4, None, 0)
    lines = [line.split() for line in (out / "fct.txt").read_text().splitlines()]
    assert len(lines) == 4
    for fields in lines:  # HPCC's columns; the standalone FCT from the flow's own path (3 links of 10 Gbps, 10 us)
        size, fct, standalone = int(fields[4]), int(fields[6]), int(fields[7])
        assert standalone == size * 8 // 10 + 2 * 3 * 10_000 + 3 * 1_200  # ns: bytes, base RTT, a packet per hop
        assert standalone < fct  # the flows share the bottleneck
