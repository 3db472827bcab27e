"""Run a user's C++ ns-3 program (its ``main``) in this process, under the same controller.

The program is compiled against the installed ns-3 and the native modules
(``#include "ns3/rdma-module.h"``, ...) as a shared library whose ``main`` is
renamed, cached by source hash like the modules, loaded next to them and
called with the user's arguments. Its ``Simulator::Run()`` then goes through
the same simulator implementation and Run() hooks as a Python script.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from wormhole_ns3.runtime import loader, native

ENTRY = "wormhole_user_main"


def modules_of(source: str) -> list[str]:
    """The ns-3 modules a program includes (``ns3/<m>-module.h``, or any header of ``m``), plus the base ones."""
    return list(dict.fromkeys([*native.LINKED_MODULES, *loader.included_modules(source)]))


def build_program(path: Path) -> Path:
    """Compile ``path`` into a cached shared library exposing ``wormhole_user_main``.

    It is linked against every native module (``native.module_link_flags``), so
    the adapters' registrations are in effect for it, as they are after ``native.load()``.
    """
    source = path.read_text()
    modules = modules_of(source)
    flags = [*native.compile_flags(), f"-Dmain={ENTRY}", f"-I{path.parent}"]
    digest = hashlib.sha256(source.encode())
    digest.update(" ".join(flags + modules).encode() + native.build_key().encode())
    output = native.cache_dir() / f"user-{path.stem}-{digest.hexdigest()[:16]}.so"
    return native.compile_shared([path], output, flags, tuple(modules), f"compiling {path.name}",
                                 extra_link=native.module_link_flags())


def run_program(path: Path, argv: list[str]) -> int:
    """Load the compiled program and call its main with ``argv``; return main's exit code."""
    library = build_program(path)
    cppyy = loader.cppyy_module()
    try:
        cppyy.load_library(str(library))
    except RuntimeError as error:  # a symbol no loaded library defines, say
        why = str(error).strip().splitlines()[-1].rsplit("]: ", 1)[-1]
        raise native.NativeBuildError(f"loading {path.name} failed: {why}") from None
    if not hasattr(cppyy.gbl, "wormhole_call_main"):
        cppyy.cppdef(
            f"""
            int {ENTRY}(int argc, char* argv[]);
            int wormhole_call_main(std::vector<std::string> args)
            {{
                std::vector<char*> argv;
                for (auto& a : args) argv.push_back(a.data());
                argv.push_back(nullptr);
                int code = {ENTRY}(static_cast<int>(args.size()), argv.data());
                std::cout.flush();
                return code;
            }}
            """
        )
    args = cppyy.gbl.std.vector["std::string"]()
    for arg in [str(path), *argv]:
        args.push_back(arg)
    return int(cppyy.gbl.wormhole_call_main(args))
