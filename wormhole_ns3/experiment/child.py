"""One ns-3 run of an experiment as a child process, through the same harness as ``wormhole-ns3 run``.

The child is ``python -m wormhole_ns3 run [--baseline] --results run.json
--trace skips.csv SCRIPT ARGS``, started with this process's own
``wormhole_ns3`` on its path, in this process's working directory. Its stdout
goes to ``stdout.txt`` in the run's folder; its stderr to ``stderr.txt``,
and also to our stderr (above the progress bar) when ``echo`` is set; the last
lines are kept to explain a failure. Stopping (Ctrl-C, SIGTERM turned into
KeyboardInterrupt, or the ``stop`` event of a sweep) terminates the child,
whose result rows so far stay where it flushed them.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import threading
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ..compare import child_command
from ..config import AcceleratorConfig
from .progress import RunProgress
from .registry import ExperimentError

RUN_RESULTS_FILE = "run.json"
SKIPS_FILE = "skips.csv"
STDOUT_FILE = "stdout.txt"
STDERR_FILE = "stderr.txt"
#: Lines of a failed child's stderr shown with the error.
STDERR_TAIL = 15
POLL_SECONDS = 0.5
TERMINATE_GRACE_SECONDS = 10.0


@dataclass(frozen=True)
class ChildOptions:
    """How to run one side: accelerated or baseline, accelerator settings, memo store, display."""

    baseline: bool = False
    config: AcceleratorConfig = field(default_factory=AcceleratorConfig)
    memo: Path | None = None
    progress: bool = False
    echo: bool = True


def harness_command(script: Path, script_args: list[str], folder: Path, options: ChildOptions) -> list[str]:
    """The ``wormhole-ns3 run`` command of one side, checked by the parser the child will use."""
    command = child_command(
        str(script), script_args, folder / RUN_RESULTS_FILE, options.baseline, options.config,
        trace=folder / SKIPS_FILE, memo=options.memo,
    )
    _check_run_options(command[3:])
    return command


def _check_run_options(run_argv: list[str]) -> None:
    """Fail now, in one line, if ``wormhole-ns3 run`` would reject these options (before hours of baseline)."""
    from ..cli import build_parser  # here: the command line imports this package

    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            build_parser().parse_args(run_argv)
    except SystemExit:
        problem = errors.getvalue().strip().splitlines()[-1].split("error: ", 1)[-1]
        raise ExperimentError(f"wormhole-ns3 run would refuse these options: {problem}") from None


def run_child(command: list[str], folder: Path, label: str, options: ChildOptions,
              stop: threading.Event | None = None) -> None:
    """Run the child to completion; raise ExperimentError if it fails, KeyboardInterrupt if stopped."""
    progress = RunProgress(folder, label, options.progress)
    if not options.progress and options.echo:
        progress.write(f"[wormhole] running {label} ...")
    tail: deque[str] = deque(maxlen=STDERR_TAIL)
    with (folder / STDOUT_FILE).open("wb") as stdout:
        child = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, env=_child_environment())
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


def _child_environment() -> dict[str, str]:
    """This environment, with this process's ``wormhole_ns3`` first on the child's import path."""
    package_root = str(Path(__file__).resolve().parent.parent.parent)
    inherited = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": package_root + (os.pathsep + inherited if inherited else "")}


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

