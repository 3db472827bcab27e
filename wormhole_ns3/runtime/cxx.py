"""Run a user's C++ ns-3 program (its ``main``) in this process, under the same controller.

The program is compiled against the installed ns-3 and the native modules
(``#include "ns3/rdma-module.h"``, ...) as a shared library whose ``main`` is
renamed, cached by its text and the headers it includes, loaded next to them and
called with the user's arguments. Its ``Simulator::Run()`` then goes through
the same simulator implementation and Run() hooks as a Python script, and ns-3
sees the program's folder as its executable's (``ProgramLocation``), as it does
for a plain build there.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from wormhole_ns3.runtime import loader, native

ENTRY = "wormhole_user_main"
#: The renamed main's symbol, as ``int main(int, char**)`` and as ``int main()`` (C++ names encode the parameters).
MAIN_WITH_ARGS = f"_Z{len(ENTRY)}{ENTRY}iPPc"
MAIN_WITHOUT_ARGS = f"_Z{len(ENTRY)}{ENTRY}v"

#: The program's Simulator::Run() calls go through RunObserver::RunWatched (run-observer.cc defines the
#: wrapper), so that a run under an implementation the program selects itself is reported, not missed.
WATCH_RUNS = "-Wl,--wrap=_ZN3ns39Simulator3RunEv"


def modules_of(source: str) -> list[str]:
    """The ns-3 modules a program includes (``ns3/<m>-module.h``, or any header of ``m``), plus the base ones."""
    return list(dict.fromkeys([*native.LINKED_MODULES, *loader.included_modules(source)]))


def build_program(path: Path) -> Path:
    """Compile ``path`` into a cached shared library exposing ``wormhole_user_main``.

    It is linked against every native module (``native.module_link_flags``), so
    the adapters' registrations are in effect for it, as they are after
    ``native.load()``. The cache key covers the program's text, its flags and
    the text of every header it includes, as the compiler listed them (``-MMD``)
    at the last build of this text: an edited header makes another key, and a
    build (ns-3's and the native modules' headers are covered by their versions).
    """
    source = path.read_text()
    modules = modules_of(source)
    flags = [*native.compile_flags(), f"-Dmain={ENTRY}", f"-I{path.parent}"]
    digest = hashlib.sha256(source.encode())
    digest.update(" ".join(flags + modules).encode() + native.build_key().encode() + WATCH_RUNS.encode())
    cache = native.cache_dir()
    stem = f"user-{path.stem}-{digest.hexdigest()[:16]}"
    index = cache / f"{stem}.headers"
    if index.exists():
        output = cache / f"{stem}-{headers_digest(json.loads(index.read_text()))}.so"
        if output.exists():
            return output
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".program-") as work:
        depfile = Path(work) / "program.d"
        built = native.compile_shared([path], Path(work) / "program.so", [*flags, "-MMD", "-MF", str(depfile)],
                                      tuple(modules), f"compiling {path.name}",
                                      extra_link=[*native.module_link_flags(), WATCH_RUNS])
        headers = [str(h) for h in included_headers(depfile.read_text(), path)]
        output = cache / f"{stem}-{headers_digest(headers)}.so"
        os.replace(built, output)
        listed = Path(work) / "headers"
        listed.write_text(json.dumps(headers))
        os.replace(listed, index)
    return output


def included_headers(depfile: str, source: Path) -> list[Path]:
    """The headers a compiler's dependency output (``-MMD``) lists for ``source``, ns-3's and the modules' aside.

    Those two are covered by the build key (ns-3's version and the modules'
    sources); every other header, the user's, is read for the cache key.
    """
    text = depfile.replace("\\\n", " ")
    _, _, listed = text.partition(": ")
    names = [name.replace("\\ ", " ") for name in re.split(r"(?<!\\)\s+", listed.strip()) if name]
    covered = (loader.ns3_prefix().resolve(), native.cache_dir().resolve())
    own = source.resolve()
    headers = []
    for name in names:
        header = Path(name).resolve()
        if header != own and not any(header.is_relative_to(root) for root in covered):
            headers.append(header)
    return sorted(set(headers))


def headers_digest(headers: list[str]) -> str:
    """A digest of each header's path and text as it is now (a header gone counts as changed)."""
    digest = hashlib.sha256()
    for name in headers:
        digest.update(name.encode() + b"\0")
        try:
            digest.update(Path(name).read_bytes())
        except OSError:
            digest.update(b"\0missing")
    return digest.hexdigest()[:16]


def run_program(path: Path, argv: list[str]) -> int:
    """Load the compiled program and call its main with ``argv``; return main's exit code."""
    library = build_program(path)
    cppyy = loader.cppyy_module()
    try:
        cppyy.load_library(str(library))
    except RuntimeError as error:  # a symbol no loaded library defines, say
        why = str(error).strip().splitlines()[-1].rsplit("]: ", 1)[-1]
        raise native.NativeBuildError(f"loading {path.name} failed: {why}") from None
    symbols = ctypes.CDLL(str(library))
    if not hasattr(symbols, MAIN_WITH_ARGS) and not hasattr(symbols, MAIN_WITHOUT_ARGS):
        raise native.NativeBuildError(f"{path.name} defines no main function")
    if not hasattr(cppyy.gbl, "wormhole_call_main"):
        # main may take (argc, argv) or nothing: its renamed symbol is looked up either way
        cppyy.cppdef(
            f"""
            #include <dlfcn.h>
            int wormhole_call_main(std::vector<std::string> args)
            {{
                std::vector<char*> argv;
                for (auto& a : args) argv.push_back(a.data());
                argv.push_back(nullptr);
                int code = 0;
                if (auto withArgs = reinterpret_cast<int (*)(int, char**)>(dlsym(RTLD_DEFAULT, "{MAIN_WITH_ARGS}")))
                    code = withArgs(static_cast<int>(args.size()), argv.data());
                else if (auto noArgs = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "{MAIN_WITHOUT_ARGS}")))
                    code = noArgs();
                else
                    throw std::logic_error("no main: run_program checks for one");
                std::cout.flush();
                return code;
            }}
            """
        )
    # ns-3 finds its test data relative to the program's folder, as for a plain build of it
    cppyy.gbl.ns3.ProgramLocation.SetSelfDirectory(str(path.resolve().parent))
    args = cppyy.gbl.std.vector["std::string"]()
    for arg in [str(path), *argv]:
        args.push_back(arg)
    return int(cppyy.gbl.wormhole_call_main(args))
