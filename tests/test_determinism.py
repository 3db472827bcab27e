"""The same command gives byte-identical flows.csv: twice, with or without a memo, one job or two.

A run's results may depend only on its inputs (the script, its arguments, the
settings, the memo store it starts from), never on the run's wall clock, its
process or its neighbours in a sweep. The ring's ``small`` preset skips and
replays (3 skips and a memo hit with a cold store), so every shortcut is in
the comparison.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wormhole_ns3.tools.experiment.child import ChildOptions
from wormhole_ns3.tools.experiment.registry import Experiment
from wormhole_ns3.tools.experiment.sweep import plan_sweep

from conftest import load_json

RING_SMALL = ("experiment", "run", "ring", "--preset", "small")


def _flows(folder: Path) -> bytes:
    return (folder / "flows.csv").read_bytes()


@pytest.mark.slow
def test_the_same_run_twice_with_a_memo_gives_the_same_flows(experiment_cli, tmp_path):
    def run(out: str, memo: str) -> Path:
        done = experiment_cli(*RING_SMALL, "--memo", memo, "--out", out)
        assert done.returncode == 0, done.stderr
        return tmp_path / out

    first, second = run("mem1", ":memory:"), run("mem2", ":memory:")
    assert _flows(first) == _flows(second)
    results = load_json(first / "run.json")
    assert results["memo_hits"] > 0  # the ring's lone steps meet no congestion signal: replayed, not skipped
    assert not (tmp_path / ":memory:").exists()
    # a store on disk starts empty as :memory: does, then replays what it recorded: the
    # warm run differs from the cold one (it replays where the cold one skipped), but the
    # same warm command twice is the same run again
    cold = run("cold", "store")
    assert _flows(cold) == _flows(first)
    warm1, warm2 = run("warm1", "store"), run("warm2", "store")
    assert load_json(warm1 / "run.json")["memo_misses"] == 0  # nothing left to record
    assert _flows(warm1) == _flows(warm2)


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
