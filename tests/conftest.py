"""Shared helpers: run the CLI and plain Python on real ns-3 scripts in child processes.

Each ns-3 run is its own process, as a user runs it: the simulator
implementation must be chosen before ns-3's simulator exists, and a process
holds one simulator.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "experiments" / "scripts"
DUMBBELL = REPO / "wormhole_ns3" / "examples" / "dctcp_dumbbell.py"
CLING_NOISE = "[runStaticInitializersOnce]"


@dataclass
class Completed:
    returncode: int
    stdout: str
    stderr: str

    @property
    def stderr_lines(self) -> list[str]:
        """stderr without cling's harmless (and randomly ordered) start-up warnings."""
        return [line for line in self.stderr.splitlines() if not line.startswith(CLING_NOISE)]


def _run(command: list[str], cwd: Path, timeout: float) -> Completed:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
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
def plain_python(tmp_path):
    """Run ``python SCRIPT ARGS`` in a scratch folder: ns-3 exactly as its users run it."""

    def run(script: Path, *args: str, timeout: float = 600) -> Completed:
        return _run([sys.executable, str(script), *map(str, args)], tmp_path, timeout)

    return run


def load_json(path: Path) -> dict:
    return json.loads(Path(path).read_text())
