"""The from-source patch installs every shim file as an ns-3 contrib module."""

import subprocess

from conftest import REPO

SCRIPT = REPO / "patches" / "apply-to-ns3-source.sh"


def _fake_tree(root, version="3.44"):
    (root / "contrib").mkdir(parents=True)
    (root / "ns3").write_text("#!/bin/sh\n")
    (root / "VERSION").write_text(f"{version}\n")
    return root


def test_the_shim_becomes_a_contrib_module(tmp_path):
    tree = _fake_tree(tmp_path / "ns-3.44")
    subprocess.run(["bash", SCRIPT, tree], check=True, capture_output=True)
    module = tree / "contrib" / "wormhole"
    cmake = (module / "CMakeLists.txt").read_text()
    for source in (REPO / "native" / "model").glob("*.cc"):
        assert (module / "model" / source.name).read_bytes() == source.read_bytes()
        assert f"model/{source.name}" in cmake
    assert "LIBNAME wormhole" in cmake
    assert (module / "wormhole-module.h").exists()


def test_a_tree_of_another_version_or_no_tree_is_refused(tmp_path):
    other = subprocess.run(
        ["bash", SCRIPT, _fake_tree(tmp_path / "ns-3.40", "3.40")], capture_output=True, text=True
    )
    assert other.returncode == 2 and "3.40" in other.stderr
    missing = subprocess.run(["bash", SCRIPT, tmp_path / "nothing"], capture_output=True, text=True)
    assert missing.returncode == 2 and "not an ns-3 source tree" in missing.stderr
