"""Run an unmodified ns-3 Python script under the accelerator, or plainly as the baseline.

The script runs in this process exactly as ``python script.py args`` would run
it (same ``sys.argv``, ``__main__``, working directory, exit code and
traceback); the only differences are the simulator implementation selected
before it starts and the hooks around its ``Simulator::Run()``.
"""

from __future__ import annotations

import builtins
import json
import os
import re
import signal
import sys
import time
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.machinery import SourceFileLoader
from pathlib import Path

from wormhole_ns3 import __version__
from wormhole_ns3.accel.controller import Controller
from wormhole_ns3.accel.verify import Guard
from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.core.ports import BoundaryPort
from wormhole_ns3.core.trace import SkipRecord, TraceKind, write_trace
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.run.session import Session, SimulationReport, watch_runs
from wormhole_ns3.runtime import implementation, loader, native, trampoline
from wormhole_ns3.runtime.boundary import Boundary
from wormhole_ns3.runtime.profile import RunProfile
from wormhole_ns3.runtime.queues import as_results

#: When this module was first imported: the fallback start of the process where /proc is missing.
_IMPORTED_AT = time.time()

ACCELERATED = "accelerated"
BASELINE = "baseline"

SIMULATOR_IMPLEMENTATION = {
    ACCELERATED: "ns3::WormholeSimulatorImpl",
    BASELINE: "ns3::WormholeBaselineSimulatorImpl",
}


@dataclass
class RunOptions:
    mode: str = ACCELERATED
    config: AcceleratorConfig = field(default_factory=AcceleratorConfig)
    results: Path | None = None
    trace: Path | None = None
    progress: bool = False
    #: Memo store to record episodes in and replay them from (accelerated runs only); a path
    #: named ``:memory:`` (memo.store.RUN_ONLY) is a store of this run only (MemoStore.in_memory).
    memo: Path | None = None
    #: File holding the shared secret that seals the memo store (None: the file $WORMHOLE_NS3_MEMO_KEY names, if set).
    memo_key: Path | None = None


def prepare(options: RunOptions) -> Session:
    """Load ns-3 and the shim, select the simulator and attach a controller, before any script code.

    The simulator implementation is selected through ns-3's environment
    (``runtime.implementation``), so that ``Config::Reset()`` returns to it.
    """
    selection = implementation.Selection(SIMULATOR_IMPLEMENTATION[options.mode])
    with selection.preselected():
        shim = native.load()
    ns = loader.install_ns_module()
    selection.confirm(ns)
    accelerate = options.mode == ACCELERATED
    if accelerate:
        # the script's Python callbacks cost a trampoline call, not a compilation each; plain runs keep cppyy's cost
        trampoline.install(loader.cppyy_module())
    store = None
    if accelerate and options.memo is not None:
        from wormhole_ns3.memo.seal import read_memo_key
        from wormhole_ns3.memo.store import RUN_ONLY, MemoStore

        if str(options.memo) == RUN_ONLY:
            store = MemoStore.in_memory()
        else:
            store = MemoStore.open(options.memo, key=read_memo_key(options.memo_key))
    profile = RunProfile() if accelerate and options.config.profile else None
    boundary = Boundary(shim.ns3, profile)
    context = memo_context(options.config)

    def make_controller(after_destroy: Callable[[], None]) -> Controller:
        return Controller(shim.ns3, options.config, accelerate, progress=options.progress, memo=store,
                          memo_context=context, boundary=boundary, after_destroy=after_destroy)

    session = Session(make_controller, store, unobserved_runs=watch_runs(ns))
    if accelerate:
        _watch_flow_monitors(ns, session)
    return session


def memo_context(config: AcceleratorConfig) -> str:
    """What besides the episode itself a memo key must contain: versions and settings."""
    from wormhole_ns3.memo.record import RECORD_FORMAT

    settings = json.dumps(config.decisive(), sort_keys=True)
    return (f"wormhole-ns3 {__version__}; ns-3 {loader.ns3_version()}; "
            f"record format {RECORD_FORMAT}; accelerator {settings}")


def _watch_flow_monitors(ns, session: Session) -> None:
    """Hand every FlowMonitor a script installs to the running simulation's tracker, so skips keep its counts right."""
    helper = ns.FlowMonitorHelper
    for name in ("Install", "InstallAll"):
        original = getattr(helper, name)

        def install(self, *args, _original=original):
            monitor = _original(self, *args)
            classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](self.GetClassifier())
            session.controller.tracker.AddFlowMonitor(self.GetMonitor(), classifier)
            return monitor

        setattr(helper, name, install)


#: ns-3 CommandLine options that print what is registered (or help) and exit the process.
_INTROSPECTION = re.compile(
    r"--?(PrintHelp|help|PrintVersion|version|PrintGroups|PrintTypeIds|PrintGlobals)|"
    r"--?(PrintGroup|PrintAttributes)=.*"
)


def introspects(argv: list[str]) -> bool:
    """True if ns-3's CommandLine will print its registry (``--PrintTypeIds``, ...) and exit."""
    return any(_INTROSPECTION.fullmatch(arg) for arg in argv)


def run_script(script: str, argv: list[str], options: RunOptions) -> int:
    """Run ``script`` with ``argv`` as ``python script argv`` would; return its exit code."""
    path = Path(script)
    if not path.is_file():
        print(f"wormhole-ns3: can't open file '{script}': no such file", file=sys.stderr)
        return 2
    unwritable = _unwritable_output(options)
    if unwritable:
        print(f"wormhole-ns3: error: {unwritable}", file=sys.stderr)
        return 2
    cxx = path.suffix in (".cc", ".cpp", ".cxx")
    try:
        if not cxx and introspects(argv):
            # the script will print ns-3's globals, TypeIds or attributes and exit, before
            # simulating: they must be plain ns-3's, with no accelerator module or setting in them
            loader.install_ns_module()
            return _run_python(path, script, argv)
        session = prepare(options)
        if cxx:
            return _run_program(session, path, argv, options)
        code = _run_python(path, script, argv)
        return _finish(session, script, argv, options, code)
    finally:
        _stop_interval_timer()


def _unwritable_output(options: RunOptions) -> str | None:
    """Why a results or trace file could not be written, found before the run rather than after it.

    Their folders are made now if missing: a run that ends hours later must not
    lose its results to a typo in a path.
    """
    for what, target in (("results", options.results), ("trace", options.trace)):
        if target is None:
            continue
        folder = Path(target).parent
        blocking = next((f for f in (folder, *folder.parents) if f.exists() and not f.is_dir()), None)
        if blocking is not None:
            return f"cannot write the {what} file {target}: {blocking} is a file, not a folder"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            return f"cannot write the {what} file {target}: its folder {folder} cannot be made ({error.strerror})"
        if Path(target).is_dir():
            return f"cannot write the {what} file {target}: it is a folder"
    return None


def _stop_interval_timer() -> None:
    """Disarm the interval timer a library left running: the script is done.

    ns-3's OpenFlow module ticks SIGALRM every 0.1 s for its clock. cppyy's
    teardown at exit restores SIGALRM's default action, and a tick after that
    killed the process (exit 142) after a run that had succeeded.
    """
    if signal.getitimer(signal.ITIMER_REAL)[1] > 0:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _run_python(path: Path, script: str, argv: list[str]) -> int:
    """Run a Python script as ``python script argv`` would; return its exit code."""
    saved_argv = sys.argv
    sys.argv = [script, *argv]
    sys.path.insert(0, str(path.resolve().parent))
    code = 0
    try:
        _exec_main(script)
    except SystemExit as exit_:
        code = _exit_code(exit_)
    except BaseException as error:  # noqa: BLE001 - shown exactly as Python shows it
        _print_script_traceback(error, path)
        code = 1
    finally:
        sys.argv = saved_argv
        if sys.path and sys.path[0] == str(path.resolve().parent):
            sys.path.pop(0)
        sys.stdout.flush()
    return code


def _exec_main(script: str) -> None:
    """Run a file as ``__main__`` as ``python script`` does.

    ``__file__`` is the absolute path and so are the traceback's file names,
    while ``sys.argv[0]`` stays as typed (``runpy.run_path`` would set it to
    the path it is given).
    """
    filename = os.path.abspath(script)
    code = compile(Path(filename).read_bytes(), filename, "exec")
    main = types.ModuleType("__main__")
    main.__dict__.update(__file__=filename, __cached__=None, __builtins__=builtins,
                         __loader__=SourceFileLoader("__main__", filename))
    saved = sys.modules.get("__main__")
    sys.modules["__main__"] = main
    try:
        exec(code, main.__dict__)
    finally:
        if saved is not None:
            sys.modules["__main__"] = saved


def _run_program(session: Session, path: Path, argv: list[str], options: RunOptions) -> int:
    from wormhole_ns3.runtime.cxx import run_program

    sys.stdout.flush()
    code = run_program(path, argv)
    return _finish(session, str(path), argv, options, code)


def _finish(session: Session, script: str, argv: list[str], options: RunOptions, code: int) -> int:
    """Report an accelerator failure loudly, else write the results and trace; close the memo."""
    try:
        return _report(session, script, argv, options, code)
    finally:
        session.close()


def _report(session: Session, script: str, argv: list[str], options: RunOptions, code: int) -> int:
    report = session.report()
    if report.error is not None:
        print(
            f"wormhole-ns3: internal error in the accelerator, results are not valid: "
            f"{type(report.error).__name__}: {report.error}",
            file=sys.stderr,
        )
        traceback.print_exception(report.error, file=sys.stderr)
        return 70
    session.say_fallback(report)
    if options.results is not None:
        write_results(session, report, script, argv, options, code)
    if options.trace is not None:
        write_trace(list(report.trace), options.trace)
    return code


def _exit_code(exit_: SystemExit) -> int:
    if exit_.code is None:
        return 0
    if isinstance(exit_.code, int):
        return exit_.code
    print(exit_.code, file=sys.stderr)
    return 1


def _print_script_traceback(error: BaseException, script: Path) -> None:
    """Print the traceback from the script's first frame on, as ``python script.py`` would."""
    tb = error.__traceback__
    target = str(script.resolve())
    while tb is not None and os.path.realpath(tb.tb_frame.f_code.co_filename) != target:
        tb = tb.tb_next
    traceback.print_exception(type(error), error, tb or error.__traceback__)


def process_wall() -> float:
    """Seconds since this process started: what the user waits for, not only ``Run()``.

    It includes Python's start-up, loading ns-3 and the native modules (and
    building them after an upgrade), the controller's warm-up, opening the memo
    store and the script's own set-up. Read from the kernel's record of the
    process start (Linux); elsewhere, from this module's import.
    """
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(uptime - ticks / os.sysconf("SC_CLK_TCK"), 0.0)
    except (OSError, ValueError, IndexError):
        return time.time() - _IMPORTED_AT


def results_dict(session: Session, report: SimulationReport, script: str, argv: list[str], options: RunOptions,
                 code: int) -> dict:
    """run.json: the process's report (every simulation of the script, numbered on), its settings and outcome."""
    snapshot = report.snapshot
    skips = report.skips
    memo = memo_results(report, session.memo_store)
    process = process_wall()
    return {
        "wormhole_ns3_version": __version__,
        "ns3_version": loader.ns3_version(),
        "mode": options.mode,
        "script": script,
        "argv": argv,
        "exit_code": code,
        "fallback": fallback_reason(report, options.mode),
        "watchdog": "; ".join(report.watchdog) or None,
        "config": options.config.as_dict(),
        # what ns-3's random streams ran under: compare --seeds asks for other runs through
        # NS_GLOBAL_VALUE, and a script that calls RngSeedManager.SetRun itself overrides that
        "rng_seed": int(session.controller.ns3.RngSeedManager.GetSeed()),
        "rng_run": int(session.controller.ns3.RngSeedManager.GetRun()),
        "sample_period_s": report.sample_period,
        "runs": report.runs,
        "run_wall_s": report.run_wall,
        "process_wall_s": process,
        "events": snapshot.events if snapshot else 0,
        "system_events": snapshot.system_events if snapshot else 0,
        "sim_time_s": snapshot.sim_time if snapshot else 0.0,
        "skips": len(skips),
        "skip_backs": report.reverts,
        "skipped_time_s": sum(r.dt for r in skips),
        "events_moved": sum(r.events_moved for r in skips),
        "events_avoided_by_skip": sum(r.events_avoided for r in skips),
        "packet_level_time_s": dict(sorted(report.packet_level_time.items())),
        "unskippable_flows": {str(f): why for f, why in sorted(report.unskippable.items())},
        **memo,
        "events_avoided": sum(r.events_avoided for r in skips) + (memo["events_avoided_by_memo"] or 0),
        "profile": profile_results(session.controller.boundary, report.run_wall, process),
        "python_callbacks": trampoline.results(loader.cppyy_module()),
        "verify": verify_results(session.controller.guard),
        "transient_memo": transient_results(report.trace) if options.config.transient_memo else None,
        "queues": as_results(snapshot.queues) if snapshot and snapshot.queues is not None else None,
        "event_timeline": snapshot.event_timeline if snapshot else None,
        # every field of a FlowResult is a number, a string or a list of numbers: a shallow copy
        # serializes as asdict's deep one does, which took 1 s of moe-8x7b-64g's 99,200 flows
        "flows": [dict(vars(f)) for f in (snapshot.flows if snapshot else [])],
    }


def transient_results(trace: tuple[SkipRecord, ...]) -> dict[str, float]:
    """run.json's ``transient_memo``: its decisions by kind, and the events its restores avoided."""
    kinds = (TraceKind.TRANSIENT_HIT, TraceKind.TRANSIENT_MISS, TraceKind.TRANSIENT_REFUSED,
             TraceKind.TRANSIENT_RECORDED, TraceKind.TRANSIENT_ABANDONED)
    counts = {kind.value.removeprefix("transient-"): sum(r.kind is kind for r in trace) for kind in kinds}
    hits = [r for r in trace if r.kind is TraceKind.TRANSIENT_HIT]
    return {**counts, "events_avoided": sum(r.events_avoided for r in hits),
            "skipped_time_s": sum(r.dt for r in hits)}


#: run.json's fallback of an accelerated run in which no Simulator::Run() reached the accelerator.
NOTHING_SIMULATED = ("no Simulator::Run() call ran under the accelerator's simulator: "
                     "nothing was simulated, so nothing was accelerated")


def fallback_reason(report: SimulationReport, mode: str) -> str | None:
    """Why (some of) the run was not what its mode says, or None.

    An accelerated run with no run at all says so too, rather than "accelerated,
    0 runs": a script that simulates nothing, or a program whose simulations the
    harness could not see. Only run.json says it: stderr speaks of simulations
    that ran plainly, and a script that ran none prints what it prints plainly.
    """
    if report.fallback:
        return "; ".join(report.fallback)
    if mode == ACCELERATED and report.runs == 0:
        return NOTHING_SIMULATED
    return None


def verify_results(guard: Guard | None) -> dict | None:
    """What the error guard measured (None unless ``--verify``): per kind, its checks and estimate."""
    if guard is None or guard.fraction <= 0:
        return None
    return guard.results()


def profile_results(boundary: BoundaryPort, run_wall: float, process_wall: float) -> dict | None:
    """Where Run() wall time went, by section, with the calls timed (None unless ``--profile``).

    Only the cppyy boundary (``prepare`` made it) times anything: a test's fake profiles nothing.
    ``startup_s`` is the process's wall time outside every Run() (loading ns-3 and the
    native modules, the script's set-up, writing results): what a user waits for beside the split.
    """
    profile = boundary.profile if isinstance(boundary, Boundary) else None
    if profile is None:
        return None
    return {
        "seconds": profile.split(run_wall),
        "startup_s": max(process_wall - run_wall, 0.0),
        "calls": {str(section): n for section, n in profile.calls.items()},
        "entries": {"accelerator": profile.callback_entries, "script": profile.script_entries},
    }


def memo_results(report: SimulationReport, store: MemoStore | None) -> dict:
    """Memo counters of a run (None when it ran without a memo store)."""
    stats = report.memo
    if stats is None or store is None:
        return {key: None for key in (
            "memo_path", "memo_hits", "memo_mirrored", "memo_misses", "memo_recorded", "memo_diverged",
            "memo_foreseen", "memo_distrusted", "memo_draw_dependent",
            "memo_entries", "flows_replayed", "flows_resumed", "events_avoided_by_memo", "memo_ends",
        )}
    return {
        "memo_path": None if store.run_only else str(store.path),
        "memo_hits": stats.hits,
        "memo_mirrored": stats.mirrored,
        "memo_misses": stats.misses,
        "memo_recorded": stats.recorded,
        "memo_diverged": stats.diverged,
        "memo_foreseen": stats.foreseen,
        "memo_distrusted": stats.distrusted,
        "memo_draw_dependent": stats.draw_dependent,
        "memo_entries": store.stats().entries,
        "flows_replayed": stats.flows_replayed,
        "flows_resumed": stats.flows_resumed,
        "events_avoided_by_memo": stats.events_avoided,
        # replayed completions' last ACKs (memo/owed.py): owed, sent at once, paid later in
        # their instant, met late
        "memo_ends": {"owed": stats.ends_owed, "sent": stats.ends_sent, "paid": stats.ends_paid,
                      "late": stats.ends_late},
    }


def write_results(session: Session, report: SimulationReport, script: str, argv: list[str], options: RunOptions,
                  code: int) -> None:
    """Write the run's results as JSON, atomically (``options.results`` is set).

    Unindented: json's C encoder writes it, where an indented document goes through
    its Python one (1.4 s against 0.3 s for moe-8x7b-64g's 99,200 flows).
    """
    assert options.results is not None
    path = Path(options.results)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(results_dict(session, report, script, argv, options, code)))
    partial.replace(path)
