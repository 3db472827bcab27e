"""Load ns-3's Python bindings quickly, and keep ``from ns import ns`` working.

The wheel's own ``ns`` package includes every module's headers (~45 modules,
8-10 s and ~600 MiB). A run needs a handful, so this loader includes only
those and serves everything else lazily: an attribute that is not found is
looked up in the header index of the remaining modules, whose header is then
included, so user scripts see the same ``ns`` namespace either way.

What a script names inside a string must be found too, as after the wheel's
``from ns import ns``: a log component, a TypeId in ``Config::Set`` or an
``ObjectFactory``, an attribute path. Those are registered by the libraries'
static initializers, not by the headers, so every module's library is loaded
at once (dlopen alone, about 0.1 s). C++ a script hands to ``cppyy.cppdef``
needs headers: the modules it names are included before it is compiled, and
all of them if it still does not compile.
"""

from __future__ import annotations

import builtins
import importlib.util
import re
import sys
import types
from functools import cache
from pathlib import Path

BASE_MODULES = (
    "core",
    "network",
    "internet",
    "point-to-point",
    "applications",
    "traffic-control",
    "flow-monitor",
)

#: Defines the wheel's loader derives from the third-party libraries it ships.
_WHEEL_DEFINES = ("HAVE_GSL", "HAVE_LIBXML2", "HAVE_SQLITE3")


def package_dir(name: str, install: str) -> Path:
    """Return the folder an installed package lives in; ``install`` says how to get it when it is missing."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(f"the {name} package is not installed: {install}")
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def ns3_prefix() -> Path:
    """Return the install folder of the ns-3 wheel (``.../site-packages/ns3``)."""
    return package_dir("ns3", "pip install ns3==3.44.post0")


@cache
def ns3_version() -> str:
    """Return the ns-3 version of the installed libraries, e.g. ``"3.44"``."""
    for library in sorted((ns3_prefix() / "lib64").glob("libns*-core*.so")):
        match = re.match(r"libns([\d.]+)-core", library.name)
        if match:
            return match.group(1)
    raise ImportError(f"no ns-3 core library in {ns3_prefix() / 'lib64'}")


def library_path(module: str) -> Path:
    """Return the shared library of one ns-3 module."""
    return ns3_prefix() / "lib64" / f"libns{ns3_version()}-{module}.so"


@cache
def available_modules() -> tuple[str, ...]:
    """Return every ns-3 module the wheel ships, by its ``<m>-module.h`` header."""
    include = ns3_prefix() / "include" / "ns3"
    names = [p.name[: -len("-module.h")] for p in include.glob("*-module.h")]
    return tuple(sorted(n for n in names if library_path(n).exists()))


@cache
def _header_index() -> dict[str, str]:
    """Map each header file name to the module whose ``-module.h`` includes it."""
    include = ns3_prefix() / "include" / "ns3"
    index: dict[str, str] = {}
    for module in available_modules():
        text = (include / f"{module}-module.h").read_text(errors="replace")
        for header in re.findall(r'#include\s+[<"](?:ns3/)?([\w.-]+\.h)[>"]', text):
            index.setdefault(header, module)
    return index


def _kebab(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name).lower()


def included_modules(code: str) -> list[str]:
    """The modules whose headers C++ text includes (``ns3/<m>-module.h`` or any header of it), in order."""
    index = _header_index()
    available = set(available_modules())
    modules = []
    for header in re.findall(r'#include\s+[<"]ns3/([\w.-]+\.h)[>"]', code):
        module = header[: -len("-module.h")] if header.endswith("-module.h") else index.get(header)
        if module in available and module not in modules:
            modules.append(module)
    return modules


def _named_modules(code: str) -> set[str]:
    """The modules whose headers C++ text includes or whose classes it names (by file name)."""
    index = _header_index()
    modules = set(included_modules(code))
    for name in set(re.findall(r"\b[A-Z][A-Za-z0-9]*", code)):
        module = index.get(_kebab(name) + ".h")
        if module is not None:
            modules.add(module)
    return modules


class NsLoader:
    """Includes ns-3 modules into cppyy on demand (one per process)."""

    def __init__(self) -> None:
        self.loaded: list[str] = []
        self._cppyy = None
        self._libraries_loaded = False
        self._cppdef = None

    @property
    def cppyy(self):
        if self._cppyy is None:
            self._cppyy = self._start_cppyy()
        return self._cppyy

    def _start_cppyy(self):
        import cppyy
        import libcppyy

        libcppyy.AddSmartPtrType("Ptr")
        cppyy.add_library_path(str(ns3_prefix() / "lib64"))
        cppyy.add_include_path(str(ns3_prefix() / "include"))
        cppyy.cppexec("".join(f"#ifndef {d}\n#define {d} 1\n#endif\n" for d in _WHEEL_DEFINES))
        return cppyy

    def load(self, modules: tuple[str, ...] | list[str] = BASE_MODULES) -> None:
        """Include the headers and load the libraries of ns-3 modules."""
        cppyy = self.cppyy
        fresh = [m for m in modules if m not in self.loaded]
        for module in fresh:
            cppyy.include(f"ns3/{module}-module.h")
        for module in fresh:
            cppyy.load_library(str(library_path(module)))
            self.loaded.append(module)
        if fresh and len(self.loaded) == len(fresh):
            _install_python_conveniences(cppyy)

    def load_libraries(self) -> None:
        """Load every module's library, headers aside: what it registers by name is then known."""
        if not self._libraries_loaded:
            for module in available_modules():
                if module not in self.loaded:
                    self.cppyy.load_library(str(library_path(module)))
            self._libraries_loaded = True

    def cppdef(self, code: str):
        """``cppyy.cppdef`` for a script: the modules its C++ names are included first."""
        assert self._cppdef is not None, "install_cppdef() first"
        self.load(sorted(_named_modules(code)))
        try:
            return self._cppdef(code)
        except SyntaxError:
            missing = [m for m in available_modules() if m not in self.loaded]
            if not missing:
                raise
            self.load(missing)  # a name the scan missed: retry with every header, as plain ns-3 has
            return self._cppdef(code)

    def install_cppdef(self) -> None:
        """Route the scripts' ``cppyy.cppdef`` (and ``ns.cppyy.cppdef``) through ``cppdef``."""
        if self._cppdef is None:
            cppyy = self.cppyy
            self._cppdef = cppyy.cppdef
            cppyy.cppdef = self.cppdef

    def load_for(self, name: str) -> bool:
        """Load the module that most likely declares ``name``; True if one was loaded."""
        header = _header_index().get(_kebab(name) + ".h")
        if header and header not in self.loaded:
            self.load([header])
            return True
        missing = [m for m in available_modules() if m not in self.loaded]
        if missing:
            self.load(missing)
            return True
        return False


def _install_python_conveniences(cppyy) -> None:
    """What the wheel's loader adds on top of the raw bindings, so scripts behave the same."""
    ns3 = cppyy.gbl.ns3
    cppyy.cppdef(
        """
        namespace wormhole_py {
        bool TimeGe(ns3::Time& a, ns3::Time& b) { return a >= b; }
        bool TimeEq(ns3::Time& a, ns3::Time& b) { return a == b; }
        bool TimeNe(ns3::Time& a, ns3::Time& b) { return a != b; }
        bool TimeLe(ns3::Time& a, ns3::Time& b) { return a <= b; }
        bool TimeGt(ns3::Time& a, ns3::Time& b) { return a > b; }
        bool TimeLt(ns3::Time& a, ns3::Time& b) { return a < b; }
        std::tuple<bool, ns3::TypeId> LookupByNameFailSafe(std::string name)
        {
            ns3::TypeId id;
            bool ok = ns3::TypeId::LookupByNameFailSafe(name, &id);
            return std::make_tuple(ok, id);
        }
        }
        """
    )
    helpers = cppyy.gbl.wormhole_py
    ns3.Time.__ge__ = helpers.TimeGe
    ns3.Time.__eq__ = helpers.TimeEq
    ns3.Time.__ne__ = helpers.TimeNe
    ns3.Time.__le__ = helpers.TimeLe
    ns3.Time.__gt__ = helpers.TimeGt
    ns3.Time.__lt__ = helpers.TimeLt
    ns3.cppyy = cppyy
    ns3.LookupByNameFailSafe = helpers.LookupByNameFailSafe
    # Nodes are owned by NodeList; keep Python proxies from deleting them.
    kept_nodes: list = []
    setattr(ns3, "__nodes_pending_deletion", kept_nodes)
    ns3.Node.__del__ = lambda self: kept_nodes.append(self)


class LazyNamespace(types.SimpleNamespace):
    """The ``ns`` object scripts see: ``cppyy.gbl.ns3`` with modules included on first use."""

    def __init__(self, loader: NsLoader) -> None:
        super().__init__()
        object.__setattr__(self, "_loader", loader)

    def __getattr__(self, name: str):
        loader: NsLoader = object.__getattribute__(self, "_loader")
        ns3 = loader.cppyy.gbl.ns3
        while True:
            try:
                return getattr(ns3, name)
            except AttributeError:
                if name.startswith("__") or not loader.load_for(name):
                    raise

    def __setattr__(self, name: str, value) -> None:
        setattr(object.__getattribute__(self, "_loader").cppyy.gbl.ns3, name, value)

    def __dir__(self):
        return dir(object.__getattribute__(self, "_loader").cppyy.gbl.ns3)


_LOADER = NsLoader()


def load_ns(modules: tuple[str, ...] | list[str] = BASE_MODULES) -> LazyNamespace:
    """Load the given ns-3 modules and return the lazily completed ``ns`` namespace."""
    _LOADER.load(modules)
    return _NAMESPACE


def install_ns_module() -> LazyNamespace:
    """Make ``from ns import ns`` return the fast namespace instead of the wheel's loader.

    Every module's library is loaded, as the wheel's loader does, so that what a
    script looks up by name is registered; headers stay lazy.
    """
    ns = load_ns()
    _LOADER.load_libraries()
    _LOADER.install_cppdef()
    module = types.ModuleType("ns", "ns-3 bindings, loaded by wormhole_ns3.loader")
    module.ns = ns  # type: ignore[attr-defined]
    module.__path__ = []  # a package, as the wheel's is
    sys.modules["ns"] = module
    sys.modules["ns3.ns"] = module
    builtins.__dict__["ns"] = ns
    return ns


def cppyy_module():
    """Return cppyy after the ns-3 base modules are loaded."""
    load_ns()
    return _LOADER.cppyy


_NAMESPACE = LazyNamespace(_LOADER)
