"""The trampolines behave as cppyy's own wrappers of Python callables do, at one compilation per signature.

Each case makes the same std::function twice in this process: by cppyy's own
construction (what plain ns-3 does) and through a trampoline, not installed, so
that the rest of the process keeps cppyy's. What C++ then sees and Python gets
back must be the same.
"""

import gc

import pytest

from wormhole_ns3.runtime import loader
from wormhole_ns3.runtime.trampoline import Trampolines, compiled_wrappers

from conftest import REPO, SCRIPTS, load_json

REPO_SCRIPTS = REPO / "tests" / "scripts"


@pytest.fixture
def cppyy(ns):
    return loader.cppyy_module()


@pytest.fixture
def trampolines(cppyy):
    return Trampolines(cppyy)


def both_ways(cppyy, trampolines, signature, callable_):
    """``std.function[signature](callable_)`` made plainly, and through a trampoline."""
    klass = cppyy.gbl.std.function[signature]
    return klass(callable_), trampolines.function(klass, callable_, type(klass).__call__)


def outcome(call):
    try:
        return "returned", call()
    except Exception as error:  # noqa: BLE001 - what the script sees is what is compared
        return "raised", type(error).__name__, str(error)


def fails(n):
    raise ValueError(f"callback {n} failed")


@pytest.mark.parametrize("signature, callable_, args", [
    ("double(double, int)", lambda x, k: x * k, (1.5, 3)),
    ("bool(int)", lambda n: n % 2 == 0, (4,)),
    ("unsigned int(ns3::Ptr<const ns3::Packet>)", lambda packet: packet.GetSize(), ("packet",)),
    ("int(int)", lambda n: n / 2, (3,)),  # a return cppyy cannot convert
    ("void(int)", lambda: None, (1,)),  # a callable of the wrong arity
    ("void(int)", fails, (2,)),
    ("void(int)", print, (3,)),  # a builtin, no Python frame
])
def test_arguments_returns_and_exceptions_pass_as_cppyy_passes_them(ns, cppyy, trampolines, signature, callable_, args):
    args = tuple(ns.Create[ns.Packet](1200) if a == "packet" else a for a in args)
    plain, ours = both_ways(cppyy, trampolines, signature, callable_)
    expected = outcome(lambda: plain(*args))
    assert outcome(lambda: ours(*args)) == expected
    assert trampolines.callables == 1


def test_a_callable_the_script_let_go_of_is_deleted_as_plainly(cppyy, trampolines):
    plain, ours = both_ways(cppyy, trampolines, "void(int)", lambda n: None)  # nothing else holds the lambda
    gc.collect()
    deleted = outcome(lambda: plain(1))
    assert deleted[:2] == ("raised", "TypeError") and deleted[2].endswith("callable was deleted")
    assert outcome(lambda: ours(1)) == deleted


def test_a_kept_callable_lives_as_long_as_the_script_keeps_it(cppyy, trampolines):
    calls = []

    def kept(n):
        calls.append(n)

    _, ours = both_ways(cppyy, trampolines, "void(int)", kept)
    gc.collect()
    ours(1)
    del kept
    gc.collect()
    assert outcome(lambda: ours(2))[0] == "raised"
    assert calls == [1]


def test_callbacks_nested_in_callbacks_each_call_their_own(cppyy, trampolines):
    klass = cppyy.gbl.std.function["int(int)"]
    inner = trampolines.function(klass, square := lambda n: n * n, type(klass).__call__)

    def outer_callable(n):
        return inner(n) + inner(n + 1) + 1

    outer = trampolines.function(klass, outer_callable, type(klass).__call__)
    assert (outer(2), inner(3), outer(0)) == (4 + 9 + 1, 9, 0 + 1 + 1)
    assert square(5) == 25


def test_an_exception_in_an_event_unwinds_run_as_plainly(ns, cppyy, trampolines):
    def explode():
        raise RuntimeError(f"at {ns.Simulator.Now().GetMicroSeconds()} us")

    unwound = []
    for event in both_ways(cppyy, trampolines, "void()", explode):
        ns.Simulator.Schedule(ns.MicroSeconds(5), event)
        unwound.append(outcome(ns.Simulator.Run))
    assert unwound[0][:2] == ("raised", "RuntimeError") and unwound[0][2].endswith("at 5 us")
    assert unwound[1] == ("raised", "RuntimeError", unwound[0][2].replace("at 5 us", "at 10 us"))


def test_a_signature_cppyy_cannot_wrap_raises_cppyys_error(cppyy, trampolines):
    def greeting(name):
        return f"hello {name}"

    klass = cppyy.gbl.std.function["std::string(std::string)"]  # cppyy's wrapper does not compile
    plain = outcome(lambda: klass(greeting))
    assert plain[0] == "raised"
    assert outcome(lambda: trampolines.function(klass, greeting, type(klass).__call__)) == plain
    assert trampolines.callables == 0


def test_one_signature_costs_one_compilation_however_many_callables(cppyy, trampolines):
    klass = cppyy.gbl.std.function["long(long, long)"]
    closures = [lambda a, b, k=k: a * b + k for k in range(40)]  # alive at once
    before = compiled_wrappers(cppyy)
    plain = [klass(c) for c in closures[:3]]
    assert compiled_wrappers(cppyy) - before == 3  # cppyy: one wrapper per callable
    before = compiled_wrappers(cppyy)
    ours = [trampolines.function(klass, c, type(klass).__call__) for c in closures]
    assert compiled_wrappers(cppyy) - before == 1
    assert [f(6, 7) for f in ours] == [42 + k for k in range(40)]
    assert [f(6, 7) for f in plain] == [42, 43, 44]
    assert (len(trampolines.makers), trampolines.callables) == (1, 40)


def test_cppyys_own_objects_are_no_python_callables(ns, cppyy, trampolines):
    assert trampolines.is_python_callable(lambda: None) and trampolines.is_python_callable(print)
    assert not trampolines.is_python_callable(cppyy.gbl.std.function["void()"]())  # a C++ object
    assert not trampolines.is_python_callable(ns.Simulator.Now)  # a C++ function
    assert not trampolines.is_python_callable(ns.DynamicCast)  # a C++ function template


@pytest.mark.slow
@pytest.mark.parametrize("script, args, made", [
    (REPO_SCRIPTS / "python_callbacks.py", (), 63),  # std.function of a Python callable, 63 times
    (SCRIPTS / "message_ring.py", ("--messages", "48"), 2 * 48),  # two new closures per message
])
def test_a_script_prints_the_same_accelerated_at_a_handful_of_compilations(wormhole, tmp_path, script, args, made):
    baseline = wormhole("run", "--baseline", "--results", tmp_path / "b.json", script, *args)
    accelerated = wormhole("run", "--no-memo", "--no-fast-forward", "--results", tmp_path / "a.json", script, *args)
    assert baseline.returncode == accelerated.returncode == 0, accelerated.stderr
    assert baseline.stdout and accelerated.stdout == baseline.stdout
    plain, ours = (load_json(tmp_path / f"{side}.json")["python_callbacks"] for side in "ba")
    assert plain["trampolined_callables"] == 0 and plain["compiled_wrappers"] >= made
    assert ours["trampolined_callables"] >= made  # the accelerator's own callbacks are taken too
    assert ours["compiled_wrappers"] <= 10
