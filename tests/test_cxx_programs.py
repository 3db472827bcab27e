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
