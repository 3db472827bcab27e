"""Every native module's ns-3 TestSuite, run by ns-3's TestRunner in a child process."""

import pytest

from wormhole_ns3.runtime import native

MODULES = ("wormhole", "rdma", "datacenter", "wormhole-rdma", "wormhole-datacenter")
#: Suites besides each module's own.
MORE_SUITES = ("wormhole-random-draws",)


@pytest.fixture(scope="module")
def runner():
    return native.build_test_runner()


def test_every_module_has_a_test_suite():
    assert {m.name for m in native.modules() if m.tests} == set(MODULES)


@pytest.mark.parametrize("suite", MODULES + MORE_SUITES)
def test_the_suite_passes(runner, suite):
    done = native.run_tests(suite)
    assert done.returncode == 0, done.stdout[-3000:]
    lines = done.stdout.splitlines()
    assert any(line.startswith(f"PASS {suite} ") for line in lines), done.stdout[-3000:]
    cases = [line for line in lines if line.startswith("  ")]
    assert len(cases) >= 2 and all(line.strip().startswith("PASS") for line in cases)


def test_an_unknown_suite_is_an_error_not_an_empty_pass(runner):
    with pytest.raises(KeyError, match="no-such-suite"):
        native.run_tests("no-such-suite")
