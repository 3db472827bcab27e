"""One ns-3 run of an experiment as a child process, through the same harness as ``wormhole-ns3 run``.

The child is ``python -m wormhole_ns3 run [--baseline] --results run.json
--trace skips.csv SCRIPT ARGS``, started with this process's own
``wormhole_ns3`` on its path, in this process's working directory. Its stdout
goes to ``stdout.txt`` in the run's folder; its stderr to ``stderr.txt``,
and also to our stderr (above the progress bar) when ``echo`` is set; the last
lines are kept to explain a failure. Stopping (Ctrl-C, SIGTERM turned into
KeyboardInterrupt, or the ``stop`` event of a sweep) terminates the child,
whose result rows so far stay where it flushed them. If this process dies
without a chance to stop it (``kill -9``), the child gets SIGTERM from the
kernel on Linux (``start_child``) instead of simulating on as an orphan.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.tools.experiment.progress import RunProgress
from wormhole_ns3.tools.experiment.registry import ExperimentError
from wormhole_ns3.tools.options import run_command
from wormhole_ns3.tools.seeds import seeded_environment

RUN_RESULTS_FILE = "run.json"
SKIPS_FILE = "skips.csv"
STDOUT_FILE = "stdout.txt"
STDERR_FILE = "stderr.txt"
#: Lines of a failed child's stderr shown with the error.
STDERR_TAIL = 15
POLL_SECONDS = 0.5
TERMINATE_GRACE_SECONDS = 10.0
#: prctl(2) option: the signal the kernel sends this process when its parent dies (from <linux/prctl.h>).
PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class ChildOptions:
    """How to run one side: accelerated or baseline, accelerator settings, memo store, ns-3's RngRun, display."""

    baseline: bool = False
    config: AcceleratorConfig = field(default_factory=AcceleratorConfig)
    memo: Path | None = None
    memo_key: Path | None = None
    #: The RngRun ns-3 is asked for (through NS_GLOBAL_VALUE); None: what this process's environment gives.
    rng_run: int | None = None
    progress: bool = False
    echo: bool = True


def harness_command(script: Path, script_args: list[str], folder: Path, options: ChildOptions) -> list[str]:
    """The ``wormhole-ns3 run`` command of one side (its options are derived from a validated config)."""
    return run_command(
        str(script), script_args, folder / RUN_RESULTS_FILE, options.baseline, options.config,
        trace=folder / SKIPS_FILE, memo=options.memo, memo_key=options.memo_key,
    )


def run_child(command: list[str], folder: Path, label: str, options: ChildOptions,
              stop: threading.Event | None = None) -> None:
    """Run the child to completion; raise ExperimentError if it fails, KeyboardInterrupt if stopped."""
    progress = RunProgress(folder, label, options.progress)
    if not options.progress and options.echo:
        progress.write(f"[wormhole] running {label} ...")
    tail: deque[str] = deque(maxlen=STDERR_TAIL)
    with (folder / STDOUT_FILE).open("wb") as stdout:
        child = start_child(command, stdout=stdout, stderr=subprocess.PIPE, env=_child_environment(options.rng_run))
        reader = threading.Thread(
            target=_copy_stderr, args=(child.stderr, folder / STDERR_FILE, tail, progress, options.echo), daemon=True
        )
        reader.start()
        waiter = stop or threading.Event()
        try:
            while child.poll() is None:
                progress.poll()
                if waiter.wait(POLL_SECONDS):
                    raise KeyboardInterrupt
        except BaseException:
            _terminate(child)
            raise
        finally:
            reader.join()
            progress.close()
    if child.returncode != 0:
        raise ExperimentError(
            f"the {label} run failed ({_exit_description(child.returncode)}); what it finished is in {folder}",
            exit_code=_exit_code(child.returncode),
            details=tuple(tail),
        )


def start_child(command: list[str], **popen_options) -> subprocess.Popen:
    """``subprocess.Popen``, for a child that must not outlive this process (see ``die_with_parent_hook``).

    Start it from the thread that waits for it: Linux signals the child when
    the thread that forked it ends, not only when the whole process does.
    """
    return subprocess.Popen(command, preexec_fn=die_with_parent_hook(), **popen_options)


def die_with_parent_hook() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to SIGTERM the child when its parent dies; None elsewhere.

    Without it a ``kill -9`` of wormhole-ns3 leaves its ns-3 child simulating
    on as an orphan. ``prctl(PR_SET_PDEATHSIG)`` is Linux's; other systems
    keep the old behaviour. libc's ``prctl`` is looked up here, in the parent,
    so the forked child only makes the call. If the parent died before that
    call, no signal will come: the child then exits at once.
    """
    if not sys.platform.startswith("linux"):
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.restype = ctypes.c_int
    parent = os.getpid()

    def die_with_parent() -> None:
        prctl(ctypes.c_int(PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGTERM))
        if os.getppid() != parent:
            os._exit(128 + signal.SIGTERM)

    return die_with_parent


def _child_environment(rng_run: int | None) -> dict[str, str]:
    """This environment, with this process's ``wormhole_ns3`` first on the child's import path (and ns-3 asked
    for RngRun ``rng_run``, if given)."""
    package_root = str(Path(__file__).resolve().parents[3])
    inherited = os.environ.get("PYTHONPATH")
    environment = {**os.environ, "PYTHONPATH": package_root + (os.pathsep + inherited if inherited else "")}
    return environment if rng_run is None else seeded_environment(environment, rng_run)


def _copy_stderr(stream, path: Path, tail: deque, progress: RunProgress, echo: bool) -> None:
    with path.open("wb") as log:
        for raw in iter(stream.readline, b""):
            log.write(raw)
            log.flush()
            line = raw.decode(errors="replace").rstrip("\r\n")
            tail.append(line)
            if echo:
                progress.write(line)
    stream.close()


def _terminate(child: subprocess.Popen) -> None:
    if child.poll() is not None:
        return
    child.terminate()
    try:
        child.wait(TERMINATE_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def _exit_description(code: int) -> str:
    if code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


def _exit_code(code: int) -> int:
    """A shell's exit code for the child's status (128 + signal for a killed child)."""
    return 128 - code if code < 0 else code

