"""The ``wormhole-ns3`` command line: run, compare, demo."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wormhole_ns3 import __version__
from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.runtime import native
from wormhole_ns3.runtime.headers import start_from_precompiled_header
from wormhole_ns3.tools.experiment.cli import add_experiment_command, run_experiment_command
from wormhole_ns3.tools.memo_cli import add_memo_command, run_memo_command
from wormhole_ns3.tools.options import add_config_options, add_memo_options, add_seed_options, config_from
from wormhole_ns3.tools.seeds import seed_problem


def _script_args(args: argparse.Namespace) -> list[str]:
    rest = list(args.script_args)
    return rest[1:] if rest[:1] == ["--"] else rest


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wormhole-ns3",
        description="Run ns-3 simulations with steady-state fast-forwarding.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run an ns-3 script (Python, or a C++ program .cc)")
    run.add_argument("--baseline", action="store_true", help="run plain ns-3 through the same harness")
    run.add_argument("--results", type=Path, metavar="JSON", help="write per-flow results here")
    run.add_argument("--trace", type=Path, metavar="CSV", help="write one row per skip here")
    run.add_argument("--progress", action="store_true", help="print progress on stderr")
    add_memo_options(run, "record contention episodes in this memo store, kept across runs,"
                          " and replay recorded ones")
    add_config_options(run)
    run.add_argument("script", help="the ns-3 script")
    run.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments of the script")

    compare = commands.add_parser(
        "compare", help="run baseline and accelerated in separate processes; report errors"
    )
    compare.add_argument("--json", type=Path, metavar="OUT", help="write the comparison here")
    compare.add_argument("--trace", type=Path, metavar="CSV", help="write the accelerated run's skips here")
    compare.add_argument("--progress", action="store_true", help="print progress on stderr")
    add_seed_options(compare)
    compare.add_argument("--plot", type=Path, metavar="PNG",
                         help="with --seeds: draw each flow's FCT error against ns-3's seed spread, and their CDFs")
    add_memo_options(compare, "memo store for the accelerated run (see run --memo)")
    add_config_options(compare)
    compare.add_argument("script", help="the ns-3 script")
    compare.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments of the script")

    demo = commands.add_parser("demo", help="compare the built-in DCTCP dumbbell example")
    demo.add_argument("--small", action="store_true", help="a 30-second version (4 flows of 30-60 MB)")
    demo.add_argument("--json", type=Path, metavar="OUT", help="write the comparison here")
    demo.add_argument("--trace", type=Path, metavar="CSV", help="write the accelerated run's skips here")
    add_memo_command(commands)
    add_experiment_command(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    from wormhole_ns3.memo.errors import MemoStoreError
    from wormhole_ns3.runtime.native import NativeBuildError

    try:
        return _main(argv)
    except NativeBuildError as error:
        print(f"wormhole-ns3: error: {error}", file=sys.stderr)
        return 1
    except MemoStoreError as error:
        print(f"wormhole-ns3: error: {error}", file=sys.stderr)
        return 2


#: The ``experiment`` actions that run simulations (in this process or in the ones they start).
_SIMULATING_ACTIONS = ("run", "compare", "sweep", "recheck")


def starts_ns3(args: argparse.Namespace) -> bool:
    """Whether a parsed command runs ns-3 simulations (listing, keeping, exporting and the scoreboard do not)."""
    if args.command == "experiment":
        return args.experiment_action in _SIMULATING_ACTIONS
    return args.command in ("run", "compare", "demo")


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "memo":
        return run_memo_command(args)
    if starts_ns3(args):
        # before any simulation starts, so that no side's time includes building it: every process inherits it
        start_from_precompiled_header()
    if args.command == "experiment":
        return run_experiment_command(args)
    try:
        config = config_from(args) if args.command in ("run", "compare") else AcceleratorConfig()
    except ValueError as error:
        parser.error(str(error))
    if args.command == "run":
        from wormhole_ns3.run.harness import ACCELERATED, BASELINE, RunOptions, run_script

        options = RunOptions(
            mode=BASELINE if args.baseline else ACCELERATED,
            config=config,
            results=args.results,
            trace=args.trace,
            progress=args.progress,
            memo=args.memo,
            memo_key=args.memo_key,
        )
        return run_script(args.script, _script_args(args), options)
    if args.command == "compare":
        problem = seed_problem(args.seeds, args.plot)
        if problem is not None:
            print(f"wormhole-ns3: error: {problem}", file=sys.stderr)
            return 2
    if args.command in ("compare", "demo"):
        native.build()  # here, once, so that neither run's process time includes compiling the native modules
    if args.command == "compare":
        from wormhole_ns3.tools.compare import compare_script

        return compare_script(
            args.script, _script_args(args), config, args.json, args.trace, args.progress,
            args.memo, args.memo_key, args.seeds, args.plot,
        )
    if args.command == "demo":
        from wormhole_ns3.examples import DUMBBELL_PRESETS, dumbbell_path
        from wormhole_ns3.tools.compare import compare_script

        script_args = list(DUMBBELL_PRESETS["small" if args.small else "default"])
        return compare_script(str(dumbbell_path()), script_args, config, args.json, args.trace, True)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":
    sys.exit(main())
