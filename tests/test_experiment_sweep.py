"""``wormhole-ns3 experiment sweep`` over local jobs and over a real (local) Dask cluster."""

import pandas as pd
import pytest

from conftest import REPO, load_json


@pytest.mark.long
def test_a_sweep_runs_presets_two_at_a_time_and_keeps_going_past_a_failure(experiment_cli, tmp_path):
    done = experiment_cli("experiment", "sweep", "ring", "--presets", "tiny,crash", "--repeat", "2", "--jobs", "2",
                          "--out", "sweep")
    assert done.returncode == 1  # the crash preset's exit code
    assert done.stdout == "wrote sweep/runs.csv: 4 runs, 2 failed\n"
    runs = pd.read_csv(tmp_path / "sweep" / "runs.csv")
    assert list(runs["run"]) == ["tiny-1", "tiny-2", "crash-1", "crash-2"]  # the sweep's order, not completion's
    assert list(runs["exit_code"]) == [0, 0, 1, 1]
    assert runs.loc[2, "error"].startswith("the accelerated ring crash run failed (exit code 1)")
    tiny = runs[runs["preset"] == "tiny"]
    for k in (1, 2):
        summary = load_json(tmp_path / "sweep" / f"tiny-{k}" / "summary.json")
        row = tiny[tiny["repeat"] == k].iloc[0]
        assert (row["events"], row["flows_finished"], row["iterations"]) == (summary["events"], 4, 1)
        assert row["run_wall_s"] == summary["run_wall_s"]
    # two runs of one deterministic preset, side by side: the same simulation
    assert tiny["events"].nunique() == 1
    assert (tmp_path / "sweep/tiny-1/flows.csv").read_bytes() == (tmp_path / "sweep/tiny-2/flows.csv").read_bytes()
    assert (tmp_path / "sweep" / "crash-1.partial" / "flows.csv").exists()  # a failed run keeps its rows


@pytest.mark.long
def test_a_sweep_runs_on_a_dask_cluster(experiment_cli, tmp_path, monkeypatch):
    distributed = pytest.importorskip("dask.distributed")
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the workers import this checkout's wormhole_ns3
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        address = cluster.scheduler_address.removeprefix("tcp://")
        done = experiment_cli("experiment", "sweep", "ring", "--presets", "tiny", "--out", "sweep",
                              "--cluster", f"dask://{address}")
        ran_there = set(cluster.scheduler.task_prefixes)
    assert done.returncode == 0, done.stderr
    (row,) = pd.read_csv(tmp_path / "sweep" / "runs.csv").to_dict("records")
    assert (row["run"], row["exit_code"], row["flows_finished"]) == ("tiny", 0, 4)
    assert load_json(tmp_path / "sweep" / "tiny" / "summary.json")["events"] == row["events"]
    assert "execute" in ran_there  # the sweep's run function ran on the cluster's worker


@pytest.mark.parametrize(
    "cluster, message",
    [
        ("spark://host:1", "--cluster spark://host:1: expected dask://HOST:PORT or ray://HOST:PORT"),
        ("dask://", "--cluster dask://: expected dask://HOST:PORT or ray://HOST:PORT"),
    ],
)
def test_an_unknown_cluster_is_refused(experiment_cli, cluster, message):
    done = experiment_cli("experiment", "sweep", "ring", "--presets", "tiny", "--out", "s", "--cluster", cluster)
    assert (done.returncode, done.stderr_lines) == (2, [f"wormhole-ns3: error: {message}"])


def test_a_cluster_without_its_package_says_which_extra_to_install(experiment_cli):
    try:
        import ray  # noqa: F401
    except ImportError:
        done = experiment_cli("experiment", "sweep", "ring", "--presets", "tiny", "--out", "s",
                              "--cluster", "ray://127.0.0.1:1")
        assert (done.returncode, done.stderr_lines) == (
            2, ["wormhole-ns3: error: --cluster ray://... needs ray: pip install 'wormhole-ns3[cluster]'"])
    else:
        pytest.skip("ray is installed here")
