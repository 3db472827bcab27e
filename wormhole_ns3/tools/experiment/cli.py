"""``wormhole-ns3 experiment list|run|compare|sweep|keep|scoreboard|recheck|export-chakra``: named experiments
into result folders, kept results, and presets as Chakra traces."""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import sys
from pathlib import Path

from wormhole_ns3.memo.store import RUN_ONLY
from wormhole_ns3.runtime import native
from wormhole_ns3.tools.experiment import registry
from wormhole_ns3.tools.experiment.child import ChildOptions
from wormhole_ns3.tools.experiment.registry import Experiment, ExperimentError
from wormhole_ns3.tools.experiment.results import counted, write_atomically
from wormhole_ns3.tools.options import add_config_options, add_memo_options, add_seed_options, config_from
from wormhole_ns3.tools.seeds import seed_problem


def add_experiment_command(commands: argparse._SubParsersAction) -> None:
    """Add ``experiment`` and its actions to the top-level command parser."""
    experiment = commands.add_parser(
        "experiment", help="run named experiments (list, run, compare, sweep), keep results, the scoreboard")
    actions = experiment.add_subparsers(dest="experiment_action", required=True, metavar="ACTION")
    actions.add_parser("list", help="the experiments and their presets")

    run = actions.add_parser("run", help="run one preset into a result folder")
    _name_and_preset(run)
    run.add_argument("--baseline", action="store_true", help="plain ns-3 through the same harness")
    run.add_argument("--out", type=Path, metavar="DIR", help="result folder (default results/NAME/PRESET/MODE)")
    _run_options(run)

    compare = actions.add_parser("compare", help="baseline and accelerated runs of a preset, errors, plots")
    _name_and_preset(compare)
    compare.add_argument("--out", type=Path, metavar="DIR", required=True, help="result folder")
    compare.add_argument("--reuse-baseline", type=Path, metavar="DIR",
                         help="take the baseline from this finished baseline run instead of running it")
    add_seed_options(compare)
    _run_options(compare)

    sweep = actions.add_parser("sweep", help="independent runs of several presets, locally or on a cluster")
    sweep.add_argument("name", metavar="NAME", help="the experiment")
    sweep.add_argument("--presets", required=True, metavar="A,B,...", help="comma-separated presets")
    sweep.add_argument("--repeat", type=int, default=1, metavar="N", help="runs of each preset (default 1)")
    sweep.add_argument("--jobs", type=int, default=1, metavar="J", help="local runs at a time (default 1)")
    sweep.add_argument("--cluster", metavar="URL", help="dask://HOST:PORT or ray://HOST:PORT instead of local jobs")
    sweep.add_argument("--baseline", action="store_true", help="plain ns-3 runs")
    sweep.add_argument("--out", type=Path, metavar="DIR", required=True, help="folder of the runs and runs.csv")
    _run_options(sweep)

    keep = actions.add_parser("keep", help="a finished run or comparison in the compact form the repository keeps")
    keep.add_argument("result", type=Path, metavar="RESULT_DIR", help="the folder of a finished run or compare")
    keep.add_argument("--into", type=Path, metavar="DIR", required=True,
                      help="the kept folder, e.g. experiments/baselines/PRESET or experiments/scoreboard/PRESET")
    keep.add_argument("--command", dest="made_by", metavar="TEXT",
                      help="the command that made the result (default: the command.txt it holds)")
    keep.add_argument("--force", action="store_true", help="replace a result already kept in --into")

    export = actions.add_parser("export-chakra",
                                help="a workload preset as MLCommons Chakra traces (for ASTRA-sim, or --chakra)")
    export.add_argument("--preset", required=True, metavar="P",
                        help="a workload preset: gpt-small, moe-small, gpt-7b-64g, ... (llm_training.py --list)")
    export.add_argument("--out", type=Path, required=True, metavar="DIR", help="the traces' folder: DIR/P.<rank>.et")
    export.add_argument("--iterations", type=int, metavar="N", help="training iterations (default: the preset's)")
    export.add_argument("--dp-buckets", type=int, metavar="N",
                        help="gradient buckets per pipeline stage (default: the preset's)")
    export.add_argument("--force", action="store_true", help="replace the traces of P already in DIR")

    scoreboard = actions.add_parser("scoreboard", help="the table of the kept comparisons, into the README")
    scoreboard.add_argument("--kept", type=Path, default=Path("experiments", "scoreboard"), metavar="DIR",
                            help="the kept comparisons, one folder each (default experiments/scoreboard)")
    scoreboard.add_argument("--readme", type=Path, default=Path("README.md"), metavar="FILE",
                            help="the file whose scoreboard markers receive the table (default README.md)")
    scoreboard.add_argument("--check", action="store_true",
                            help="change nothing; exit 2 if the README's table differs from the kept summaries")

    recheck = actions.add_parser("recheck", help="rerun kept comparisons from their command.txt; say what moved")
    recheck.add_argument("rows", nargs="*", metavar="ROW", help="kept comparisons to rerun (default: every one)")
    recheck.add_argument("--kept", type=Path, default=Path("experiments", "scoreboard"), metavar="DIR",
                         help="the kept comparisons (default experiments/scoreboard)")
    recheck.add_argument("--baselines", type=Path, default=Path("experiments", "baselines"), metavar="DIR",
                         help="kept baselines, reused where one is kept for a row (default experiments/baselines)")
    recheck.add_argument("--out", type=Path, required=True, metavar="DIR",
                         help="scratch folder of the new comparisons; DIR/recheck.json and recheck.md")


def _name_and_preset(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="the experiment (see: wormhole-ns3 experiment list)")
    parser.add_argument("--preset", metavar="P", help="the experiment's preset (default: its default preset)")
    inputs = parser.add_argument_group("inputs of your own (llm-training), instead of a preset or with it")
    inputs.add_argument("--simai", metavar="FILE", help="a SimAI / AICB workload file")
    inputs.add_argument("--chakra", metavar="DIR_OR_PREFIX",
                        help="MLCommons Chakra execution traces: PREFIX.<rank>.et, or a folder of them")
    inputs.add_argument("--hpcc-flows", metavar="FILE", help="an HPCC-ns-3 flow file (needs --topology-file)")
    inputs.add_argument("--topology-file", "--hpcc-topology", dest="topology_file", metavar="FILE",
                        help="a topology file of SimAI's generator or of HPCC-ns-3")
    inputs.add_argument("--intra-server", choices=("skip", "nvlink"),
                        help="TP collectives and NVLink: skip (the script's default) or nvlink")
    inputs.add_argument("--transport", metavar="CC", help="the script's --transport (dctcp, dcqcn, hpcc, ...)")
    inputs.add_argument("--iterations", metavar="N", help="the script's --iterations")
    inputs.add_argument("--dp-buckets", metavar="N",
                        help="the script's --dp-buckets: a preset's gradient buckets (1: the paper's shape)")


#: The input options of ``_name_and_preset``, by their attribute names.
_INPUT_OPTIONS = {"simai": "--simai", "chakra": "--chakra", "hpcc_flows": "--hpcc-flows",
                  "topology_file": "--topology-file", "intra_server": "--intra-server", "transport": "--transport",
                  "iterations": "--iterations", "dp_buckets": "--dp-buckets"}


def _experiment_and_preset(args: argparse.Namespace) -> tuple[Experiment, str]:
    """The experiment and the preset to run: a named one, or one made of the user's own inputs."""
    experiment = registry.get_experiment(args.name)
    given = {option: getattr(args, name) for name, option in _INPUT_OPTIONS.items()
             if getattr(args, name, None) is not None}
    if not given:
        return experiment, args.preset or experiment.default_preset
    return experiment.with_inputs(args.preset, given)


def _run_options(parser: argparse.ArgumentParser) -> None:
    add_memo_options(parser, "memo store of the accelerated run, kept across runs")
    parser.add_argument("--force", action="store_true", help="replace the results already in --out")
    parser.add_argument("--progress", action="store_true",
                        help="show a progress bar even when stderr is not a terminal")
    add_config_options(parser)


def run_experiment_command(args: argparse.Namespace) -> int:
    """Do the parsed ``experiment`` action; a problem is one line on stderr (and the failed script's last lines)."""
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops a run as Ctrl-C does
    try:
        return _dispatch(args)
    except ExperimentError as error:
        print(f"wormhole-ns3: error: {error}", file=sys.stderr)
        for line in error.details:
            print(f"  | {line}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("wormhole-ns3: interrupted", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def _dispatch(args: argparse.Namespace) -> int:
    if args.experiment_action == "list":
        print(experiment_table(registry.experiments().values()))
        return 0
    if args.experiment_action == "keep":
        from wormhole_ns3.tools.experiment.kept import keep_result

        kept = keep_result(args.result, args.into, args.made_by, args.force)
        print(f"kept the {kept.kind} {args.result} in {kept.folder}: {', '.join(kept.files)}")
        return 0
    if args.experiment_action == "export-chakra":
        from wormhole_ns3.tools.experiment.export import export_chakra

        print(export_chakra(args.preset, args.out, args.iterations, args.dp_buckets, args.force))
        return 0
    if args.experiment_action == "scoreboard":
        from wormhole_ns3.tools.experiment.scoreboard import update_readme

        entries = update_readme(args.kept, args.readme, args.check)
        done = "matches" if args.check else "now shows"
        print(f"{args.readme}: the scoreboard {done} the {len(entries)} kept comparisons in {args.kept}")
        return 0
    if args.experiment_action == "recheck":
        from wormhole_ns3.tools.experiment.recheck import recheck, recheck_table

        args.out.mkdir(parents=True, exist_ok=True)
        checked = recheck(args.kept, args.rows, args.baselines, args.out)
        table = recheck_table(checked)
        write_atomically(args.out / "recheck.md", table + "\n")
        write_atomically(args.out / "recheck.json", json.dumps([r.as_row() for r in checked], indent=1) + "\n")
        print(table)
        return 0 if not any(r.differences() for r in checked) else 1
    if args.experiment_action == "sweep":
        experiment = registry.get_experiment(args.name)
    else:
        experiment, preset = _experiment_and_preset(args)
    problem = seed_problem(args.seeds) if args.experiment_action == "compare" else None
    if problem is not None:
        raise ExperimentError(problem)
    options = _child_options(args)
    native.build()  # here, once, so that no run's process time includes compiling the native modules
    if args.experiment_action == "run":
        from wormhole_ns3.tools.experiment.run import mode_of, run_experiment

        out = args.out or Path("results", experiment.name, preset, mode_of(options))
        summary = run_experiment(experiment, preset, out, options, args.force, command=_command_line())
        print(f"wrote {out}: {_run_line(summary)}")
        return 0
    if args.experiment_action == "compare":
        from wormhole_ns3.tools.experiment.comparison import compare_experiment, markdown_summary

        summary = compare_experiment(experiment, preset, args.out, options, args.force, args.reuse_baseline,
                                     command=_command_line(), seeds=args.seeds)
        print(markdown_summary(summary), end="")
        print(f"wrote {args.out}")
        return 0
    from wormhole_ns3.tools.experiment.sweep import plan_sweep, sweep

    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    runs = plan_sweep(experiment, presets, args.repeat, args.out, options, args.force)
    rows = sweep(runs, args.out, args.jobs, args.cluster, _show_progress(args), args.force)
    failed = [row for row in rows if row["exit_code"] != 0]
    print(f"wrote {args.out / 'runs.csv'}: {len(rows)} runs, {len(failed)} failed")
    return failed[0]["exit_code"] if failed else 0


def _child_options(args: argparse.Namespace) -> ChildOptions:
    baseline = getattr(args, "baseline", False)
    if baseline and args.memo is not None and str(args.memo) != RUN_ONLY:
        raise ExperimentError("--memo is for accelerated runs; a --baseline run uses no memo store")
    try:
        config = config_from(args)
    except ValueError as error:
        raise ExperimentError(str(error)) from None
    sweeping = args.experiment_action == "sweep"
    return ChildOptions(
        baseline=baseline,
        config=config,
        memo=None if baseline else args.memo,
        memo_key=args.memo_key,
        progress=not sweeping and _show_progress(args),
        echo=not sweeping,
    )


def _command_line() -> str:
    """This command as a user would type it again (kept with its result in command.txt)."""
    return shlex.join(["wormhole-ns3", *sys.argv[1:]])


def _show_progress(args: argparse.Namespace) -> bool:
    return args.progress or sys.stderr.isatty()


def _run_line(summary: dict) -> str:
    mean = summary["iteration_time_mean_s"]
    timing = f" (mean {mean * 1e3:.3f} ms)" if mean is not None else ""
    return (
        f"{summary['flows_finished']} flows, {counted(summary['iterations'], 'iteration')}{timing}, "
        f"Run() {summary['run_wall_s']:.2f} s (process {summary['process_wall_s']:.2f} s), "
        f"{summary['events']:,} events"
    )


def experiment_table(registered) -> str:
    """One block per experiment: name and description, presets (default first), script."""
    registered = list(registered)
    width = max((len(experiment.name) for experiment in registered), default=0)
    lines = []
    for experiment in registered:
        lines += _experiment_lines(experiment, width)
    return "\n".join(lines)


def _experiment_lines(experiment: Experiment, width: int) -> list[str]:
    presets = [f"{experiment.default_preset} (default)"]
    presets += [name for name in experiment.presets if name != experiment.default_preset]
    missing = "" if experiment.script.is_file() else "  (not present)"
    return [
        f"{experiment.name:<{width}} {experiment.description}",
        f"{'':<{width}} presets: {', '.join(presets)}",
        f"{'':<{width}} script: {experiment.script}{missing}",
    ]
