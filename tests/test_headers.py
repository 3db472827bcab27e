"""ns-3's precompiled header: cling starts from it, and what a script prints does not change."""

import os
import subprocess
import sys

import pytest

from wormhole_ns3.runtime import headers

from conftest import SCRIPTS, child_environment

#: True only when cling started knowing a module's classes that nothing included (the header's, not the wheel's).
_KNOWN_BEFORE_ANY_INCLUDE = "import cppyy; print(hasattr(cppyy.gbl, 'ns3') and hasattr(cppyy.gbl.ns3, 'WifiHelper'))"


def _without_cppyy(monkeypatch):
    monkeypatch.delitem(sys.modules, "cppyy", raising=False)
    monkeypatch.delenv(headers.PCH_VARIABLE, raising=False)


def test_a_users_own_precompiled_header_is_left_alone(monkeypatch):
    _without_cppyy(monkeypatch)
    monkeypatch.setenv(headers.PCH_VARIABLE, "none")
    assert headers.start_from_precompiled_header() is None
    assert os.environ[headers.PCH_VARIABLE] == "none"


def test_a_failed_build_is_not_tried_again_and_cling_starts_as_before(monkeypatch, tmp_path):
    _without_cppyy(monkeypatch)
    monkeypatch.setenv("WORMHOLE_NS3_CACHE", str(tmp_path))
    pch = headers.header_file()
    pch.parent.mkdir(parents=True)
    pch.with_suffix(".failed").write_text("makepch.py exited with 1: no compiler\n")
    monkeypatch.setattr(headers, "build", lambda _: pytest.fail("a failed build was tried again"))
    assert headers.start_from_precompiled_header() is None
    assert headers.PCH_VARIABLE not in os.environ


def test_the_header_is_keyed_by_clings_arguments(monkeypatch):
    monkeypatch.setenv("EXTRA_CLING_ARGS", "-O2")
    optimized = headers.header_file()
    monkeypatch.setenv("EXTRA_CLING_ARGS", "-O0")
    assert headers.header_file() != optimized
    assert headers.header_file().parent == optimized.parent


def test_cling_arguments_leave_the_environment_as_it_was(monkeypatch):
    monkeypatch.delenv("EXTRA_CLING_ARGS", raising=False)
    before = dict(os.environ)
    assert "-O2" in headers.cling_arguments()
    assert dict(os.environ) == before


@pytest.mark.slow
def test_a_plain_script_prints_the_same_started_from_the_header_or_not(tmp_path):
    """The session's children start from the header (tests/conftest.py); a plain run without it prints the same."""
    used = os.environ[headers.PCH_VARIABLE]
    assert used == str(headers.header_file())
    without = {k: v for k, v in child_environment().items() if k != headers.PCH_VARIABLE}
    runs = {}
    for name, env in (("with", child_environment()), ("without", without)):
        known = subprocess.run([sys.executable, "-c", _KNOWN_BEFORE_ANY_INCLUDE], env=env, capture_output=True,
                               text=True, timeout=300)
        script = subprocess.run([sys.executable, str(SCRIPTS / "udp_echo.py")], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=300)
        assert script.returncode == 0, script.stderr
        runs[name] = (known.stdout.strip(), script.stdout)
    assert runs["with"][0] == "True" and runs["without"][0] == "False"
    assert runs["with"][1] == runs["without"][1] and runs["with"][1]
