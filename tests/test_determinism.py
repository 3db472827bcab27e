"""The same command gives byte-identical flows.csv: twice, with or without a memo, one job or two.

A run's results may depend only on its inputs (the script, its arguments, the
settings, the memo store it starts from), never on the run's wall clock, its
process or its neighbours in a sweep. The ring's ``small`` preset skips and
replays (3 skips and a memo hit with a cold store), so every shortcut is in
the comparison. The runs of ``small`` with a store on disk are also those that
show ``--memo`` reaching ``experiment run`` (one run records, the next replays).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wormhole_ns3.tools.experiment.child import ChildOptions
from wormhole_ns3.tools.experiment.registry import Experiment
from wormhole_ns3.tools.experiment.run import MEMO_FIELDS
from wormhole_ns3.tools.experiment.sweep import plan_sweep

from conftest import EXPERIMENT_CLI, child_environment, load_json

RING_SMALL = ("experiment", "run", "ring", "--preset", "small")
#: (out, memo) of each run of ``small``, in order: two of a store of the run only, then a store on disk
#: made by the first of three
RING_SMALL_RUNS = (("mem1", ":memory:"), ("mem2", ":memory:"), ("cold", "store"), ("warm1", "store"),
                   ("warm2", "store"))


def _flows(folder: Path) -> bytes:
    return (folder / "flows.csv").read_bytes()


@pytest.fixture(scope="module")
def ring_small(tmp_path_factory) -> Path:
    """The folder of the runs of RING_SMALL_RUNS, one after another (the warm ones read what cold stored)."""
    folder = tmp_path_factory.mktemp("ring-small")
    for out, memo in RING_SMALL_RUNS:
        done = subprocess.run([sys.executable, str(EXPERIMENT_CLI), *RING_SMALL, "--memo", memo, "--out", out],
                              cwd=folder, env=child_environment(), capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.slow
def test_the_same_run_twice_with_a_memo_gives_the_same_flows(ring_small):
    first, second = ring_small / "mem1", ring_small / "mem2"
    assert _flows(first) == _flows(second)
    results = load_json(first / "run.json")
    assert results["memo_hits"] > 0  # the ring's lone steps meet no congestion signal: replayed, not skipped
    assert not (ring_small / ":memory:").exists()
    # a store on disk starts empty as :memory: does, then replays what it recorded: the
    # warm run differs from the cold one (it replays where the cold one skipped), but the
    # same warm command twice is the same run again
    assert _flows(ring_small / "cold") == _flows(first)
    warm1, warm2 = ring_small / "warm1", ring_small / "warm2"
    assert load_json(warm1 / "run.json")["memo_misses"] == 0  # nothing left to record
    assert _flows(warm1) == _flows(warm2)


@pytest.mark.slow
def test_a_memo_store_records_in_one_run_and_replays_in_the_next(ring_small):
    """small: two identical iterations. --memo reaches the accelerated run: the first run records episodes
    into the fresh store, the next one replays every flow from it; the summaries carry run.json's counters."""
    summaries = []
    for out in ("cold", "warm1"):
        summary, run = load_json(ring_small / out / "summary.json"), load_json(ring_small / out / "run.json")
        assert {f: summary[f] for f in MEMO_FIELDS} == {f: run[f] for f in MEMO_FIELDS}
        summaries.append(summary)
    first, second = summaries
    assert first["memo_recorded"] >= 1 and first["memo_entries"] == first["memo_recorded"]
    assert (second["memo_misses"], second["flows_replayed"]) == (0, 8) and second["memo_hits"] >= 1
    assert second["events"] * 100 < first["events"]
    assert first["flows_finished"] == second["flows_finished"] == 8
    assert second["iteration_times_s"] == pytest.approx(first["iteration_times_s"], rel=1e-3)


@pytest.mark.slow
def test_a_sweep_gives_the_same_flows_with_one_job_or_two(experiment_cli, tmp_path):
    for jobs in ("1", "2"):
        done = experiment_cli("experiment", "sweep", "ring", "--presets", "tiny,small", "--jobs", jobs,
                              "--memo", ":memory:", "--out", f"jobs{jobs}")
        assert done.returncode == 0, done.stderr
    for preset in ("tiny", "small"):
        assert _flows(tmp_path / "jobs1" / preset) == _flows(tmp_path / "jobs2" / preset)
    assert load_json(tmp_path / "jobs2" / "small" / "run.json")["memo_hits"] > 0
    assert not (tmp_path / ":memory:").exists()


def test_a_sweep_keeps_memory_as_a_store_of_each_run_not_a_file(tmp_path):
    """``--memo :memory:`` made absolute would be one store on disk that the sweep's runs share."""
    ring = Experiment(name="ring", script=tmp_path / "ring.py", description="", presets={"tiny": []},
                      default_preset="tiny")
    runs = plan_sweep(ring, ["tiny"], 2, tmp_path, ChildOptions(memo=Path(":memory:")))
    assert [str(r.options.memo) for r in runs] == [":memory:", ":memory:"]
    (run,) = plan_sweep(ring, ["tiny"], 1, tmp_path, ChildOptions(memo=Path("store")))
    assert run.options.memo == Path.cwd() / "store"
