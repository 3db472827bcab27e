"""``wormhole-ns3 experiment sweep``: many independent runs of an experiment, fanned out.

Each run is ``run_experiment`` into its own folder ``OUT/<preset>`` (or
``OUT/<preset>-<k>`` with repeats), and ``OUT/runs.csv`` gets one row per
run, in the order the sweep lists them. The runs go to a
``concurrent.futures`` executor: local threads by default (each run is
already its own ns-3 process; a thread only waits for it), a Dask cluster
(``dask://HOST:PORT``, through ``Client.get_executor``) or a Ray cluster
(``ray://HOST:PORT``) when asked and installed. The workers of a cluster
need wormhole-ns3 installed and ``OUT`` on a file system they share.
"""

from __future__ import annotations

import csv
import importlib
import io
import sys
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from tqdm import tqdm

from wormhole_ns3.memo.store import RUN_ONLY
from wormhole_ns3.tools.experiment.child import ChildOptions
from wormhole_ns3.tools.experiment.outdir import check_writable
from wormhole_ns3.tools.experiment.registry import Experiment, ExperimentError
from wormhole_ns3.tools.experiment.results import write_atomically
from wormhole_ns3.tools.experiment.run import MEMO_FIELDS, mode_of, run_experiment

RUNS_FILE = "runs.csv"
#: Columns of runs.csv: which run, how it ended, then its summary's scalar numbers.
RUN_COLUMNS = (
    "run", "preset", "repeat", "mode", "exit_code", "error", "run_wall_s", "process_wall_s", "events", "sim_time_s",
    "skips", "skipped_time_s", "flows_finished", "flows_total", "iterations", "iteration_time_mean_s", *MEMO_FIELDS,
)
CLUSTER_EXTRA = "pip install 'wormhole-ns3[cluster]'"


@dataclass(frozen=True)
class SweepRun:
    """One run of a sweep: what a worker needs to do it (picklable, for Dask and Ray)."""

    experiment: Experiment
    preset: str
    repeat: int
    out: Path
    options: ChildOptions
    force: bool = False


def plan_sweep(experiment: Experiment, presets: list[str], repeats: int, out: Path, options: ChildOptions,
               force: bool = False) -> list[SweepRun]:
    """The runs of a sweep, checked (presets, repeats) before any starts."""
    if repeats < 1:
        raise ExperimentError(f"--repeat must be at least 1, got {repeats}")
    if not presets:
        raise ExperimentError("--presets names no preset")
    for preset in presets:
        experiment.script_args(preset)
    out = out.absolute()  # a cluster's workers run elsewhere: they need paths that mean the same there
    if options.memo is not None and str(options.memo) != RUN_ONLY:  # ``:memory:`` names no file
        options = replace(options, memo=options.memo.absolute())
    return [
        SweepRun(experiment, preset, k, out / (preset if repeats == 1 else f"{preset}-{k}"), options, force)
        for preset in presets
        for k in range(1, repeats + 1)
    ]


def execute(run: SweepRun, stop: threading.Event | None = None) -> dict:
    """Do one run of a sweep (on whichever worker holds it); its summary."""
    return run_experiment(run.experiment, run.preset, run.out, run.options, run.force, stop)


def sweep(runs: list[SweepRun], out: Path, jobs: int = 1, cluster: str | None = None,
          progress: bool = False, force: bool = False) -> list[dict]:
    """Do every run, ``jobs`` at a time locally or on ``cluster``; write runs.csv; one row per run."""
    if jobs < 1:
        raise ExperimentError(f"--jobs must be at least 1, got {jobs}")
    check_writable(out, force)
    stop = threading.Event()
    outcomes: dict[int, dict | ExperimentError] = {}
    with executor_for(cluster, jobs) as executor:
        out.mkdir(exist_ok=True)
        bar = tqdm(total=len(runs), desc="runs", unit="run", file=sys.stderr, disable=not progress)
        local = isinstance(executor, ThreadPoolExecutor)  # only local runs can be told to stop
        futures: dict[Future, int] = {}
        try:
            for index, run in enumerate(runs):
                futures[executor.submit(execute, run, stop) if local else executor.submit(execute, run)] = index
            for future in as_completed(futures):
                index = futures[future]
                outcomes[index] = _outcome(future)
                bar.update()
                if not progress:
                    print(f"[wormhole] {_describe(runs[index], outcomes[index])}", file=sys.stderr, flush=True)
        except KeyboardInterrupt:
            stop.set()
            for future in futures:
                future.cancel()
            raise ExperimentError(f"interrupted; the runs that finished are in {out}", exit_code=130) from None
        finally:
            bar.close()
            rows = [run_row(run, outcomes[i]) for i, run in enumerate(runs) if i in outcomes]
            _write_runs(rows, out / RUNS_FILE)
    return rows


def _outcome(future: Future) -> dict | ExperimentError:
    try:
        return future.result()
    except ExperimentError as failure:
        return failure


def _describe(run: SweepRun, outcome: dict | ExperimentError) -> str:
    if isinstance(outcome, ExperimentError):
        return f"{run.out.name}: failed: {outcome}"
    return (f"{run.out.name}: done, Run() {outcome['run_wall_s']:.2f} s "
            f"(process {outcome['process_wall_s']:.2f} s), {outcome['flows_finished']} flows")


def run_row(run: SweepRun, outcome: dict | ExperimentError) -> dict:
    """The runs.csv row of one run: its summary's numbers, or its failure."""
    failed = outcome if isinstance(outcome, ExperimentError) else None
    row = {
        "run": run.out.name,
        "preset": run.preset,
        "repeat": run.repeat,
        "mode": mode_of(run.options),
        "exit_code": failed.exit_code if failed else 0,
        "error": str(failed) if failed else "",
    }
    summary = {} if isinstance(outcome, ExperimentError) else outcome
    for column in RUN_COLUMNS[len(row):]:
        row[column] = summary.get(column)
    return row


def _write_runs(rows: list[dict], path: Path) -> None:
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=RUN_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_atomically(path, text.getvalue())


@contextmanager
def executor_for(cluster: str | None, jobs: int):
    """A concurrent.futures executor: local threads, or a Dask or Ray cluster's."""
    if cluster is None:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="sweep") as executor:
            yield executor
        return
    scheme, _, address = cluster.partition("://")
    if scheme == "dask" and address:
        with _dask_executor(f"tcp://{address}") as executor:
            yield executor
    elif scheme == "ray" and address:
        with _ray_executor(cluster) as executor:
            yield executor
    else:
        raise ExperimentError(f"--cluster {cluster}: expected dask://HOST:PORT or ray://HOST:PORT")


@contextmanager
def _dask_executor(address: str):
    client_class = _cluster_package("dask.distributed", "dask").Client
    try:
        client = client_class(address, timeout="10s")
    except OSError as error:
        raise ExperimentError(f"cannot reach the Dask scheduler at {address}: {error}") from None
    with client, client.get_executor(pure=False) as executor:
        yield executor


@contextmanager
def _ray_executor(address: str):
    ray = _cluster_package("ray", "ray")
    try:
        ray.init(address=address)
    except ConnectionError as error:
        raise ExperimentError(f"cannot reach the Ray cluster at {address}: {error}") from None
    try:
        yield RayExecutor(ray)
    finally:
        ray.shutdown()


def _cluster_package(name: str, scheme: str):
    """The cluster's Python package, or a one-line error saying how to install it."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ExperimentError(f"--cluster {scheme}://... needs {name}: {CLUSTER_EXTRA}") from None


class RayExecutor(Executor):
    """Ray tasks behind the ``concurrent.futures`` interface (Ray's ObjectRef.future() does the waiting)."""

    def __init__(self, ray) -> None:
        self._ray = ray

    def submit(self, fn, /, *args, **kwargs) -> Future:
        return self._ray.remote(fn).remote(*args, **kwargs).future()
