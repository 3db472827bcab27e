"""``wormhole-ns3 experiment run``: one run of an experiment preset into a result folder.

The folder holds what the script wrote (``workload.json``, ``flows.csv``,
``iterations.csv``), what the harness wrote (``run.json``, ``skips.csv``), the
script's output (``stdout.txt``, ``stderr.txt``), and what the runner derives
from them: ``fct.txt`` (HPCC style), for a script that writes no tables
``flows.csv`` from the harness's flows and ``iterations.csv`` from the
iteration lines it prints (``Experiment.iteration_lines``), Parquet copies of
the tables when pyarrow is installed, and ``summary.json``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import threading
from pathlib import Path

from wormhole_ns3.models.workloads import Workload
from wormhole_ns3.models.workloads.dag import Task
from wormhole_ns3.tools.experiment.child import (
    RUN_RESULTS_FILE,
    STDOUT_FILE,
    ChildOptions,
    harness_command,
    run_child,
)
from wormhole_ns3.tools.experiment.iteration_lines import IterationLines, IterationLinesError
from wormhole_ns3.tools.experiment.outdir import StagedDir
from wormhole_ns3.tools.experiment.registry import Experiment, ExperimentError
from wormhole_ns3.tools.experiment.results import (
    FCT_FILE,
    FLOWS_FILE,
    ITERATIONS_FILE,
    WORKLOAD_FILE,
    read_flows,
    read_iterations,
    write_atomically,
    write_flow_table,
    write_hpcc_fct,
    write_iteration_table,
)
from wormhole_ns3.tools.report import flow_keys

SUMMARY_FILE = "summary.json"
COMMAND_FILE = "command.txt"
#: Fields of the harness's run.json a run summary repeats as they are (None when absent).
HARNESS_FIELDS = (
    "run_wall_s", "process_wall_s", "events", "sim_time_s", "skips", "skip_backs", "skipped_time_s", "events_avoided",
    "profile",
)
#: Memo counters of run.json (None without a memo store) and the events each shortcut avoided.
MEMO_FIELDS = (
    "memo_hits", "memo_mirrored", "memo_misses", "memo_recorded", "memo_diverged", "memo_distrusted",
    "memo_draw_dependent", "memo_entries", "flows_replayed", "flows_resumed", "events_avoided_by_memo",
    "events_avoided_by_skip",
)


def mode_of(options: ChildOptions) -> str:
    """The run's mode, as the harness names it."""
    return "baseline" if options.baseline else "accelerated"


def run_experiment(experiment: Experiment, preset: str, out: Path, options: ChildOptions,
                   force: bool = False, stop: threading.Event | None = None, command: str | None = None) -> dict:
    """Run one preset into ``out`` (staged, renamed when complete); return its summary.

    ``command``, the command line that asked for the run, is kept in ``command.txt``.
    """
    check_runnable(experiment, preset)
    staged = StagedDir.create(out, force)
    summary = execute_run(experiment, preset, staged.staging, options, stop)
    write_command(staged.staging, command)
    staged.commit()
    return summary


def write_command(folder: Path, command: str | None) -> None:
    """``command.txt``: the command that made the result in ``folder``, so that a kept result says how to remake it."""
    if command is not None:
        write_atomically(folder / COMMAND_FILE, command + "\n")


def check_runnable(experiment: Experiment, preset: str) -> None:
    """Raise ExperimentError for an unknown preset or a missing script, before anything is made."""
    experiment.script_args(preset)
    if not experiment.script.is_file():
        raise ExperimentError(f"experiment {experiment.name}: its script {experiment.script} does not exist")


def execute_run(experiment: Experiment, preset: str, folder: Path, options: ChildOptions,
                stop: threading.Event | None = None) -> dict:
    """Run the script in the existing, empty ``folder``, derive the tables and write ``summary.json``."""
    script_args = experiment.script_args(preset)
    if experiment.results_dir_option is not None:
        script_args = [*script_args, experiment.results_dir_option, str(folder)]
    command = harness_command(experiment.script, script_args, folder, options)
    label = f"{mode_of(options)} {experiment.name} {preset}"
    if options.rng_run is not None:
        label += f" under RngRun {options.rng_run}"
    try:
        run_child(command, folder, label, options, stop)
    except KeyboardInterrupt:
        raise ExperimentError(f"interrupted; the {label} run's rows so far are in {folder}", exit_code=130) from None
    if not (folder / RUN_RESULTS_FILE).exists():
        raise ExperimentError(f"the {label} run ended without the harness's results; its output is in {folder}")
    run_results = json.loads((folder / RUN_RESULTS_FILE).read_text())
    if not (folder / FLOWS_FILE).exists():
        write_flow_table(harness_flow_rows(run_results), folder / FLOWS_FILE)
    if not (folder / FCT_FILE).exists():
        write_hpcc_fct(run_results, folder / FCT_FILE)
    if experiment.iteration_lines is not None and not (folder / ITERATIONS_FILE).exists():
        write_iteration_table(_reported_iterations(experiment.iteration_lines, folder, label), folder / ITERATIONS_FILE)
    flows = read_flows(folder / FLOWS_FILE)
    iterations = read_iterations(folder / ITERATIONS_FILE) if (folder / ITERATIONS_FILE).exists() else None
    write_parquet(flows, folder / FLOWS_FILE)
    if iterations is not None:
        write_parquet(iterations, folder / ITERATIONS_FILE)
    summary = run_summary(experiment, preset, folder, run_results, flows, iterations)
    write_json(folder / SUMMARY_FILE, summary)
    return summary


def _reported_iterations(lines: IterationLines, folder: Path, label: str) -> list[tuple]:
    """``iterations.csv`` rows of the iterations the script printed; ExperimentError, in one line, if it printed
    none or printed them out of order."""
    try:
        return lines.rows((folder / STDOUT_FILE).read_text())
    except IterationLinesError as error:
        raise ExperimentError(f"the {label} run {error} (its output: {folder / STDOUT_FILE})") from None


def harness_flow_rows(run_results: dict) -> list[tuple]:
    """``flows.csv`` rows of the flows the harness tracked, for a script that writes no table of its own.

    A flow's task is its place among the run's flows in the order of their
    ``flow_keys`` (ends, destination port, how many flows between those ends
    started before it): both runs of a comparison number a flow alike, also
    where a user's callbacks create flows in another order than plain ns-3
    did. The ends are addresses, and the labels are a Task's defaults.
    """
    blank = Task(0, "flow", 0, 1, 1, 0.0)
    flows = run_results["flows"]
    keys = flow_keys(flows)
    rows = []
    for task, k in enumerate(sorted(range(len(flows)), key=keys.__getitem__)):
        flow = flows[k]
        if flow["fct"] is None:
            continue
        finish = flow["start"] + flow["fct"]
        rows.append((task, blank.iteration, blank.collective, blank.group, blank.step, blank.phase,
                     flow["src"], flow["dst"], flow["bytes"], flow["start"], finish, flow["fct"]))
    return rows


def run_summary(experiment: Experiment, preset: str, folder: Path, run_results: dict, flows, iterations) -> dict:
    """The run's headline numbers: the harness's counters, the flows and iterations the script finished."""
    iteration_times = [] if iterations is None else [float(t) for t in iterations["time"]]
    workload_path = folder / WORKLOAD_FILE
    flows_total = len(Workload.from_json(workload_path.read_text()).flows) if workload_path.exists() else None
    return {
        "experiment": experiment.name,
        "preset": preset,
        "mode": run_results["mode"],
        "script": str(experiment.script),
        "script_args": experiment.script_args(preset),
        "exit_code": run_results["exit_code"],
        **{name: run_results.get(name) for name in HARNESS_FIELDS},
        "flows_finished": len(flows),
        "flows_total": flows_total,
        "iterations": len(iteration_times),
        "iteration_times_s": iteration_times,
        "iteration_time_mean_s": sum(iteration_times) / len(iteration_times) if iteration_times else None,
        **{name: run_results.get(name) for name in MEMO_FIELDS},
        "config": run_results["config"] if run_results["mode"] == "accelerated" else None,
        "wormhole_ns3_version": run_results["wormhole_ns3_version"],
        "ns3_version": run_results["ns3_version"],
        "workload_sha256": hashlib.sha256(workload_path.read_bytes()).hexdigest() if workload_path.exists() else None,
        "input_sha256": input_digests(experiment.script_args(preset)),
        "machine": machine_facts(),
    }


def input_digests(script_args: list[str]) -> dict[str, str]:
    """SHA-256 of each input file among the script's arguments, by file name.

    Inputs of the user's own are given to the script as absolute paths
    (``Experiment.with_inputs``), which differ from checkout to checkout; a
    kept run is recognised elsewhere by its files' names and contents.
    """
    files = [Path(arg) for arg in script_args if Path(arg).is_absolute() and Path(arg).is_file()]
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in files}


def portable_args(script_args: list[str]) -> list[str]:
    """The script's arguments with absolute paths shortened to their file names (see ``input_digests``)."""
    return [Path(arg).name if Path(arg).is_absolute() else arg for arg in script_args]


def machine_facts() -> dict:
    """What a run's times depend on, so that a kept result says where it was measured."""
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as cpuinfo:
            model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), None)
    except OSError:
        pass
    return {"cpu": model or platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "python": platform.python_version(), "system": f"{platform.system()} {platform.release()}"}


def write_parquet(frame, csv_path: Path) -> None:
    """The table as ``X.parquet`` next to ``X.csv`` when pyarrow is installed (the CSV stays the reference)."""
    if importlib.util.find_spec("pyarrow") is None:
        return
    target = csv_path.with_suffix(".parquet")
    partial = target.with_name(target.name + ".partial")
    frame.to_parquet(partial, engine="pyarrow", index=False)
    partial.replace(target)


def write_json(path: Path, document: dict) -> None:
    write_atomically(path, json.dumps(document, indent=1) + "\n")
