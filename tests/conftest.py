"""Shared helpers: run the CLI and plain Python on real ns-3 scripts in child processes.

Each ns-3 run is its own process, as a user runs it: the simulator
implementation must be chosen before ns-3's simulator exists, and a process
holds one simulator.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import pickle
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "experiments" / "scripts"
DUMBBELL = REPO / "wormhole_ns3" / "examples" / "dctcp_dumbbell.py"
#: ``wormhole-ns3`` with the ring experiment of tests/scripts registered (tests only)
EXPERIMENT_CLI = REPO / "tests" / "scripts" / "experiment_cli.py"
CLING_NOISE = "[runStaticInitializersOnce]"
#: ``wormhole-ns3`` that also pickles the memo's events with their typed facts (the ``memo_facts`` fixture)
MEMO_FACTS = REPO / "tests" / "scripts" / "memo_facts.py"
_FACTS_RUNS = itertools.count()


def pytest_configure(config):
    """Every child process, plain or accelerated, starts cling from ns-3's precompiled header (built once here)."""
    from wormhole_ns3.runtime.headers import start_from_precompiled_header

    start_from_precompiled_header()


@dataclass
class Completed:
    returncode: int
    stdout: str
    stderr: str

    @property
    def stderr_lines(self) -> list[str]:
        """stderr without cling's harmless (and randomly ordered) start-up warnings."""
        return [line for line in self.stderr.splitlines() if not line.startswith(CLING_NOISE)]


def child_environment() -> dict[str, str]:
    """This environment with the repository first on the import path."""
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _run(command: list[str], cwd: Path, timeout: float) -> Completed:
    env = child_environment()
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
    return Completed(done.returncode, done.stdout, done.stderr)


@pytest.fixture
def wormhole(tmp_path):
    """Run ``wormhole-ns3 ARGS`` in a scratch folder."""

    def run(*args: str, timeout: float = 600) -> Completed:
        return _run([sys.executable, "-m", "wormhole_ns3", *map(str, args)], tmp_path, timeout)

    return run


@pytest.fixture
def memo_facts(tmp_path):
    """Run ``wormhole-ns3 ARGS`` in a scratch folder; also hand back its memo events (SkipRecords) with their facts."""

    def run(*args: str, timeout: float = 600) -> tuple[Completed, list]:
        facts = tmp_path / f"facts-{next(_FACTS_RUNS)}.pickle"
        done = _run([sys.executable, str(MEMO_FACTS), str(facts), *map(str, args)], tmp_path, timeout)
        return done, (pickle.loads(facts.read_bytes()) if facts.exists() else [])

    return run


@pytest.fixture
def experiment_cli(tmp_path):
    """Run ``wormhole-ns3 ARGS`` with the tests' ring experiment registered, in a scratch folder."""

    def run(*args: str, timeout: float = 600) -> Completed:
        return _run([sys.executable, str(EXPERIMENT_CLI), *map(str, args)], tmp_path, timeout)

    return run


@pytest.fixture
def plain_python(tmp_path):
    """Run ``python SCRIPT ARGS`` in a scratch folder: ns-3 exactly as its users run it."""

    def run(script: Path, *args: str, timeout: float = 600) -> Completed:
        return _run([sys.executable, str(script), *map(str, args)], tmp_path, timeout)

    return run


def load_json(path: Path) -> dict:
    return json.loads(Path(path).read_text())


def steady_skips(trace: Path) -> list[dict[str, str]]:
    """The steady skips of a skip trace (a run memoizes by default: its memo decisions are rows too)."""
    with Path(trace).open() as rows:
        return [row for row in csv.DictReader(rows) if row["kind"] == "steady"]


@pytest.fixture
def ns():
    """ns-3 with the shim loaded, and a fresh simulation for each test."""
    from wormhole_ns3.runtime import loader, native

    namespace = loader.install_ns_module()
    native.load()
    namespace.Simulator.Destroy()
    yield namespace
    namespace.Simulator.Destroy()
