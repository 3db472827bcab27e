"""Several simulations in one process, and scripts that reset ns-3's configuration (issue 41).

Each ``Simulator::Destroy()`` gives the next simulation a fresh accelerator
(``run/session.py``); ``Config::Reset()`` keeps the harness's simulator
(``runtime/implementation.py``); a run under a simulator the script chose itself
is reported as not accelerated.
"""

import csv
import subprocess
import sys

import pytest

from conftest import REPO, child_environment, load_json

pytestmark = pytest.mark.slow

SCRIPTS = REPO / "tests" / "scripts"
THREE = SCRIPTS / "three_simulations.py"
#: the default mode also follows queues and RTTs: each simulation's monitors are its own
MODES = ("--baseline", "--queues --rtt", "--no-memo", "--no-fast-forward")


@pytest.fixture(scope="module")
def plain_three(tmp_path_factory):
    """three_simulations.py under plain ``python``, once for every mode's comparison."""
    done = subprocess.run([sys.executable, str(THREE)], cwd=tmp_path_factory.mktemp("plain"),
                          env=child_environment(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("mode", MODES)
def test_three_simulations_in_one_process_print_what_plain_python_prints_in_every_mode(
        wormhole, tmp_path, plain_three, mode):
    done = wormhole("run", *mode.split(), "--results", tmp_path / "r.json", "--trace", tmp_path / "t.csv", THREE)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == plain_three
    results = load_json(tmp_path / "r.json")
    assert results["runs"] == 3 and results["fallback"] is None
    flows = [(f["id"], f["simulation"], f["dst"]) for f in results["flows"]]
    assert flows == [(0, 0, "10.1.1.255"), (1, 1, "225.1.2.4"), (2, 2, "10.2.0.1"), (3, 2, "10.2.1.1")]
    assert [f["rx_bytes"] for f in results["flows"][2:]] == [20_000_000, 40_000_000]
    if mode == "--queues --rtt":  # the dumbbell's ports and flows, measured by the third simulation's monitors
        assert results["queues"] and {q["simulation"] for q in results["queues"]} == {2}
        assert [f["rtt"] is not None for f in results["flows"]] == [False, False, True, True]
    skips = [row for row in csv.DictReader((tmp_path / "t.csv").open()) if row["kind"] == "steady"]
    if mode in ("--baseline", "--no-fast-forward"):
        assert skips == []
    else:  # the dumbbell, the third simulation, is skipped under its own flow numbers
        assert skips and all(set(row["partition"].split()) <= {"2", "3"} for row in skips)


def test_the_issues_two_simulations_with_a_broadcast_flow_run_as_plain_python(wormhole, plain_python, tmp_path):
    script = SCRIPTS / "two_simulations.py"
    plain = plain_python(script)
    assert plain.returncode == 0, plain.stderr
    done = wormhole("run", "--results", tmp_path / "r.json", script)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == plain.stdout
    results = load_json(tmp_path / "r.json")
    assert results["runs"] == 2 and results["skips"] >= 1  # the second simulation's Cubic transfer was skipped


def test_a_script_that_resets_its_configuration_stays_accelerated(wormhole, tmp_path):
    done = wormhole("run", "--results", tmp_path / "r.json", "--trace", tmp_path / "t.csv",
                    SCRIPTS / "config_reset.py")
    assert done.returncode == 0, done.stderr[-3000:]
    results = load_json(tmp_path / "r.json")
    assert results["mode"] == "accelerated" and results["fallback"] is None and results["runs"] == 2
    assert results["unskippable_flows"] == {}  # each sender got its skip-aware RTT estimator after the reset
    partitions = {row["partition"] for row in csv.DictReader((tmp_path / "t.csv").open()) if row["kind"] == "steady"}
    assert {"0 1", "2 3"} <= partitions  # both cases, each after a Config::Reset(), were skipped


def test_a_run_under_a_simulator_the_script_chose_is_reported_as_a_fallback(wormhole, tmp_path):
    done = wormhole("compare", "--json", tmp_path / "c.json", SCRIPTS / "config_reset.py",
                    "--own-simulator", "ns3::DefaultSimulatorImpl")
    assert done.returncode == 0, done.stderr[-3000:]
    reason = ("1 Simulator::Run() call ran under ns3::DefaultSimulatorImpl, which the script selected "
              "(GlobalValue::Bind, --SimulatorImplementationType or NS_GLOBAL_VALUE): it was not accelerated")
    assert f"wormhole-ns3: fallback: {reason}" in done.stderr_lines
    assert f"fallback              {reason}" in done.stdout
    summary = load_json(tmp_path / "c.json")
    assert summary["fallback"] == summary["fallback_baseline"] == reason
    assert summary["stdout_identical"] and summary["skips"] >= 1  # the first case was accelerated
