"""C++ ns-3 programs run through the same harness and controller as Python scripts."""

import subprocess

import pytest

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

PROGRAM = REPO / "experiments" / "cpp" / "dumbbell.cc"


def test_a_cpp_program_is_accelerated_with_the_same_accuracy(wormhole, tmp_path):
    args = ["--", "--flows=2", "--bytes=50000000", "--staggerMs=0"]
    done = wormhole("compare", "--json", tmp_path / "c.json", PROGRAM, *args)
    assert done.returncode == 0, done.stderr
    summary = load_json(tmp_path / "c.json")
    assert summary["skips"] >= 1
    assert summary["stdout_identical"] and summary["rx_bytes_exact"]
    assert summary["fct_max_rel_err"] <= 0.03
    assert summary["events_accelerated"] * 2 < summary["events_baseline"]


def test_the_baseline_of_a_cpp_program_is_plain_ns3(wormhole, tmp_path):
    from wormhole_ns3.runtime import cxx, native

    binary = tmp_path / "dumbbell"
    command = [native.compiler(), *native.compile_flags(), str(PROGRAM), "-o", str(binary),
               *native.link_flags(tuple(cxx.modules_of(PROGRAM.read_text())))]
    subprocess.run(command, check=True)
    args = ["--flows=2", "--bytes=5000000"]
    plain = subprocess.run([str(binary), *args], capture_output=True, text=True, check=True)
    ours = wormhole("run", "--baseline", "--results", tmp_path / "b.json", PROGRAM, "--", *args)
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == plain.stdout
    assert load_json(tmp_path / "b.json")["events"] > 0


def test_a_program_that_does_not_compile_is_a_one_line_error(wormhole, tmp_path):
    broken = tmp_path / "broken.cc"
    broken.write_text("int main() { return undefined_thing; }\n")
    done = wormhole("run", broken)
    assert done.returncode != 0
    assert "compiling broken.cc failed" in done.stderr_lines[-1]


def test_an_edited_header_the_program_includes_is_built_again(wormhole, tmp_path):
    program, header = tmp_path / "prog.cc", tmp_path / "value.h"
    program.write_text('#include "value.h"\n#include <iostream>\n'
                       'int main() { std::cout << "value " << VALUE << std::endl; return 0; }\n')
    header.write_text("#define VALUE 1\n")
    first = wormhole("run", "--baseline", program)
    header.write_text("#define VALUE 2\n")
    second = wormhole("run", "--baseline", program)
    assert (first.stdout, second.stdout) == ("value 1\n", "value 2\n")


def _ns3_tree(root):
    """A folder laid out as ns-3's sources are: VERSION and LICENSE at the top, the suite's data below."""
    folder = root / "src" / "demo" / "test"
    folder.mkdir(parents=True)
    (root / "VERSION").write_text("3.44\n")
    (root / "LICENSE").write_text("GPL-2.0-only\n")
    (folder / "reference.txt").write_text("42\n")
    program = folder / "user_test_suite.cc"
    program.write_text((REPO / "tests" / "scripts" / "user_test_suite.cc").read_text())
    return program


def test_a_users_test_suite_finds_its_data_and_stays_accelerated_through_config_reset(wormhole, tmp_path):
    """ns-3's TestRunner resets the configuration around each case and walks up from the program to its data."""
    from wormhole_ns3.runtime import cxx, native

    program = _ns3_tree(tmp_path / "ns-3")
    binary = tmp_path / "ns-3" / "build" / "user_test_suite"
    binary.parent.mkdir()
    subprocess.run([native.compiler(), *native.compile_flags(), str(program), "-o", str(binary),
                    *native.link_flags(tuple(cxx.modules_of(program.read_text())))], check=True)
    args = ["--suite=user-suite", "--verbose"]
    plain = subprocess.run([str(binary), *args], capture_output=True, text=True)
    ours = wormhole("run", "--results", tmp_path / "r.json", program, "--", *args)
    verdicts = [[line.split()[:2] for line in out.splitlines()] for out in (plain.stdout, ours.stdout)]
    assert plain.returncode == ours.returncode == 0, ours.stderr[-3000:]
    assert verdicts[0] == verdicts[1] == [["PASS", "user-suite"], ["PASS", "reference-data"],
                                          ["PASS", "bulk-transfer"], ["PASS", "own-simulator"]]
    results = load_json(tmp_path / "r.json")
    # the transfer, built after TestCase::Run's Config::Reset(), was tracked by the accelerator (alone on
    # its link it meets no congestion signal, so nothing holds its window and it is not skipped)
    assert results["mode"] == "accelerated" and results["runs"] == 1 and len(results["flows"]) >= 1
    reason = ("1 Simulator::Run() call ran under ns3::DefaultSimulatorImpl, which the script selected "
              "(GlobalValue::Bind, --SimulatorImplementationType or NS_GLOBAL_VALUE): it was not accelerated")
    assert results["fallback"] == reason
    assert f"wormhole-ns3: fallback: {reason}" in ours.stderr_lines


def test_a_program_without_main_is_a_one_line_error(wormhole, tmp_path):
    library_only = tmp_path / "helpers.cc"
    library_only.write_text("int helper() { return 1; }\n")
    done = wormhole("run", library_only)
    assert done.returncode != 0
    assert done.stderr_lines[-1].endswith("helpers.cc defines no main function")
