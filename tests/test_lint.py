"""The gates a change passes before it lands: ruff and mypy, as pyproject.toml configures them."""

import subprocess
import sys

from conftest import REPO


def _run(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *command], cwd=REPO, capture_output=True, text=True)


def test_ruff_finds_nothing():
    done = _run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing():
    done = _run("mypy", "--no-incremental")
    assert done.returncode == 0, done.stdout + done.stderr
