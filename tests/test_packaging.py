"""The README's two commands are the ones CI and the Dockerfile run."""

import re

from conftest import REPO


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    setup = text.split("## Set-up on a fresh machine", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", setup, re.S)]


def test_readme_gives_exactly_two_setup_commands():
    commands = readme_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    assert commands[0].endswith("wormhole-ns3 demo")
    assert "pytest" in commands[1]


def test_ci_runs_the_readmes_test_command():
    ci = (REPO / ".ci" / "run").read_text()
    assert readme_commands()[1] in ci


def test_dockerfile_installs_with_the_readmes_install_command():
    install = readme_commands()[0].rsplit(" && ", 1)[0]  # without the demo itself
    dockerfile = (REPO / "Dockerfile").read_text()
    run_lines = [line[4:] for line in dockerfile.splitlines() if line.startswith("RUN ")]
    assert install in run_lines
    assert re.search(r'^CMD \["wormhole-ns3", "demo"', dockerfile, re.M)


def test_the_package_ships_the_shim_sources():
    pyproject = (REPO / "pyproject.toml").read_text()
    assert '"wormhole_ns3._native" = "native"' in pyproject
    assert (REPO / "native" / "wormhole-module.h").exists()


def test_every_python_package_is_listed_for_installation():
    pyproject = (REPO / "pyproject.toml").read_text()
    packages = re.search(r"^packages = \[(.*)\]", pyproject, re.M).group(1)
    for init in (REPO / "wormhole_ns3").rglob("__init__.py"):
        name = ".".join(init.parent.relative_to(REPO).parts)
        assert f'"{name}"' in packages, f"{name} would be missing from a non-editable install"
