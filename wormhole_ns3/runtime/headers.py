"""ns-3's and the accelerator's headers parsed once: a precompiled header the C++ interpreter starts from.

Every process that loads ns-3's bindings has cling parse the headers of the
modules it includes: about 7 s of CPU for the wheel's ``from ns import ns``
(every module), before a single event runs; the accelerator's loader then has
it parse the native modules' headers (``native.load()``). A run, a baseline,
each side of a ``compare`` and each test's child process pays it again. cling
can instead start from a precompiled header (cppyy reads it from
``CLING_STANDARD_PCH``); this module builds one holding the standard headers
cppyy's own holds, exactly what the wheel's loader has cling parse (its
defines and every module's header, recorded from a run of it), then every
native module's header as ``native.load()`` includes it (from the same staged
folders), so an ``#include`` of any of them afterwards is found already parsed.

What the interpreter knows is the same as after the wheel's loader and the
native modules' includes: the same headers, the same defines, parsed by the
same cling, in the same order. Only declarations come from the header: the
libraries, their static initializers and so everything a simulation does are
untouched, and a native library is still loaded by ``native.load()`` before
anything of it is called (a plain script that never loads one only has its
classes declared).

The header is built once per installation and native build (ns-3's headers,
the native modules' key as their libraries are keyed, the cling version and
its flags make its key) into the native modules' cache, by cppyy's own
``makepch.py``, and is used only once a plain ``from ns import ns`` has
started from it knowing the accelerator's classes. A build that fails is
remembered and the interpreter starts as before: a slower start, never a
different run. A ``CLING_STANDARD_PCH`` the user set is left alone.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from wormhole_ns3.runtime import loader, native

#: cppyy's environment variable naming the precompiled header cling starts from.
PCH_VARIABLE = "CLING_STANDARD_PCH"

#: The accelerator's simulator: a class the header declares before anything includes a native module's header.
NATIVE_CLASS = "WormholeSimulatorImpl"

#: Ask ``from ns import ns`` for a type of the core module, and cling for a native class it was never told to
#: include: a header cling could not start from, or one without the native modules, fails it.
_CHECK = ("from ns import ns; import cppyy; assert ns.Simulator.Now().GetSeconds() == 0; "
          f"assert hasattr(cppyy.gbl.ns3, {NATIVE_CLASS!r})")


def cling_arguments() -> str:
    """The extra arguments cppyy gives cling in this environment (``EXTRA_CLING_ARGS`` or its defaults)."""
    if "EXTRA_CLING_ARGS" in os.environ:
        return os.environ["EXTRA_CLING_ARGS"]
    from cppyy_backend import loader as backend  # sets the variable it reads: on a copy

    saved = dict(os.environ)
    try:
        backend.set_cling_compile_options(True)
        return os.environ["EXTRA_CLING_ARGS"]
    finally:
        os.environ.clear()
        os.environ.update(saved)


#: Run in a child: the wheel's own loader, its includes and defines written out in its order, as C++.
_RECORD = """
import sys, cppyy
lines = []
include, execute = cppyy.include, cppyy.cppexec
cppyy.include = lambda header: (lines.append(f'#include "{header}"'), include(header))[1]
cppyy.cppexec = lambda code: (lines.append(code.strip()), execute(code))[1]
from ns import ns
open(sys.argv[1], "w").write("\\n".join(line for line in lines if line) + "\\n")
"""


def record_header(output: Path, env: dict[str, str]) -> str:
    """Write what the wheel's ``from ns import ns`` has cling parse (its defines and includes, in order) to ``output``.

    Returns why it could not, or an empty string.
    """
    done = subprocess.run([sys.executable, "-c", _RECORD, str(output)], env=env, capture_output=True, text=True)
    return f"the wheel's loader failed: {done.stderr.strip()[-500:]}" if done.returncode else ""


def native_includes() -> list[str]:
    """What ``native.load()`` has cling parse after ns-3's headers: each native module's header, in load order."""
    return [f'#include "ns3/{m.name}-module.h"' for m in native.modules()]


def native_include_flags() -> list[str]:
    """The staged folders ``native.load()`` adds to cling's include path (keyed, so never edited in place)."""
    return [f"-I{native.include_dir(m.name)}" for m in native.modules()]


def header_key() -> str:
    """What the precompiled header depends on: ns-3's headers as installed, the native modules' key (their
    sources, as their libraries are keyed, so an edited native header never meets a stale header), the cling,
    its arguments, the text."""
    from cppyy_backend import __version__ as cling_version

    include = loader.ns3_prefix() / "include" / "ns3"
    digest = hashlib.sha256()
    loader_file = loader.ns3_prefix() / "ns" / "__init__.py"
    for part in (str(include), cling_version, cling_arguments(), loader_file.read_text(), _RECORD, sys.version,
                 native.build_key(), *native_includes()):
        digest.update(part.encode() + b"\0")
    for header in sorted(include.glob("*.h")):
        stat = header.stat()
        digest.update(f"{header.name} {stat.st_size} {stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def header_file() -> Path:
    """Where this installation's precompiled header is (or will be) kept."""
    return native.cache_dir() / "headers" / f"ns{loader.ns3_version()}-{header_key()}.pch"


def _failed_marker(pch: Path) -> Path:
    return pch.with_suffix(".failed")


def _failure(step: str, done: subprocess.CompletedProcess[str]) -> str:
    return f"{step} exited with {done.returncode}: {done.stderr.strip()[-500:]}" if done.returncode else ""


def _make(partial: Path, env: dict[str, str]) -> str:
    """Record the wheel's header, add the native modules', precompile it into ``partial`` and start ns-3 from it;
    return why not, or ''."""
    header = partial.with_suffix(".h")
    why = record_header(header, env)
    if why:
        return why
    with open(header, "a") as text:
        text.write("\n".join(native_includes()) + "\n")
    backend = loader.package_dir("cppyy_backend", "pip install ns3 (it brings cppyy)")
    makepch = [
        sys.executable,
        str(backend / "etc" / "dictpch" / "makepch.py"),
        str(partial),
        f"-I{loader.ns3_prefix() / 'include'}",
        *native_include_flags(),
        str(header),
    ]
    why = _failure("makepch.py", subprocess.run(makepch, cwd=backend, env=env, capture_output=True, text=True))
    if why:
        return why
    started = subprocess.run(
        [sys.executable, "-c", _CHECK], env={**env, PCH_VARIABLE: str(partial)}, capture_output=True, text=True
    )
    return _failure("starting ns-3 from it", started)


def build(pch: Path) -> bool:
    """Build ``pch`` and check a plain ``from ns import ns`` starts from it; on failure, say why beside it.

    Concurrent processes wait for one build (a lock beside the file); the file
    appears whole (written under another name, then renamed) or not at all.
    """
    pch.parent.mkdir(parents=True, exist_ok=True)
    with open(pch.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if pch.exists() or _failed_marker(pch).exists():
            return pch.exists()
        with tempfile.TemporaryDirectory(dir=pch.parent, prefix=".build-") as work:
            partial = Path(work) / pch.name
            why = _make(partial, {**os.environ, "EXTRA_CLING_ARGS": cling_arguments()})
            if why:
                _failed_marker(pch).write_text(why + "\n")
                return False
            os.replace(partial, pch)
    return True


def start_from_precompiled_header() -> Path | None:
    """Have cling, not yet started in this process, start from ns-3's precompiled header; build it if missing.

    Returns the header used, or None (cppyy already imported, the user's own
    ``CLING_STANDARD_PCH``, or a build that failed: cling starts as before).
    The variable is inherited by the processes this one starts.
    """
    if "cppyy" in sys.modules or PCH_VARIABLE in os.environ:
        return None
    try:
        pch = header_file()
        if not pch.exists() and not _failed_marker(pch).exists():
            print(f"wormhole-ns3: parsing ns-3's headers once into {pch} (about a minute)", file=sys.stderr)
            if not build(pch):
                why = _failed_marker(pch)
                print(f"wormhole-ns3: ns-3 starts without it, as before: {why.read_text().strip()} ({why})",
                      file=sys.stderr)
    except (OSError, ImportError, subprocess.SubprocessError, native.NativeBuildError):
        return None
    if not pch.exists():
        return None
    os.environ[PCH_VARIABLE] = str(pch)
    return pch
