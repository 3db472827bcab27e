"""The README's two commands are the ones CI and the Dockerfile run."""

import json
import re
import subprocess

from wormhole_ns3.tools.experiment.registry import get_experiment

from conftest import REPO


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    setup = text.split("## Set-up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", setup, re.S)]


def test_readme_gives_exactly_two_setup_commands():
    commands = readme_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    assert "pytest" in commands[1]


def test_the_readme_and_the_image_run_the_same_main_job():
    """The README's first command ends with the image's default command, in ./results instead of /results."""
    main_job = readme_commands()[0].rsplit(" && ", 1)[1].split()
    (cmd,) = [json.loads(args) for instruction, args in dockerfile_instructions() if instruction == "CMD"]
    assert main_job == [arg.replace("/results/", "results/") for arg in cmd]


def test_the_test_command_runs_the_fast_tier_then_the_slow_one():
    """``pytest`` alone is the fast tier (pyproject deselects slow and long tests); the README's command runs
    the fast and slow tiers, each on as many workers as the machine has cores, a module's tests on one worker."""
    pyproject = (REPO / "pyproject.toml").read_text()
    assert re.search(r"""^addopts = "-m 'not slow and not long' --dist loadscope"$""", pyproject, re.MULTILINE)
    extras = pyproject.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    (test_extras,) = re.findall(r'^test = \[(.*?")\]$', extras, re.MULTILINE | re.DOTALL)
    assert '"pytest-xdist>=' in test_extras
    assert readme_commands()[1].endswith("python -m pytest -q -n auto && python -m pytest -q -m slow -n auto")


def test_ci_runs_the_readmes_test_command():
    ci = (REPO / ".ci" / "run").read_text()
    assert readme_commands()[1] in ci


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(instruction, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return [tuple(line.split(None, 1)) for line in lines]


def docker_usage() -> list[str]:
    """The docker commands the README gives, one per line."""
    text = (REPO / "README.md").read_text()
    section = text.split("## Docker", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [line for line in block.splitlines() if line.startswith("docker ")]


def test_dockerfile_installs_with_the_readmes_install_command():
    install = readme_commands()[0].rsplit(" && ", 1)[0]  # without the demo itself
    run_lines = [args for instruction, args in dockerfile_instructions() if instruction == "RUN"]
    assert install in run_lines


def test_the_images_steps_run_as_a_plain_script(tmp_path):
    steps = [args for instruction, args in dockerfile_instructions() if instruction == "RUN"]
    script = tmp_path / "steps.sh"
    script.write_text("set -e\n" + "\n".join(steps) + "\n")
    checked = subprocess.run(["bash", "-n", script], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr


def test_the_image_runs_a_small_memoized_experiment_compare_into_results():
    (cmd,) = [json.loads(args) for instruction, args in dockerfile_instructions() if instruction == "CMD"]
    assert cmd[:3] == ["wormhole-ns3", "experiment", "compare"]
    assert cmd[cmd.index("--memo") + 1].startswith("/results/")
    experiment = get_experiment(cmd[3])
    preset = cmd[cmd.index("--preset") + 1]
    assert preset in experiment.presets and "small" in preset
    assert cmd[cmd.index("--out") + 1].startswith("/results/")
    assert ("WORKDIR", "/results") in dockerfile_instructions()


def test_readme_and_dockerfile_give_the_same_docker_commands():
    header = [line[1:].strip() for line in (REPO / "Dockerfile").read_text().splitlines() if line.startswith("#")]
    usage = docker_usage()
    assert usage[0] == "docker build -t wormhole-ns3 ."
    assert any(" -v " in line and ":/results" in line for line in usage)
    assert all(line in header for line in usage)


def test_the_package_ships_the_shim_sources():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"wormhole_ns3._native" = "native"' in pyproject
    assert (REPO / "native" / "wormhole" / "wormhole-module.h").exists()
    from wormhole_ns3.runtime import native

    assert (REPO / "native" / native.MARKER).exists()


def test_package_data_ships_every_file_a_module_build_needs():
    from fnmatch import fnmatch

    pyproject = (REPO / "pyproject.toml").read_text()
    line = re.search(r'^"wormhole_ns3\._native" = \[(.*)\]', pyproject, re.M).group(1)
    patterns = re.findall(r'"([^"]+)"', line)
    native = REPO / "native"
    for cmake in native.glob("*/CMakeLists.txt"):
        module = cmake.parent
        for path in module.rglob("*"):
            if path.is_file():
                relative = str(path.relative_to(native))
                assert any(fnmatch(relative, p) and relative.count("/") == p.count("/")
                           for p in patterns), f"{relative} would be missing from a wheel"


def test_every_python_package_is_listed_for_installation():
    pyproject = (REPO / "pyproject.toml").read_text()
    packages = re.search(r"^packages = \[(.*)\]", pyproject, re.M).group(1)
    for init in (REPO / "wormhole_ns3").rglob("__init__.py"):
        name = ".".join(init.parent.relative_to(REPO).parts)
        assert f'"{name}"' in packages, f"{name} would be missing from a non-editable install"
