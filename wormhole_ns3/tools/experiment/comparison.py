"""``wormhole-ns3 experiment compare``: the baseline and the accelerated run of a preset, side by side.

Both runs go through ``execute_run`` in separate processes, into
``OUT/baseline`` and ``OUT/accelerated`` (or the baseline is copied from a
finished earlier run, as it was left or kept (``kept``): baselines of big
presets take hours; it must be a baseline of the same experiment, preset,
arguments, versions and workload, see ``check_reusable_baseline``). Then ``OUT``
gets the joined tables (``flows.csv``: one row per flow both runs finished,
with ``fct_baseline``, ``fct_accelerated``, ``rel_err``; ``iterations.csv``
likewise per iteration), ``summary.json``, ``summary.md`` and the plots.
Speed and event counts come from the harness's results (``report.comparison``,
as ``wormhole-ns3 compare`` reports them); errors from the script's tables.
With ``--seeds N``, N-1 more plain runs into ``OUT/seeds/run-K`` set ns-3's own
seed-to-seed spread beside the errors (``seed_runs``).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from wormhole_ns3.core.trace import TraceKind
from wormhole_ns3.tools.experiment import plots
from wormhole_ns3.tools.experiment.child import RUN_RESULTS_FILE, SKIPS_FILE, STDOUT_FILE, ChildOptions
from wormhole_ns3.tools.experiment.kept import unpack_result
from wormhole_ns3.tools.experiment.outdir import StagedDir
from wormhole_ns3.tools.experiment.registry import Experiment, ExperimentError
from wormhole_ns3.tools.experiment.results import (
    FLOWS_FILE,
    ITERATION_COLUMNS,
    ITERATIONS_FILE,
    counted,
    read_flows,
    read_iterations,
    write_atomically,
)
from wormhole_ns3.tools.experiment.run import (
    MEMO_FIELDS,
    SUMMARY_FILE,
    check_runnable,
    execute_run,
    input_digests,
    portable_args,
    write_command,
    write_json,
    write_parquet,
)
from wormhole_ns3.tools.experiment.seed_runs import run_seeds, seed_markdown, seed_spread
from wormhole_ns3.tools.experiment.timeline import activity_line, events_by_activity
from wormhole_ns3.tools.report import comparison, error_stats, optional_parts
from wormhole_ns3.tools.seeds import Matched, SeedCase

SIDES = ("baseline", "accelerated")
#: Versions a reused baseline must share with the run it is compared to.
VERSION_FIELDS = ("ns3_version", "wormhole_ns3_version")
#: What must be equal in both runs for a task to be the same flow.
FLOW_IDENTITY = ("iteration", "collective", "group", "step", "phase", "src", "dst", "bytes")
#: Numbers of ``report.comparison`` (harness results of both runs) repeated in the summary.
HARNESS_COMPARISON = (
    "speedup", "run_wall_baseline_s", "run_wall_accelerated_s", "process_speedup", "process_wall_baseline_s",
    "process_wall_accelerated_s", "events_baseline", "events_accelerated",
    "events_ratio", "system_events", "skips", "skip_backs", "skipped_time_s", "sim_time_baseline_s",
    "sim_time_accelerated_s", "rx_bytes_exact", "packet_level_time_s", "config", "profile", "verify", "queues",
    "rtt_nrmse", "rtt_flows", "rtt_bins", "transient_memo",
)


def compare_experiment(experiment: Experiment, preset: str, out: Path, options: ChildOptions, force: bool = False,
                       reuse_baseline: Path | None = None, stop: threading.Event | None = None,
                       command: str | None = None, seeds: int | None = None) -> dict:
    """Baseline (or a reused one), accelerated, then ``seeds - 1`` more plain runs into ``out``; the summary.

    ``command``, the command line that asked for the comparison, is kept in ``command.txt``.
    """
    check_runnable(experiment, preset)
    reused = None
    if reuse_baseline is not None:
        reuse_baseline = Path(reuse_baseline)
        reused = check_reusable_baseline(reuse_baseline, experiment, preset, installed_versions())
    staged = StagedDir.create(out, force)
    folders = {side: staged.staging / side for side in SIDES}
    if reuse_baseline is not None:
        unpack_result(reuse_baseline, folders["baseline"])
    else:
        folders["baseline"].mkdir()
        execute_run(experiment, preset, folders["baseline"], replace(options, baseline=True), stop)
    folders["accelerated"].mkdir()
    try:
        accelerated = execute_run(experiment, preset, folders["accelerated"], replace(options, baseline=False), stop)
    except ExperimentError as failure:
        raise _keeping_baseline(failure, folders["baseline"]) from None
    if reuse_baseline is not None and reused is not None:
        check_same_run(reuse_baseline, reused, accelerated)
    try:
        runs = run_seeds(experiment, preset, staged.staging, options, seeds, stop) if seeds else []
    except ExperimentError as failure:
        raise _keeping_baseline(failure, folders["baseline"]) from None
    summary = write_comparison(staged.staging, experiment, preset, reuse_baseline, runs)
    write_command(staged.staging, command)
    staged.commit()
    return summary


def _keeping_baseline(failure: ExperimentError, baseline: Path) -> ExperimentError:
    """The failure of a run after the baseline, saying that the baseline can be reused."""
    keep = f"the baseline in {baseline} is complete: compare again with --reuse-baseline on it"
    return ExperimentError(str(failure), failure.exit_code, (*failure.details, keep))


def installed_versions() -> dict[str, str]:
    """The versions a run made now records (``VERSION_FIELDS``), read without starting ns-3."""
    from wormhole_ns3 import __version__
    from wormhole_ns3.runtime.loader import ns3_version

    return {"ns3_version": ns3_version(), "wormhole_ns3_version": __version__}


def check_reusable_baseline(folder: Path, experiment: Experiment, preset: str, versions: dict[str, str]) -> dict:
    """The summary of the baseline in ``folder``; ExperimentError unless it can stand for this run's baseline.

    It must be a finished baseline run of this experiment, preset and script
    arguments (input files by name and content, wherever the checkout is),
    made with these ``versions`` (``installed_versions``), and
    record its workload's digest, which ``check_same_run`` compares with the
    accelerated run's once that has made its workload.
    """
    try:
        summary = json.loads((folder / SUMMARY_FILE).read_text())
    except (OSError, ValueError):
        raise ExperimentError(f"--reuse-baseline {folder}: not a finished run (no readable {SUMMARY_FILE})") from None
    found = (summary.get("mode"), summary.get("experiment"), summary.get("preset"), summary.get("script_args"))
    wanted = ("baseline", experiment.name, preset, experiment.script_args(preset))
    if found[:3] != wanted[:3] or portable_args(found[3] or []) != portable_args(wanted[3]):
        raise ExperimentError(
            f"--reuse-baseline {folder}: it holds a run of {found[1]} preset {found[2]} in {found[0]} mode "
            f"(args {found[3]}), not the baseline of {experiment.name} preset {preset} (args {wanted[3]})"
        )
    inputs = input_digests(wanted[3])
    if inputs and summary.get("input_sha256") != inputs:
        raise ExperimentError(f"--reuse-baseline {folder}: its input files differ from this run's "
                              f"(input_sha256 {summary.get('input_sha256')} vs {inputs}): make the baseline again")
    for name, version in versions.items():
        if summary.get(name) != version:
            raise ExperimentError(f"--reuse-baseline {folder}: it was made with {name} {summary.get(name)}, "
                                  f"this install has {version}: make the baseline again")
    if "workload_sha256" not in summary:
        raise ExperimentError(f"--reuse-baseline {folder}: it records no workload_sha256 (made before runs "
                              "recorded their workload's digest): make the baseline again")
    return summary


def check_same_run(folder: Path, baseline: dict, accelerated: dict) -> None:
    """ExperimentError unless the reused baseline's versions and workload digest are the accelerated run's.

    The workload is compared once the accelerated run has made it, so that a
    changed workload generator is refused, not silently compared.
    """
    for name in (*VERSION_FIELDS, "workload_sha256"):
        if baseline.get(name) != accelerated.get(name):
            what = "workload" if name == "workload_sha256" else name
            raise ExperimentError(
                f"--reuse-baseline {folder}: its {what} differs from this run's ({name} {baseline.get(name)} "
                f"vs {accelerated.get(name)}): make the baseline again")


def write_comparison(folder: Path, experiment: Experiment, preset: str, baseline_from: Path | None,
                     seed_runs: Sequence[int] = ()) -> dict:
    """Join the two runs in ``folder`` (and the plain runs under ``seed_runs``, with the baseline); write the
    tables, summary.json, summary.md and the plots."""
    runs = {side: json.loads((folder / side / RUN_RESULTS_FILE).read_text()) for side in SIDES}
    accelerated_summary = json.loads((folder / "accelerated" / SUMMARY_FILE).read_text())
    finished = {side: read_flows(folder / side / FLOWS_FILE) for side in SIDES}
    flows = join_flows(finished["baseline"], finished["accelerated"])
    iterations = join_iterations(*(_iterations_of(folder / side) for side in SIDES))
    count_memo_episodes(iterations, folder / "accelerated" / SKIPS_FILE)
    harness = comparison(runs["baseline"], runs["accelerated"])
    seeds, spreads = seed_spread(folder, seed_runs, flows, iterations) if seed_runs else (None, [])
    fct = error_stats(flows["rel_err"])
    iteration = error_stats(iterations["rel_err"])
    summary = {
        "experiment": experiment.name,
        "preset": preset,
        "script_args": experiment.script_args(preset),
        "baseline_from": str(baseline_from) if baseline_from is not None else None,
        **{name: harness[name] for name in HARNESS_COMPARISON},
        "flows_compared": len(flows),
        "flows_finished_baseline": len(finished["baseline"]),
        "flows_finished_accelerated": len(finished["accelerated"]),
        "fct_mean_rel_err": fct["mean"],
        "fct_p99_rel_err": fct["p99"],
        "fct_max_rel_err": fct["max"],
        "iterations_compared": len(iterations),
        "iteration_time_rel_err": iteration["max"],
        "iteration_time_mean_rel_err": iteration["mean"],
        "iteration_time_mean_baseline_s": _mean(iterations["time_baseline"]),
        "iteration_time_mean_accelerated_s": _mean(iterations["time_accelerated"]),
        "stdout_identical": len({(folder / side / STDOUT_FILE).read_bytes() for side in SIDES}) == 1,
        **{name: accelerated_summary.get(name) for name in MEMO_FIELDS},
        "memo_hit_rate_after_first_iteration": _hit_rate(iterations[iterations["iteration"] > 0]),
        "events_by_activity": _events_by_activity(runs["accelerated"], finished["accelerated"]),
        "seeds": seeds.as_dict() if seeds is not None else None,
    }
    for table, name in ((flows, FLOWS_FILE), (iterations, ITERATIONS_FILE)):
        _write_csv(table, folder / name)
        write_parquet(table, folder / name)
    summary["plots"] = _draw(folder, flows, iterations, summary, runs["accelerated"].get("event_timeline"), spreads)
    write_json(folder / SUMMARY_FILE, summary)
    write_atomically(folder / "summary.md", markdown_summary(summary))
    return summary


def _events_by_activity(run: dict, flows) -> dict[str, float] | None:
    """``timeline.events_by_activity`` of the accelerated run (None if its run.json has no timeline)."""
    timeline = run.get("event_timeline")
    return events_by_activity(timeline, flows) if timeline else None


def _iterations_of(folder: Path):
    path = folder / ITERATIONS_FILE
    if path.exists():
        return read_iterations(path)
    import pandas as pd

    return pd.DataFrame(columns=ITERATION_COLUMNS, dtype=float)


def join_flows(baseline, accelerated):
    """One row per flow both runs finished: identity columns, both runs' times, relative FCT error."""
    both = baseline.merge(accelerated, on="task", suffixes=("_baseline", "_accelerated"), validate="one_to_one")
    for column in FLOW_IDENTITY:
        differ = both[f"{column}_baseline"] != both[f"{column}_accelerated"]
        if differ.any():
            task = int(both.loc[differ, "task"].iloc[0])
            raise ExperimentError(f"the two runs moved different flows: task {task} differs in its {column}")
    table = both[["task"]].copy()
    for column in FLOW_IDENTITY:
        table[column] = both[f"{column}_baseline"]
    for column in ("start", "finish", "fct"):
        for side in SIDES:
            table[f"{column}_{side}"] = both[f"{column}_{side}"]
    table["rel_err"] = (table["fct_accelerated"] - table["fct_baseline"]).abs() / table["fct_baseline"]
    return table.sort_values("task", kind="stable").reset_index(drop=True)


def join_iterations(baseline, accelerated):
    """One row per iteration both runs finished: both runs' start, finish and time, relative time error."""
    both = baseline.merge(accelerated, on="iteration", suffixes=("_baseline", "_accelerated"), validate="one_to_one")
    table = both[["iteration"]].copy()
    for column in ("start", "finish", "time"):
        for side in SIDES:
            table[f"{column}_{side}"] = both[f"{column}_{side}"]
    table["rel_err"] = (table["time_accelerated"] - table["time_baseline"]).abs() / table["time_baseline"]
    return table.sort_values("iteration", kind="stable").reset_index(drop=True)


def count_memo_episodes(iterations, trace: Path) -> None:
    """Add to each iteration the memoizable episodes the accelerated run opened in it.

    ``memo_replayed``: replayed from the store or mirrored; ``memo_simulated``:
    missed (simulated and recorded) or distrusted (simulated because the key's
    replays kept diverging); from the trace's memo rows, by start time.
    Without memo rows the columns are left out.
    """
    import pandas as pd

    rows = pd.read_csv(trace, usecols=["time", "kind"]) if trace.exists() else None
    if rows is None or not rows["kind"].isin([kind.value for kind in TraceKind if kind.memo]).any():
        return
    for column, kinds in (("memo_replayed", (TraceKind.MEMO_REPLAY, TraceKind.MEMO_MIRROR)),
                          ("memo_simulated", (TraceKind.MEMO_MISS, TraceKind.MEMO_DISTRUSTED))):
        times = rows.loc[rows["kind"].isin([kind.value for kind in kinds]), "time"]
        iterations[column] = [
            int(((times >= start) & (times < finish)).sum())
            for start, finish in zip(iterations["start_accelerated"], iterations["finish_accelerated"])
        ]


def _hit_rate(iterations) -> float | None:
    """Replayed over memoizable episodes opened in these iterations (None without memo columns)."""
    if "memo_replayed" not in iterations or not len(iterations):
        return None
    opened = int(iterations["memo_replayed"].sum() + iterations["memo_simulated"].sum())
    return int(iterations["memo_replayed"].sum()) / opened if opened else None


def _mean(column) -> float | None:
    return float(column.mean()) if len(column) else None


def _write_csv(table, path: Path) -> None:
    partial = path.with_name(path.name + ".partial")
    table.to_csv(partial, index=False, lineterminator="\n")
    partial.replace(path)


def _draw(folder: Path, flows, iterations, summary: dict, timeline: list | None,
          spreads: Sequence[Matched]) -> list[str]:
    """The plots there is data for, by file name (the seed spread's only where the plain runs have one)."""
    drawn = [plots.speedup_bars(summary, folder / "speedup.png")]
    if spreads and SeedCase(summary["seeds"]["case"]) is SeedCase.VARIES:
        drawn.append(plots.seed_spread(spreads, folder / "seed_spread.png"))
    if timeline:
        until = float(flows["finish_accelerated"].max()) if len(flows) else None
        drawn.append(plots.event_timeline(timeline, summary["events_baseline"], until, folder / "events.png"))
    if len(flows):
        drawn += [plots.fct_cdf(flows, folder / "fct_cdf.png"),
                  plots.fct_error_scatter(flows, folder / "fct_error.png")]
    if len(iterations):
        drawn.append(plots.iteration_timeline(iterations, folder / "iterations.png"))
    return sorted(path.name for path in drawn)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.3f}%"


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e3:.3f} ms"


def markdown_summary(summary: dict) -> str:
    """The headline numbers as a short Markdown page."""
    lines = [
        f"# {summary['experiment']} {summary['preset']}: accelerated vs baseline",
        "",
        "| | baseline | accelerated |",
        "|---|---:|---:|",
        f"| Run() wall time | {summary['run_wall_baseline_s']:.2f} s | "
        f"{summary['run_wall_accelerated_s']:.2f} s (speedup {summary['speedup']:.2f}x) |",
        f"| whole process, start-up included | {_seconds(summary['process_wall_baseline_s'])} | "
        f"{_seconds(summary['process_wall_accelerated_s'])} (speedup {_ratio(summary['process_speedup'])}) |",
        f"| events | {summary['events_baseline']:,} | {summary['events_accelerated']:,} "
        f"(ratio {summary['events_ratio']:.2f}x) |",
        f"| flows finished | {summary['flows_finished_baseline']} | {summary['flows_finished_accelerated']} |",
    ]
    if summary["iterations_compared"]:
        lines.append(f"| mean iteration time | {_ms(summary['iteration_time_mean_baseline_s'])} | "
                     f"{_ms(summary['iteration_time_mean_accelerated_s'])} |")
    lines += [
        "",
        f"- FCT error over {summary['flows_compared']} flows: mean {_percent(summary['fct_mean_rel_err'])}, "
        f"p99 {_percent(summary['fct_p99_rel_err'])}, max {_percent(summary['fct_max_rel_err'])}",
    ]
    if summary["iterations_compared"]:
        lines.append(f"- iteration time error over {counted(summary['iterations_compared'], 'iteration')}: "
                     f"max {_percent(summary['iteration_time_rel_err'])}, "
                     f"mean {_percent(summary['iteration_time_mean_rel_err'])}")
    if summary.get("seeds"):
        lines += seed_markdown(summary["seeds"])
    lines += [
        f"- {summary['skips']} skips covering {summary['skipped_time_s']:.6f} s of simulated time "
        f"({summary['skip_backs']} cut short)",
        f"- PacketSink totals {'exact' if summary['rx_bytes_exact'] else 'DIFFER'}; "
        f"script output {'identical' if summary['stdout_identical'] else 'DIFFERS'}",
    ]
    if summary.get("events_by_activity"):
        lines.append("- accelerated run's events, by the phases with flows running: " + activity_line(summary))
    if summary["memo_hit_rate_after_first_iteration"] is not None:
        lines.append(f"- memo episodes replayed after the first iteration: "
                     f"{summary['memo_hit_rate_after_first_iteration']:.1%}")
    if summary["memo_hits"] is not None:
        lines.append(f"- memo: {summary['memo_hits']} hits, {summary['memo_mirrored']} mirrored, "
                     f"{summary['memo_misses']} misses, {summary['memo_diverged']} diverged "
                     f"({summary['flows_resumed']} flows resumed), {summary['memo_distrusted']} "
                     f"simulated as distrusted, "
                     + (f"{summary['memo_draw_dependent']} simulated as their course depends on random draws, "
                        if summary.get("memo_draw_dependent") else "")
                     + f"{summary['memo_entries']} entries")
    fraction = (summary.get("verify") or {}).get("fraction")
    labels = {"accelerated Run()": "accelerated Run() time went to", "queue lengths": "queue lengths (--queues)",
              "RTT": "RTT (--rtt)", "error guard": f"error guard (--verify {fraction})",
              "transient memo": "transient memo (--transient-memo)"}
    lines += [f"- {labels[label]}: {text}" for label, text in optional_parts(summary)]
    if summary["baseline_from"]:
        lines.append(f"- baseline reused from {summary['baseline_from']}")
    lines += ["", "Plots: " + ", ".join(f"[{name}]({name})" for name in summary["plots"]), ""]
    return "\n".join(lines)
