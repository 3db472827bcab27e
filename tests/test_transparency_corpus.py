"""Scripts exercising what ns-3's own examples exercise give, under ``run``, what plain ns-3 gives.

Each script runs twice in folders of its own, ``python script`` and
``wormhole-ns3 run script``: the exit code, stdout, stderr (less cling's
start-up noise) and every file the script writes must be identical.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, Completed, child_environment, load_json

SCRIPTS = REPO / "tests" / "scripts"


def _in(folder: Path, command: list[str], timeout: float) -> Completed:
    folder.mkdir()
    done = subprocess.run(command, cwd=folder, env=child_environment(), capture_output=True,
                          text=True, timeout=timeout)
    return Completed(done.returncode, done.stdout, done.stderr)


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "run.json"}


def plain_and_wrapped(tmp_path: Path, script: str, *args: str, timeout: float = 300,
                      ) -> tuple[Completed, Completed]:
    """Run a script plainly and under ``run --results run.json``; both must agree in every output."""
    path = SCRIPTS / script
    plain = _in(tmp_path / "plain", [sys.executable, str(path), *args], timeout)
    ours = _in(tmp_path / "wrapped", [sys.executable, "-m", "wormhole_ns3", "run", "--results",
                                      "run.json", str(path), *args], timeout)
    assert (ours.returncode, ours.stdout) == (plain.returncode, plain.stdout), ours.stderr
    assert ours.stderr_lines == plain.stderr_lines
    assert _files(tmp_path / "wrapped") == _files(tmp_path / "plain")
    return plain, ours


@pytest.mark.slow
def test_a_run_ends_with_its_last_model_event_whatever_the_accelerator_has_pending(tmp_path):
    """The CSMA bridge: its OnOff flows stay "active" after their apps stop; the samplers went on for ever."""
    plain, _ = plain_and_wrapped(tmp_path, "csma_bridge.py")
    assert plain.returncode == 0
    assert plain.stdout.splitlines()[0] == "ended at 1001.100000 s"
    pcaps = sorted((tmp_path / "wrapped").glob("*.pcap"))
    assert len(pcaps) == 8 and all(p.stat().st_size > 24 for p in pcaps)
    results = load_json(tmp_path / "wrapped" / "run.json")
    assert results["sim_time_s"] == pytest.approx(1001.1)
    assert results["watchdog"] is None
    # the samplers tick while the OnOff apps send (1.0 s to 3.0 s), not to the last event
    # at 1001.1 s: a stopped application's flow keeps no sampler going
    sending = (3.0 - 1.0) / results["sample_period_s"]
    assert 0.9 * sending < results["system_events"] < 1.1 * sending


@pytest.mark.slow
def test_the_watchdog_ends_a_run_only_the_accelerators_events_keep_going(wormhole, tmp_path):
    done = wormhole("run", "--results", tmp_path / "run.json", SCRIPTS / "accelerator_hang.py",
                    timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["the model's event ran", "Run() returned at 1.999 s"]
    assert done.stderr_lines == [
        "wormhole-ns3: watchdog: from t=1.000000000 s only the accelerator's own events were "
        "left, where plain ns-3 ends a run; they kept it going to t=1.999000000 s, so it was ended"
    ]
    assert load_json(tmp_path / "run.json")["watchdog"] is not None


@pytest.mark.slow
def test_pcap_and_ascii_traces_are_complete_and_identical(tmp_path):
    plain, _ = plain_and_wrapped(tmp_path, "tcp_bulk_pcap.py")
    lines = plain.stdout.splitlines()
    assert lines[0] == "received 273896"
    # the script reads its traces right after Simulator::Destroy: they are closed by then
    assert lines[1:] == ["tcp-bulk-0-0.pcap 324844", "tcp-bulk-1-0.pcap 325194", "tcp-bulk.tr 972255"]


@pytest.mark.slow
def test_a_cpp_programs_pcap_files_are_closed_by_simulator_destroy(tmp_path):
    """Events pending at Stop hold devices; a reference to the simulator kept them, and the pcaps open."""
    program = SCRIPTS / "tcp_bulk_pcap.cc"
    runs = {}
    for mode in ("baseline", "accelerated"):
        flags = ["--baseline"] if mode == "baseline" else []
        runs[mode] = _in(tmp_path / mode, [sys.executable, "-m", "wormhole_ns3", "run", *flags,
                                           "--results", "run.json", str(program)], 600)
        assert runs[mode].returncode == 0, runs[mode].stderr
    assert runs["accelerated"].stdout == runs["baseline"].stdout == "received 273896\n"
    assert load_json(tmp_path / "accelerated" / "run.json")["skips"] == 0
    assert _files(tmp_path / "accelerated") == _files(tmp_path / "baseline")
    assert (tmp_path / "baseline" / "tcp-bulk-1-0.pcap").stat().st_size == 327828


@pytest.mark.slow
def test_names_in_strings_and_cppdef_find_modules_the_script_never_named(tmp_path):
    """Log components, TypeIds, attribute paths and cppdef'd C++ name modules not loaded yet."""
    plain, _ = plain_and_wrapped(tmp_path, "names_in_strings.py", "helper")
    assert plain.returncode == 0, plain.stderr
    assert plain.stdout.splitlines() == [
        "ns3::YansWifiPhy", "ns3::LteNetDevice", "x = 1.0", "pcap link type 105",
    ]


@pytest.mark.slow
@pytest.mark.parametrize("option", ["--PrintGlobals", "--PrintAttributes=ns3::TcpL4Protocol",
                                    "--PrintTypeIds"])
def test_ns3s_print_options_show_plain_ns3_whatever_is_loaded(tmp_path, option):
    plain, _ = plain_and_wrapped(tmp_path, "print_registry.py", option)
    assert plain.returncode == 0
    assert "Wormhole" not in plain.stdout and "SkipAware" not in plain.stdout
    expected = {"--PrintGlobals": "SimulatorImplementationType=[ns3::DefaultSimulatorImpl]",
                "--PrintAttributes=ns3::TcpL4Protocol": "[ns3::RttMeanDeviation]",
                "--PrintTypeIds": "ns3::zigbee::ZigbeeStack"}[option]
    assert expected in plain.stdout


@pytest.mark.slow
def test_a_cpp_program_including_single_module_headers_links_and_runs_as_built_natively(tmp_path):
    from wormhole_ns3.runtime import cxx, native

    program = SCRIPTS / "wifi_headers.cc"
    binary = tmp_path / "wifi_headers"
    subprocess.run([native.compiler(), *native.compile_flags(), str(program), "-o", str(binary),
                    *native.link_flags(tuple(cxx.modules_of(program.read_text())))], check=True)
    plain = subprocess.run([str(binary)], capture_output=True, text=True, check=True)
    assert plain.stdout == "pcap link type 105\n"
    for flags in ([], ["--baseline"]):
        ours = _in(tmp_path / f"run{len(flags)}", [sys.executable, "-m", "wormhole_ns3", "run", *flags,
                                                   str(program)], 600)
        assert (ours.returncode, ours.stdout) == (0, plain.stdout), ours.stderr


@pytest.mark.slow
def test_a_script_given_by_a_relative_path_sees_what_python_shows_it(tmp_path):
    """``__file__`` is absolute, ``sys.argv[0]`` as typed, tracebacks name the absolute path."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "where.py").write_text(
        "import sys\nprint(__file__, sys.argv[0])\nraise ValueError('here')\n")
    runs = [subprocess.run(command, cwd=tmp_path, env=child_environment(), capture_output=True,
                           text=True, timeout=300)
            for command in ([sys.executable, "sub/where.py"],
                            [sys.executable, "-m", "wormhole_ns3", "run", "sub/where.py"])]
    plain, ours = (Completed(r.returncode, r.stdout, r.stderr) for r in runs)
    assert plain.stdout == f"{tmp_path / 'sub' / 'where.py'} sub/where.py\n"
    assert (ours.returncode, ours.stdout, ours.stderr_lines) == (1, plain.stdout, plain.stderr_lines)


@pytest.mark.slow
def test_two_runs_each_ended_by_stop_resume_the_queue_as_plain_ns3_does(tmp_path):
    plain, _ = plain_and_wrapped(tmp_path, "stop_run_twice.py")
    assert plain.returncode == 0, plain.stderr
    first, second = plain.stdout.splitlines()
    assert first.startswith("first Run() returned at 0.200000 s, tcp received ")
    assert second.startswith("second Run() returned at 0.400000 s, tcp received ")
    tcp_first = int(first.split()[-1])
    tcp_second, udp = int(second.split()[-4]), int(second.split()[-1])
    assert tcp_second > tcp_first > 0 and udp > 0  # traffic in both runs
    assert {p.name for p in (tmp_path / "plain").iterdir()} == {
        "twice-0-0.pcap", "twice-1-0.pcap", "twice.tr"}


@pytest.mark.slow
@pytest.mark.parametrize("destroy", [False, True])
def test_a_script_that_never_runs_leaves_what_plain_ns3_leaves(tmp_path, destroy):
    """Without Destroy nothing flushes the traces (empty files); with it, pcap headers only."""
    args = ["--destroy"] if destroy else []
    plain, _ = plain_and_wrapped(tmp_path, "never_runs.py", *args)
    assert (plain.returncode, plain.stdout) == (0, "built; now 0.0 s; sink received 0\ndone\n")
    sizes = {p.name: p.stat().st_size for p in (tmp_path / "plain").iterdir()}
    pcap = 24 if destroy else 0
    assert sizes == {"never-0-0.pcap": pcap, "never-1-0.pcap": pcap, "never.tr": 0}
