"""Build the C++ shim in ``native/`` against the installed ns-3 and load it.

The library is compiled once with the system compiler and cached under a key
made of the sources, the ns-3 version and the compiler, so later processes only
``dlopen`` it (0.1 s instead of several seconds of JIT at every start).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from . import loader
from .packaged import packaged_dir

#: ns-3 modules the shim links against.
LINKED_MODULES = (
    "core", "network", "internet", "applications", "flow-monitor", "traffic-control", "point-to-point"
)

#: The wheel's own compile definitions (lib64/cmake/ns3/ns3Targets.cmake).
NS3_DEFINES = ("NS3_LOG_ENABLE", "NS3_ASSERT_ENABLE", "NS3_BUILD_PROFILE_RELEASE", "__LINUX__")


class NativeBuildError(RuntimeError):
    """The shim could not be compiled."""


def source_dir() -> Path:
    """Return the folder holding the shim's sources (``native/`` of the repository)."""
    return packaged_dir("native", "wormhole-module.h")


def sources(root: Path | None = None) -> list[Path]:
    root = root or source_dir()
    return sorted(root.glob("model/*.cc")) + sorted(root.glob("helper/*.cc"))


def headers(root: Path | None = None) -> list[Path]:
    root = root or source_dir()
    return sorted(root.glob("*.h")) + sorted(root.glob("model/*.h")) + sorted(root.glob("helper/*.h"))


def compiler() -> str:
    cxx = os.environ.get("CXX", "g++")
    path = shutil.which(cxx)
    if path is None:
        raise NativeBuildError(
            f"no C++ compiler: '{cxx}' is not on PATH (install g++, e.g. apt-get install g++)"
        )
    return path


def compile_flags() -> list[str]:
    prefix = loader.ns3_prefix()
    return [
        "-std=c++20",
        "-O2",
        "-fPIC",
        *(f"-D{d}" for d in NS3_DEFINES),
        f"-I{prefix / 'include'}",
        f"-I{source_dir()}",
    ]


def link_flags(modules: tuple[str, ...] = LINKED_MODULES) -> list[str]:
    lib = loader.ns3_prefix() / "lib64"
    version = loader.ns3_version()
    return [f"-L{lib}", f"-Wl,-rpath,{lib}", *(f"-lns{version}-{m}" for m in modules)]


@cache
def build_key() -> str:
    """Hash of everything the compiled library depends on."""
    digest = hashlib.sha256()
    for path in headers() + sources():
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    digest.update(loader.ns3_version().encode())
    digest.update(" ".join(compile_flags() + link_flags()).encode())
    version = subprocess.run([compiler(), "--version"], capture_output=True, text=True).stdout
    digest.update(version.encode())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    root = os.environ.get("WORMHOLE_NS3_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "wormhole-ns3"
    )
    return Path(root)


def library_file() -> Path:
    return cache_dir() / f"libwormhole-ns{loader.ns3_version()}-{build_key()}.so"


def compile_shared(
    sources: list[Path], output: Path, flags: list[str], modules: tuple[str, ...], what: str
) -> Path:
    """Compile sources into the shared library ``output`` unless it exists; return its path.

    The compiler writes a private file that is then renamed, so concurrent
    builders never load half a library. A failure raises NativeBuildError
    naming ``what`` and the compiler's first error line.
    """
    if output.exists():
        return output
    output.parent.mkdir(parents=True, exist_ok=True)
    fd, partial = tempfile.mkstemp(dir=output.parent, suffix=".so.partial")
    os.close(fd)
    command = [compiler(), *flags, "-shared", *map(str, sources), "-o", partial]
    command += link_flags(modules)
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        os.unlink(partial)
        first_error = next(
            (line for line in result.stderr.splitlines() if "error" in line), result.stderr[-500:]
        )
        raise NativeBuildError(f"{what} failed: {first_error}")
    os.replace(partial, output)
    return output


def build(output: Path | None = None) -> Path:
    """Compile the shim unless a library for the current key exists; return its path."""
    return compile_shared(
        sources(), output or library_file(), compile_flags(), LINKED_MODULES,
        "building the wormhole shim",
    )


@dataclass(frozen=True)
class Shim:
    """The loaded shim: ``cppyy.gbl.ns3`` with the wormhole classes in it."""

    library: Path
    ns3: object


@cache
def load() -> Shim:
    """Load ns-3's base modules and the shim into this process (once)."""
    loader.load_ns()
    cppyy = loader.cppyy_module()
    library = build()
    cppyy.add_include_path(str(source_dir()))
    cppyy.include("wormhole-module.h")
    cppyy.load_library(str(library))
    return Shim(library=library, ns3=cppyy.gbl.ns3)
