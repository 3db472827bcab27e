"""The script's Python callbacks under the accelerator: one compiled trampoline per signature.

cppyy hands a Python callable to C++ by compiling a C++ wrapper function for
that callable: 80 ms or more for each callable alive at once. A script that
makes a new closure per message (``ns.Callback[...](std.function[...](f))``)
spends most of its ``Run()`` in cling, while calling a wrapper costs
microseconds.

Under the accelerator, ``std.function[...](f)`` of a Python callable is made of
a ``Trampoline<R, A...>`` instead: a C++ functor holding ``f``, compiled once
per signature. Calling it calls ``f`` through one std::function per
signature, which cppyy makes as it makes the script's, around one Python
callable of its own: a C builtin (so no Python frame) calling whichever
callable the running trampoline names. Arguments, return values and exceptions
therefore pass cppyy's own converters, as plainly. ``f`` is held as cppyy holds
it: weakly, so that a callable the script let go of raises ``TypeError:
callable was deleted`` when C++ calls it, as it does plainly. What the script
makes of that std::function (an ``ns3::Callback``, a ``Simulator::Schedule``)
is made as plainly.

Everything else reaches cppyy unchanged: a C++ object or function handed to
std::function; a signature cppyy cannot wrap a callable of (its error is raised,
as plainly); and ``ns.Callback[...](f)`` straight from a callable, which cppyy
accepts only once some other construction instantiated the constructor it
converts through (in a fresh process it fails), so no trampoline could behave
as it does. Plain runs (``--baseline``, ``python script.py``) never install
this: they keep cppyy's cost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

#: The C++ side, compiled at the first Python callable a trampoline takes (``_compiled_namespace``).
_TRAMPOLINE_CODE = r"""
#include "CPyCppyy/API.h"
#include <functional>
#include <memory>

namespace wormhole_trampoline
{

/** Holds the GIL for its scope (a no-op where the caller holds it, as Simulator::Run's does). */
class GilScope
{
  public:
    GilScope()
        : m_state(PyGILState_Ensure())
    {
    }

    ~GilScope()
    {
        PyGILState_Release(m_state);
    }

  private:
    PyGILState_STATE m_state;
};

/** The callable the innermost running trampoline calls (nullptr: its callable was deleted). */
PyObject* g_current = nullptr;

/** The Python side of every signature's one cppyy wrapper: call the current callable. */
PyObject*
CallCurrent(PyObject*, PyObject* args)
{
    if (g_current == nullptr)
    {
        PyErr_SetString(PyExc_TypeError, "callable was deleted"); // cppyy's own words
        return nullptr;
    }
    return PyObject_Call(g_current, args, nullptr);
}

PyMethodDef g_callCurrentDef = {"wormhole_call_current", (PyCFunction)CallCurrent, METH_VARARGS, nullptr};

/** The builtin cppyy compiles one wrapper for, per signature. */
PyObject*
Dispatcher()
{
    static PyObject* dispatcher = PyCFunction_New(&g_callCurrentDef, nullptr);
    Py_INCREF(dispatcher);
    return dispatcher;
}

/** Names a callable as the current one for its scope (nested callbacks each name theirs). */
class CurrentScope
{
  public:
    explicit CurrentScope(PyObject* callable)
        : m_outer(g_current)
    {
        Py_XINCREF(callable); // alive while it runs, whatever it drops
        g_current = callable;
    }

    ~CurrentScope()
    {
        Py_XDECREF(g_current);
        g_current = m_outer;
    }

  private:
    PyObject* m_outer;
};

/** A Python callable as cppyy's wrappers hold one: weakly where it can be, else strongly. */
class PythonCallable
{
  public:
    explicit PythonCallable(PyObject* callable)
        : m_ref(PyWeakref_NewRef(callable, nullptr))
    {
        if (m_ref == nullptr)
        {
            PyErr_Clear();
            Py_INCREF(callable);
            m_ref = callable;
            m_strong = true;
        }
    }

    PythonCallable(const PythonCallable& other)
        : m_ref(other.m_ref),
          m_strong(other.m_strong)
    {
        GilScope gil;
        Py_INCREF(m_ref);
    }

    PythonCallable& operator=(const PythonCallable&) = delete;

    ~PythonCallable()
    {
        if (!Py_IsInitialized())
        {
            return; // an ns-3 object freed after Python's exit: nothing left to release
        }
        GilScope gil;
        Py_DECREF(m_ref);
    }

    /** The callable, borrowed; nullptr once the script let go of it. */
    PyObject* Get() const
    {
        if (m_strong)
        {
            return m_ref;
        }
        PyObject* target = PyWeakref_GetObject(m_ref);
        return target == Py_None ? nullptr : target;
    }

  private:
    PyObject* m_ref;
    bool m_strong{false};
};

/** Per signature: a std::function of cppyy's wrapper for the dispatcher, made as plainly. */
template <typename R, typename... A>
struct Dispatch
{
    static inline std::function<R(A...)> s_call;
};

/** A Python callable as a C++ functor of one signature. */
template <typename R, typename... A>
class Trampoline
{
  public:
    explicit Trampoline(PyObject* callable)
        : m_callable(callable)
    {
    }

    R operator()(A... args) const
    {
        GilScope gil;
        CurrentScope current(m_callable.Get());
        return Dispatch<R, A...>::s_call(std::forward<A>(args)...);
    }

  private:
    PythonCallable m_callable;
};

/** The trampolines of one std::function type: bound once to its dispatch, then made per callable. */
template <typename F>
struct Maker;

template <typename R, typename... A>
struct Maker<std::function<R(A...)>>
{
    static void Bind(const std::function<R(A...)>& dispatch)
    {
        Dispatch<R, A...>::s_call = dispatch;
    }

    static std::function<R(A...)> Make(PyObject* callable)
    {
        return Trampoline<R, A...>(callable);
    }
};

} // namespace wormhole_trampoline
"""

#: The C++ class template whose construction from a Python callable a trampoline takes over.
TRAMPOLINED_TEMPLATE = "std::function<"

#: The namespace cppyy compiles its callable wrappers into, and their names' stem.
_CPPYY_INTERNAL = "__cppyy_internal"
_WRAPPER_STEM = "fptr_wrap"


@dataclass
class Trampolines:
    """The trampolines of one process: which signatures have one, and how many callables they took."""

    cppyy: Any
    #: std::function type -> its trampolines' ``Make``, for the signatures a callable was handed to.
    makers: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    #: std::function types cppyy cannot wrap a callable for: left to cppyy, which raises its error.
    unwrappable: set[str] = field(default_factory=set)
    callables: int = 0
    #: The std::function types whose construction install() took over.
    taken: set[str] = field(default_factory=set)
    #: cppyy's own objects (instances, bound functions, templates): handed to cppyy as they are.
    _cpp_objects: tuple[type, ...] = field(init=False)

    def __post_init__(self) -> None:
        import libcppyy  # cppyy's extension module; importable once cppyy is

        self._cpp_objects = (libcppyy.CPPInstance, libcppyy.CPPOverload, libcppyy.TemplateProxy)

    def install(self) -> None:
        """Take over std::function's construction, for the types cppyy already made and those it will make."""
        self.cppyy.py.add_pythonization(self._take, "std")
        for value in list(vars(self.cppyy.gbl.std).values()):
            self._take(value, "")

    def is_python_callable(self, value: Any) -> bool:
        """True for what cppyy would compile a wrapper for: a callable that is not cppyy's own."""
        return callable(value) and not isinstance(value, self._cpp_objects)

    def function(self, klass: type, callable_: Any, construct: Callable[..., Any]) -> Any:
        """``klass(callable_)`` for a std::function type, its target the signature's trampoline.

        ``construct`` is cppyy's construction of ``klass`` (its metaclass's
        call). The trampoline's maker returns the ``klass`` object itself: handed
        back to ``construct``, a std::function is one more Python callable to
        cppyy, which may take the constructor it instantiated for callables and
        compile a wrapper for it. Where cppyy cannot wrap a callable of this
        signature, ``construct`` is handed ``callable_`` and raises what it
        raises plainly.
        """
        make = self._maker(klass, construct)
        if make is None:
            return construct(klass, callable_)
        self.callables += 1
        return make(callable_)

    def _take(self, klass: Any, _name: str) -> None:
        """Route ``klass(callable)`` through ``function``, for std::function types only.

        The class's metaclass (cppyy makes one per class) gets the hook:
        replacing ``__init__`` itself would hide the constructor templates cppyy
        instantiates on demand.
        """
        name = getattr(klass, "__cpp_name__", "") if isinstance(klass, type) else ""
        if not name.startswith(TRAMPOLINED_TEMPLATE) or name in self.taken:
            return
        self.taken.add(name)
        meta = type(klass)
        construct = meta.__call__
        trampolines = self

        def __call__(cls, *args, **kwargs):
            if cls is klass and len(args) == 1 and not kwargs and trampolines.is_python_callable(args[0]):
                return trampolines.function(klass, args[0], construct)
            return construct(cls, *args, **kwargs)

        meta.__call__ = __call__

    def _maker(self, klass: type, construct: Callable[..., Any]) -> Callable[[Any], Any] | None:
        """The ``Make`` of ``klass``'s trampolines, bound at its first callable; None if cppyy cannot wrap one."""
        name = klass.__cpp_name__  # type: ignore[attr-defined]
        make = self.makers.get(name)
        if make is not None or name in self.unwrappable:
            return make
        namespace = _compiled_namespace(self.cppyy)
        try:
            dispatch = construct(klass, namespace.Dispatcher())  # the one wrapper cppyy compiles for it
        except TypeError:
            self.unwrappable.add(name)
            return None
        maker = namespace.Maker[name]
        maker.Bind(dispatch)
        make = self.makers[name] = maker.Make
        return make


@cache
def _compiled_namespace(cppyy: Any) -> Any:
    """The trampolines' C++ namespace, compiled at its first use in the process (once: cling redefines nothing)."""
    cppyy.cppdef(_TRAMPOLINE_CODE)
    return cppyy.gbl.wormhole_trampoline


_installed: list[Trampolines] = []


def install(cppyy: Any) -> Trampolines:
    """Install the trampolines in this process (once): accelerated runs only."""
    if not _installed:
        trampolines = Trampolines(cppyy)
        trampolines.install()
        _installed.append(trampolines)
    return _installed[0]


def compiled_wrappers(cppyy: Any) -> int:
    """How many wrappers cppyy compiled for Python callables in this process, trampolines' included."""
    internal = getattr(cppyy.gbl, _CPPYY_INTERNAL, None)
    if internal is None:
        return 0
    return sum(1 for name in dir(internal) if name.startswith(_WRAPPER_STEM))


def results(cppyy: Any) -> dict[str, int]:
    """run.json's ``python_callbacks``: what the script's Python callbacks cost in compilations."""
    trampolines = _installed[0] if _installed else None
    return {
        "compiled_wrappers": compiled_wrappers(cppyy),
        "trampoline_signatures": len(trampolines.makers) if trampolines else 0,
        "trampolined_callables": trampolines.callables if trampolines else 0,
    }
