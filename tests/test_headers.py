"""ns-3's precompiled header: cling starts from it, and what a script prints does not change."""

import os
import shutil
import subprocess
import sys

import pytest

from wormhole_ns3.runtime import headers, native
from wormhole_ns3.tools import cli

from conftest import SCRIPTS, child_environment

#: What cling knows before anything is included: an ns-3 module's class and a native module's
#: (True only when started from the header: neither the wheel's loader nor the accelerator's has run).
_KNOWN_BEFORE_ANY_INCLUDE = (
    "import cppyy; ns3 = getattr(cppyy.gbl, 'ns3', None); "
    f"print(hasattr(ns3, 'WifiHelper'), hasattr(ns3, {headers.NATIVE_CLASS!r}), hasattr(ns3, 'FlowTracker'))"
)


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


@pytest.fixture
def native_copy(monkeypatch, tmp_path):
    """The native modules read from a copy of ``native/`` (its keys recomputed), restored afterwards."""
    copy = tmp_path / "native"
    shutil.copytree(native.source_dir(), copy)
    cached = (native.modules, native.module_key, native.build_key)
    monkeypatch.setattr(native, "source_dir", lambda: copy)
    for function in cached:
        function.cache_clear()
    yield copy
    monkeypatch.undo()
    for function in cached:
        function.cache_clear()


def test_an_edited_native_header_is_never_served_from_a_stale_header(native_copy):
    before = headers.header_file()
    header = native_copy / "wormhole" / "model" / "flow-tracker.h"
    header.write_text(header.read_text() + "\n// edited\n")
    for function in (native.modules, native.module_key, native.build_key):
        function.cache_clear()
    assert headers.header_file() != before
    assert headers.header_file().parent == before.parent


def test_the_header_includes_every_native_module_as_the_loader_does():
    """In load order, by the name ``native.load()`` includes, from the staged folders it adds."""
    names = [m.name for m in native.modules()]
    assert headers.native_includes() == [f'#include "ns3/{name}-module.h"' for name in names]
    assert headers.native_include_flags() == [f"-I{native.include_dir(name)}" for name in names]
    assert names.index("wormhole") < names.index("wormhole-rdma")  # a dependency before its dependents


@pytest.mark.parametrize("argv, simulates", [
    (["run", "script.py"], True),
    (["run", "--baseline", "script.py", "--", "--x", "1"], True),
    (["compare", "script.py"], True),
    (["demo", "--small"], True),
    (["experiment", "run", "ring"], True),
    (["experiment", "compare", "ring", "--out", "o"], True),
    (["experiment", "sweep", "ring", "--presets", "a", "--out", "o"], True),
    (["experiment", "recheck", "--out", "o"], True),
    (["experiment", "list"], False),
    (["experiment", "scoreboard", "--check"], False),
    (["experiment", "keep", "r", "--into", "k"], False),
    (["experiment", "export-chakra", "--preset", "gpt-small", "--out", "o"], False),
    (["memo", "stats"], False),
])
def test_only_commands_that_run_simulations_build_the_header(argv, simulates):
    assert cli.starts_ns3(cli.build_parser().parse_args(argv)) is simulates


def test_experiment_list_does_not_wait_for_the_header(monkeypatch, capsys):
    monkeypatch.setattr(cli, "start_from_precompiled_header", lambda: pytest.fail("the header was built"))
    assert cli.main(["experiment", "list"]) == 0
    assert "llm-training" in capsys.readouterr().out


@pytest.mark.slow
def test_a_plain_script_prints_the_same_started_from_the_header_or_not(tmp_path):
    """The session's children start from the header (tests/conftest.py); a plain run without it prints the same.

    Started from it, cling knows the native modules' classes before any loader has included a header:
    the accelerator's includes are served from the header, not parsed by each process.
    """
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
    assert runs["with"][0] == "True True True" and runs["without"][0] == "False False False"
    assert runs["with"][1] == runs["without"][1] and runs["with"][1]


@pytest.mark.slow
def test_an_accelerated_run_prints_the_same_started_from_the_header_or_not(wormhole, monkeypatch):
    """cppyy's own standard header, set by hand, is a user's: left alone, so the run parses ns-3's and the native
    modules' headers itself."""
    with_header = wormhole("run", SCRIPTS / "udp_echo.py")
    without = {k: v for k, v in child_environment().items() if k != headers.PCH_VARIABLE}
    cppyys = subprocess.run([sys.executable, "-c", "import cppyy, os; print(os.environ['CLING_STANDARD_PCH'])"],
                            env=without, capture_output=True, text=True, timeout=300).stdout.strip()
    assert cppyys and cppyys != os.environ[headers.PCH_VARIABLE]
    monkeypatch.setenv(headers.PCH_VARIABLE, cppyys)
    without_header = wormhole("run", SCRIPTS / "udp_echo.py")
    assert with_header.returncode == 0 and without_header.returncode == 0, with_header.stderr + without_header.stderr
    assert with_header.stdout == without_header.stdout and with_header.stdout
