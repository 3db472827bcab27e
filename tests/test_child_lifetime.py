"""A child run dies with wormhole-ns3: after ``kill -9`` of the parent, no simulation runs on as an orphan."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from wormhole_ns3.tools.experiment.child import die_with_parent_hook, start_child

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

ROOT = Path(__file__).resolve().parents[1]
#: The orphan-to-be: writes its pid, then sleeps far longer than the test waits.
SLEEPER = "import os, sys, time; open(sys.argv[1], 'w').write(str(os.getpid())); time.sleep(60)"
#: How the parent starts the sleeper, per helper under test; then the parent waits to be killed.
STARTERS = {
    "start_child": "from wormhole_ns3.tools.experiment.child import start_child\n"
                   "start_child(command).wait()\n",
    "compare.run_child": "from wormhole_ns3.tools.compare import run_child\n"
                         "run_child(command, 'sleeper')\n",
}
GONE_WITHIN_SECONDS = 5.0


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie nobody has reaped yet counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.parametrize("starter", STARTERS)
def test_the_child_dies_when_its_parent_is_killed(tmp_path, starter):
    pid_file = tmp_path / "child.pid"
    parent_code = textwrap.dedent(f"""\
        import sys
        command = [sys.executable, "-c", {SLEEPER!r}, {str(pid_file)!r}]
    """) + STARTERS[starter]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    parent = subprocess.Popen([sys.executable, "-c", parent_code], env=env, stderr=subprocess.DEVNULL)
    child = None
    try:
        assert wait_for(lambda: pid_file.exists() and pid_file.read_text(), 30), "the child never started"
        child = int(pid_file.read_text())
        assert alive(child)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert wait_for(lambda: not alive(child), GONE_WITHIN_SECONDS), "the child outlived its killed parent"
    finally:
        parent.kill()
        parent.wait()
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)


def test_a_child_whose_parent_lives_runs_and_ends_normally(tmp_path):
    done = start_child([sys.executable, "-c", "print('hello')"], stdout=subprocess.PIPE, text=True)
    assert done.communicate()[0] == "hello\n" and done.returncode == 0


def test_the_hook_is_linux_only(monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    assert die_with_parent_hook() is None
