"""Build the C++ modules in ``native/`` against the installed ns-3 and load them.

``native/`` holds ns-3 contrib modules, each a folder with ``model/``,
``helper/``, ``test/``, ``doc/``, a ``<module>-module.h`` and a
``CMakeLists.txt`` (ns-3's ``build_lib``). The same CMakeLists drive this
build: its ``SOURCE_FILES``, ``HEADER_FILES``, ``TEST_SOURCES`` and
``LIBRARIES_TO_LINK`` (``${lib<m>}`` of another folder is a dependency module,
any other an ns-3 module).

Each module becomes one shared library, compiled once with the system compiler
and cached under a key of its own sources, its dependencies' keys, the ns-3
version, the flags and the compiler, so later processes only ``dlopen`` it.
Its headers are staged as ``<cache>/include/<module>-<key>/ns3/*.h`` (the layout
an ns-3 build gives them), and a module compiles against its own and its
dependencies' staged headers only, so an include that breaks the dependency
graph fails here as it would in an ns-3 tree. ``load()`` loads the modules in
dependency order into cppyy; ``run_tests()`` runs their ns-3 TestSuites.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from wormhole_ns3.runtime import loader
from wormhole_ns3.runtime.packaged import packaged_dir

#: ns-3 modules every module and user program links against (the wheel's base set).
LINKED_MODULES = (
    "core", "network", "internet", "applications", "flow-monitor", "traffic-control", "point-to-point"
)

#: The wheel's own compile definitions (lib64/cmake/ns3/ns3Targets.cmake).
NS3_DEFINES = ("NS3_LOG_ENABLE", "NS3_ASSERT_ENABLE", "NS3_BUILD_PROFILE_RELEASE", "__LINUX__")

#: The accelerator's module: what ``Shim.library`` names.
ACCELERATOR = "wormhole"

#: A file every copy of ``native/`` holds (see packaged_dir).
MARKER = "wormhole/wormhole-module.h"


class NativeBuildError(RuntimeError):
    """The native modules could not be compiled."""


def source_dir() -> Path:
    """Return the folder holding the modules (``native/`` of the repository)."""
    return packaged_dir("native", MARKER)


@dataclass(frozen=True)
class Module:
    """One ns-3 module of ``native/``, as its CMakeLists.txt describes it."""

    name: str
    root: Path
    sources: tuple[Path, ...]
    headers: tuple[Path, ...]
    tests: tuple[Path, ...]
    depends: tuple[str, ...]  #: modules of native/ it links (its dependencies)
    ns3_modules: tuple[str, ...]  #: ns-3 modules it links

    @property
    def module_header(self) -> Path:
        return self.root / f"{self.name}-module.h"


_SECTIONS = ("LIBNAME", "SOURCE_FILES", "HEADER_FILES", "LIBRARIES_TO_LINK", "TEST_SOURCES")


def parse_build_lib(cmake: str) -> dict[str, list[str]]:
    """Return the arguments of the ``build_lib(...)`` call of a CMakeLists.txt, by keyword."""
    match = re.search(r"build_lib\s*\((.*?)\)", re.sub(r"#.*", "", cmake), re.S)
    if match is None:
        raise NativeBuildError("CMakeLists.txt has no build_lib(...) call")
    sections: dict[str, list[str]] = {}
    current = None
    for word in match.group(1).split():
        if word in _SECTIONS:
            current = sections.setdefault(word, [])
        elif current is not None:
            current.append(word)
    return sections


def _read_module(root: Path, names: set[str]) -> Module:
    spec = parse_build_lib((root / "CMakeLists.txt").read_text())
    (name,) = spec["LIBNAME"]
    linked = []
    for lib in spec.get("LIBRARIES_TO_LINK", []):
        match = re.fullmatch(r"\$\{lib([\w-]+)\}", lib)
        if match is None:
            raise NativeBuildError(f"{root.name}/CMakeLists.txt: LIBRARIES_TO_LINK takes ${{lib<module>}} only")
        linked.append(match.group(1))
    return Module(
        name=name,
        root=root,
        sources=tuple(root / s for s in spec.get("SOURCE_FILES", [])),
        headers=tuple(root / h for h in spec.get("HEADER_FILES", [])),
        tests=tuple(root / t for t in spec.get("TEST_SOURCES", [])),
        depends=tuple(m for m in linked if m in names),
        ns3_modules=tuple(m for m in linked if m not in names),
    )


@cache
def modules() -> tuple[Module, ...]:
    """Every module of ``native/``, dependencies before their dependents."""
    root = source_dir()
    folders = sorted(p.parent for p in root.glob("*/CMakeLists.txt"))
    names = {f.name for f in folders}
    found = {m.name: m for m in (_read_module(f, names) for f in folders)}
    ordered: list[Module] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise NativeBuildError(f"native modules depend on each other in a cycle: {path + (name,)}")
        if any(m.name == name for m in ordered):
            return
        for dep in found[name].depends:
            visit(dep, path + (name,))
        ordered.append(found[name])

    for name in sorted(found):
        visit(name, ())
    return tuple(ordered)


def module(name: str) -> Module:
    for m in modules():
        if m.name == name:
            return m
    raise KeyError(name)


def dependencies(name: str) -> list[Module]:
    """The modules ``name`` depends on, directly or not, in load order (itself excluded)."""
    wanted: set[str] = set()
    stack = list(module(name).depends)
    while stack:
        dep = stack.pop()
        if dep not in wanted:
            wanted.add(dep)
            stack.extend(module(dep).depends)
    return [m for m in modules() if m.name in wanted]


def sources(root: Path | None = None) -> list[Path]:
    """Every module's compiled sources (not its tests)."""
    return [s for m in modules() for s in m.sources]


def headers(root: Path | None = None) -> list[Path]:
    """Every module's headers, with its ``<module>-module.h``."""
    return [h for m in modules() for h in (*m.headers, m.module_header)]


def compiler() -> str:
    cxx = os.environ.get("CXX", "g++")
    path = shutil.which(cxx)
    if path is None:
        raise NativeBuildError(
            f"no C++ compiler: '{cxx}' is not on PATH (install g++, e.g. apt-get install g++)"
        )
    return path


def base_flags() -> list[str]:
    """Flags of every compilation against the wheel's ns-3 (no module include folders)."""
    prefix = loader.ns3_prefix()
    return [
        "-std=c++20",
        "-O2",
        "-fPIC",
        *(f"-D{d}" for d in NS3_DEFINES),
        f"-I{prefix / 'include'}",
    ]


def compile_flags() -> list[str]:
    """Flags to compile a program against ns-3 and every module (``#include "ns3/<m>-module.h"``)."""
    return [*base_flags(), *(f"-I{include_dir(m.name)}" for m in modules())]


def link_flags(modules: tuple[str, ...] = LINKED_MODULES) -> list[str]:
    lib = loader.ns3_prefix() / "lib64"
    version = loader.ns3_version()
    return [f"-L{lib}", f"-Wl,-rpath,{lib}", *(f"-lns{version}-{m}" for m in modules)]


def module_link_flags() -> list[str]:
    """Flags that link every module's library, whether or not the program names a symbol of it.

    ``--no-as-needed`` keeps adapter modules whose only effect is their static
    registration (a flow source, an oracle) in the program.
    """
    return ["-Wl,--no-as-needed", *map(str, libraries()), "-Wl,--as-needed"]


@cache
def _toolchain_digest() -> str:
    version = subprocess.run([compiler(), "--version"], capture_output=True, text=True).stdout
    digest = hashlib.sha256()
    digest.update(loader.ns3_version().encode())
    digest.update(" ".join(base_flags() + link_flags()).encode())
    digest.update(version.encode())
    return digest.hexdigest()


def _hash_files(digest, files) -> None:
    for path in files:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())


@cache
def module_key(name: str) -> str:
    """Hash of everything a module's library depends on: its files, its dependencies' keys, the toolchain."""
    m = module(name)
    digest = hashlib.sha256(name.encode())
    _hash_files(digest, [m.root / "CMakeLists.txt", *m.sources, *m.headers, m.module_header])
    for dep in m.depends:
        digest.update(module_key(dep).encode())
    digest.update(_toolchain_digest().encode())
    return digest.hexdigest()[:16]


@cache
def test_key(name: str) -> str:
    digest = hashlib.sha256(module_key(name).encode())
    _hash_files(digest, module(name).tests)
    for dep in module(name).depends:
        digest.update(module_key(dep).encode())
    return digest.hexdigest()[:16]


@cache
def build_key() -> str:
    """Hash of every module's key: what a program built against all of them depends on."""
    digest = hashlib.sha256()
    for m in modules():
        digest.update(module_key(m.name).encode())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    root = os.environ.get("WORMHOLE_NS3_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "wormhole-ns3"
    )
    return Path(root)


def library_file(name: str = ACCELERATOR) -> Path:
    """The cached library of a module (by default the accelerator's)."""
    return cache_dir() / f"lib{name}-ns{loader.ns3_version()}-{module_key(name)}.so"


def test_library_file(name: str) -> Path:
    return cache_dir() / f"lib{name}-test-ns{loader.ns3_version()}-{test_key(name)}.so"


def include_dir(name: str) -> Path:
    """A folder holding ``ns3/<header>`` for every header of a module (staged once per key)."""
    m = module(name)
    folder = cache_dir() / "include" / f"{name}-{module_key(name)}"
    if (folder / "ns3" / m.module_header.name).exists():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{name}-"))
    (partial / "ns3").mkdir()
    for header in (*m.headers, m.module_header):
        shutil.copyfile(header, partial / "ns3" / header.name)
    try:
        partial.rename(folder)
    except OSError:  # another process staged it first
        shutil.rmtree(partial, ignore_errors=True)
    return folder


def module_compile_flags(name: str) -> list[str]:
    """Flags for a module's own sources: its headers and its dependencies' only."""
    return [*base_flags(), *(f"-I{include_dir(m.name)}" for m in (*dependencies(name), module(name)))]


def _first_error(stderr: str) -> str:
    return next((line for line in stderr.splitlines() if "error" in line), stderr[-500:])


def compile_shared(
    sources: list[Path], output: Path, flags: list[str], modules: tuple[str, ...], what: str,
    extra_link: list[str] | None = None,
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
    command += [*(extra_link or []), *link_flags(modules)]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        os.unlink(partial)
        raise NativeBuildError(f"{what} failed: {_first_error(result.stderr)}")
    os.replace(partial, output)
    return output


def jobs() -> int:
    """Compilations run at once (``WORMHOLE_NS3_JOBS``, default: the CPU count)."""
    return max(1, int(os.environ.get("WORMHOLE_NS3_JOBS") or os.cpu_count() or 1))


def _compile_library(
    sources: tuple[Path, ...], output: Path, flags: list[str], link: list[str], what: str
) -> Path:
    """Compile each source to an object (in parallel), then link ``output``; cached like compile_shared."""
    if output.exists():
        return output
    if sys.stderr.isatty():  # a terminal user is told why the first run waits; logs and pipes stay as plain ns-3's
        print(f"wormhole-ns3: {what} for ns-3 {loader.ns3_version()} (once per install or upgrade)",
              file=sys.stderr, flush=True)
    output.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=output.parent, prefix=".build-") as work:
        objects = [Path(work) / f"{i}-{s.stem}.o" for i, s in enumerate(sources)]

        def compile_one(pair):
            source, obj = pair
            return subprocess.run(
                [compiler(), *flags, "-c", str(source), "-o", str(obj)], capture_output=True, text=True
            )

        with ThreadPoolExecutor(max_workers=jobs()) as pool:
            results = list(pool.map(compile_one, zip(sources, objects)))
        for source, result in zip(sources, results):
            if result.returncode != 0:
                raise NativeBuildError(f"{what} failed ({source.name}): {_first_error(result.stderr)}")
        partial = Path(work) / output.name
        command = [compiler(), "-shared", *map(str, objects), "-o", str(partial), *link]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise NativeBuildError(f"{what} failed (linking): {_first_error(result.stderr)}")
        os.replace(partial, output)
    return output


def build_module(name: str) -> Path:
    """Compile one module (and the modules it depends on) unless cached; return its library."""
    m = module(name)
    for dep in m.depends:
        build_module(dep)
    link = [*(str(library_file(d.name)) for d in dependencies(name)),
            *link_flags(tuple(dict.fromkeys((*LINKED_MODULES, *m.ns3_modules))))]
    return _compile_library(
        m.sources, library_file(name), module_compile_flags(name), link, f"building the {name} module"
    )


def build(output: Path | None = None) -> Path:
    """Compile every module unless cached; return the accelerator's library.

    ``output`` (a copy of the accelerator's library) is kept for old callers.
    """
    for m in modules():
        build_module(m.name)
    library = library_file(ACCELERATOR)
    if output is not None and Path(output) != library:
        shutil.copyfile(library, output)
        return Path(output)
    return library


def libraries() -> list[Path]:
    """Every module's library, in load order (built if needed)."""
    build()
    return [library_file(m.name) for m in modules()]


def build_tests(name: str) -> Path:
    """Compile a module's TestSuites into a library of their own unless cached; return it."""
    m = module(name)
    build_module(name)
    link = [*(str(library_file(d.name)) for d in (*dependencies(name), m)),
            *link_flags(tuple(dict.fromkeys((*LINKED_MODULES, *m.ns3_modules))))]
    return _compile_library(
        m.tests, test_library_file(name), module_compile_flags(name), link, f"building the {name} tests"
    )


TEST_RUNNER = """
#include "ns3/test.h"

int
main(int argc, char** argv)
{
    return ns3::TestRunner::Run(argc, argv);
}
"""


def build_test_runner() -> Path:
    """Compile ns-3's TestRunner linked with every module's tests unless cached; return the program."""
    tests = [build_tests(m.name) for m in modules() if m.tests]
    digest = hashlib.sha256(TEST_RUNNER.encode())
    for t in tests:
        digest.update(t.name.encode())
    output = cache_dir() / f"test-runner-ns{loader.ns3_version()}-{digest.hexdigest()[:16]}"
    if output.exists():
        return output
    with tempfile.TemporaryDirectory(dir=cache_dir(), prefix=".runner-") as work:
        source = Path(work) / "test-runner.cc"
        source.write_text(TEST_RUNNER)
        partial = Path(work) / "test-runner"
        command = [compiler(), *base_flags(), str(source), "-o", str(partial),
                   "-Wl,--no-as-needed", *map(str, tests), *map(str, libraries()), "-Wl,--as-needed",
                   *link_flags()]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            raise NativeBuildError(f"building the test runner failed: {_first_error(result.stderr)}")
        os.replace(partial, output)
    return output


def run_tests(*suites: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run modules' TestSuites (all if none is named) in a child process; return its outcome.

    Each suite runs as ``test-runner --suite=<name> --verbose``; the output of
    every run is concatenated, and the return code is the first failing one's.
    An unknown suite name raises KeyError.
    """
    runner = build_test_runner()
    names = suites or tuple(m.name for m in modules() if m.tests)
    listed = subprocess.run([str(runner), "--print-test-name-list"],
                            capture_output=True, text=True, timeout=timeout)
    known = set(listed.stdout.split())
    unknown = [n for n in names if n not in known]
    if unknown:  # the runner prints its usage and succeeds on an unknown name
        raise KeyError(f"no test suite {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    outputs, code = [], 0
    for suite in names:
        done = subprocess.run([str(runner), f"--suite={suite}", "--verbose"],
                              capture_output=True, text=True, timeout=timeout)
        outputs.append(done.stdout + done.stderr)
        code = code or done.returncode
    return subprocess.CompletedProcess([str(runner), *names], code, "".join(outputs), "")


@dataclass(frozen=True)
class Shim:
    """The loaded modules: ``cppyy.gbl.ns3`` with their classes in it.

    ``library`` is the accelerator's library, ``libraries`` every module's in
    load order.
    """

    library: Path
    ns3: object
    libraries: tuple[Path, ...] = ()


@cache
def load() -> Shim:
    """Load ns-3's base modules and every native module, in dependency order, into this process (once)."""
    loader.load_ns()
    cppyy = loader.cppyy_module()
    loaded = []
    for m in modules():
        library = build_module(m.name)
        cppyy.add_include_path(str(include_dir(m.name)))
        cppyy.include(f"ns3/{m.name}-module.h")
        cppyy.load_library(str(library))
        loaded.append(library)
    return Shim(library=library_file(ACCELERATOR), ns3=cppyy.gbl.ns3, libraries=tuple(loaded))
