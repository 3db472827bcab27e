"""Experiments by name, their presets, and their scripts in a checkout and in an installed wheel."""

import ast
import subprocess
import sys
import zipfile

import pytest

from wormhole_ns3.examples import DUMBBELL_PRESETS, dumbbell_path
from wormhole_ns3.models.workloads import list_presets
from wormhole_ns3.tools.experiment.iteration_lines import IterationLines
from wormhole_ns3.tools.experiment.registry import (
    Experiment,
    ExperimentError,
    experiment_script,
    experiments,
    get_experiment,
)

from conftest import REPO


def test_llm_training_has_a_preset_per_workload_preset_and_transport():
    llm = get_experiment("llm-training")
    assert llm.script == REPO / "experiments" / "llm_training.py"
    for name in list_presets():
        assert llm.presets[name] == ["--preset", name]
        assert llm.presets[f"{name}-dcqcn"] == ["--preset", name, "--transport", "dcqcn"]
        assert llm.presets[f"{name}-hpcc"] == ["--preset", name, "--transport", "hpcc"]
    assert len(llm.presets) == 3 * len(list_presets())
    assert llm.default_preset == "gpt-small"
    assert llm.results_dir_option == "--results-dir"


def test_the_dumbbell_experiment_is_the_demo():
    dumbbell = get_experiment("dctcp-dumbbell")
    assert dumbbell.script == dumbbell_path() and dumbbell.script.is_file()
    assert dumbbell.script_args("small") == list(DUMBBELL_PRESETS["small"]) == [
        "--flows", "4", "--min-mb", "30", "--max-mb", "60"]
    assert dumbbell.script_args("default") == []
    assert dumbbell.results_dir_option is None  # the runner takes its flows from the harness


def test_unknown_names_are_told_with_the_known_ones():
    with pytest.raises(ExperimentError, match="unknown experiment 'llm'; known experiments: llm-training, "
                                              "dctcp-dumbbell, two-rings, moe-alltoall, hierarchical-allreduce, "
                                              "pipeline-1f1b, background-traffic, two-jobs$") as error:
        get_experiment("llm")
    assert error.value.exit_code == 2
    with pytest.raises(ExperimentError, match="dctcp-dumbbell has no preset 'tiny'; its presets: small, "
                                              "default, stagger-2ms, four-10ms, sixteen-1ms, cubic"):
        get_experiment("dctcp-dumbbell").script_args("tiny")


ZOO = REPO / "experiments" / "zoo"


def test_every_zoo_script_is_a_user_script_experiment_reporting_its_iterations_in_its_output():
    zoo = {experiment.script: experiment for experiment in experiments().values() if experiment.user_script}
    assert sorted(zoo) == sorted(ZOO.glob("*.py"))
    for experiment in zoo.values():
        assert experiment.results_dir_option is None  # flows from the harness
        assert experiment.iteration_lines == IterationLines()
        assert experiment.iteration_lines.pattern.pattern == r"iteration (\d+) end (\S+)"
        assert experiment.default_preset == "default" and experiment.script_args("default") == []
        assert len(experiment.presets) >= 3  # its defaults, and small ones that vary its parameters
    assert not any(experiment.user_script for experiment in (get_experiment("llm-training"),
                                                             get_experiment("dctcp-dumbbell")))


def script_options(script):
    """The options a script's argparse parser takes: the first argument of each ``add_argument`` call."""
    calls = [node for node in ast.walk(ast.parse(script.read_text())) if isinstance(node, ast.Call)]
    return {call.args[0].value for call in calls
            if isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument"}


def test_every_zoo_preset_gives_options_its_script_takes():
    for experiment in experiments().values():
        if experiment.user_script:
            options = script_options(experiment.script)
            assert "--iterations" in options or "--ring-iterations" in options
            for preset in experiment.presets:
                given = {arg for arg in experiment.script_args(preset) if arg.startswith("--")}
                assert given <= options, f"{experiment.name} {preset}: {sorted(given - options)}"


def test_a_default_preset_must_be_one_of_the_presets():
    with pytest.raises(ValueError, match="default preset 'b' is not one of its presets"):
        Experiment("x", REPO / "x.py", "", {"a": []}, "b")


def test_the_registry_is_built_fresh_for_each_caller():
    mine = experiments()
    mine.pop("llm-training")
    assert "llm-training" in experiments()


def test_experiment_scripts_are_found_in_the_checkout():
    assert experiment_script("scripts/udp_echo.py") == REPO / "experiments" / "scripts" / "udp_echo.py"
    assert experiment_script("scripts/udp_echo.py").is_file()


@pytest.mark.slow
def test_an_installed_wheel_carries_the_experiment_scripts(tmp_path):
    """``pip install .`` (not editable): the experiments come along inside the package, and are found there."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp_path, REPO],
        check=True, cwd=tmp_path, capture_output=True,
    )
    (wheel,) = tmp_path.glob("wormhole_ns3-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    kept_results = ("baselines", "scoreboard")  # kept runs stay in the repository, not in the package
    shipped = sorted(p.relative_to(REPO / "experiments").as_posix()
                     for p in (REPO / "experiments").rglob("*") if p.suffix in (".py", ".cc", ".md")
                     and p.relative_to(REPO / "experiments").parts[0] not in kept_results)
    assert shipped and all(f"wormhole_ns3/_experiments/{name}" in names for name in shipped)
    assert "wormhole_ns3/tools/experiment/registry.py" in names
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", site, wheel],
                   check=True, capture_output=True)
    probe = subprocess.run(
        [sys.executable, "-c",
         "from wormhole_ns3.tools.experiment.registry import experiment_script, get_experiment\n"
         "print(experiment_script('scripts/udp_echo.py'))\n"
         "print(get_experiment('llm-training').script.parent)\n"
         "print(get_experiment('dctcp-dumbbell').script)"],
        cwd=tmp_path, env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
    )
    assert probe.returncode == 0, probe.stderr
    udp_echo, llm_folder, dumbbell = probe.stdout.split()
    installed = site / "wormhole_ns3"
    assert udp_echo == str(installed / "_experiments" / "scripts" / "udp_echo.py")
    assert llm_folder == str(installed / "_experiments")
    assert dumbbell == str(installed / "examples" / "dctcp_dumbbell.py")


def test_a_users_own_inputs_make_a_preset_of_absolute_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "microAllReduce.txt").write_text("")
    (tmp_path / "topo").write_text("")
    llm = get_experiment("llm-training")
    made, name = llm.with_inputs(None, {"--simai": "microAllReduce.txt", "--topology-file": "topo",
                                        "--intra-server": "nvlink"})
    assert name == "simai-microAllReduce-topo-nvlink"
    assert made.script_args(name) == ["--simai", str(tmp_path / "microAllReduce.txt"),
                                      "--topology-file", str(tmp_path / "topo"), "--intra-server", "nvlink"]
    made, name = llm.with_inputs("gpt-small-dcqcn", {"--topology-file": "topo"})
    assert (name, made.script_args(name)) == (
        "gpt-small-dcqcn-topo",
        ["--preset", "gpt-small", "--transport", "dcqcn", "--topology-file", str(tmp_path / "topo")])


def test_chakra_traces_of_ones_own_make_a_preset_of_their_absolute_folder_or_prefix(tmp_path, monkeypatch):
    from chakra_protoc import comp, write_trace

    monkeypatch.chdir(tmp_path)
    (tmp_path / "traces").mkdir()
    write_trace(tmp_path / "traces" / "llama", [[comp(1, 10)], [comp(1, 10)]])
    llm = get_experiment("llm-training")
    for given, name in (("traces", "chakra-traces-dcqcn"), ("traces/llama", "chakra-llama-dcqcn")):
        made, preset = llm.with_inputs(None, {"--chakra": given, "--transport": "dcqcn"})
        assert (preset, made.script_args(preset)) == (
            name, ["--chakra", str(tmp_path / given), "--transport", "dcqcn"])
    with pytest.raises(ExperimentError) as error:
        llm.with_inputs(None, {"--chakra": "traces/gpt"})
    assert str(error.value) == ("--chakra: traces/gpt: no such folder, and no Chakra traces gpt.<rank>.et "
                                "beside it")


def test_a_gradient_bucket_count_reads_as_buckets_in_the_preset_name():
    llm = get_experiment("llm-training")
    made, name = llm.with_inputs("moe-8x7b-64g-dcqcn", {"--iterations": "1", "--dp-buckets": "1"})
    assert (name, made.script_args(name)) == (
        "moe-8x7b-64g-dcqcn-1-1bucket",
        ["--preset", "moe-8x7b-64g", "--transport", "dcqcn", "--iterations", "1", "--dp-buckets", "1"])
    assert llm.with_inputs("gpt-small", {"--dp-buckets": "2"})[1] == "gpt-small-2buckets"


@pytest.mark.parametrize("preset, given, message", [
    (None, {"--simai": "absent.txt"}, "--simai absent.txt: no such file"),
    (None, {"--hpcc-flows": "."}, "--hpcc-flows .: is a directory, not a file"),
    ("gpt-small", {"--simai": "w.txt"}, "--preset and --simai are alternatives: give one of them"),
])
def test_bad_inputs_of_ones_own_are_one_line(tmp_path, monkeypatch, preset, given, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "w.txt").write_text("")
    with pytest.raises(ExperimentError) as error:
        get_experiment("llm-training").with_inputs(preset, given)
    assert str(error.value) == message
    with pytest.raises(ExperimentError, match="^experiment dctcp-dumbbell takes no --simai$"):
        get_experiment("dctcp-dumbbell").with_inputs(None, {"--simai": "w.txt"})
