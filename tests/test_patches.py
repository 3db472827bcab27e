"""The from-source patch installs every native module, as committed, as an ns-3 contrib module."""

import subprocess

from conftest import REPO

SCRIPT = REPO / "patches" / "apply-to-ns3-source.sh"
NATIVE = REPO / "native"
MODULES = sorted(p.parent.name for p in NATIVE.glob("*/CMakeLists.txt"))


def _fake_tree(root, version="3.44"):
    (root / "contrib").mkdir(parents=True)
    (root / "ns3").write_text("#!/bin/sh\n")
    (root / "VERSION").write_text(f"{version}\n")
    return root


def _files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_every_module_becomes_a_contrib_module_unchanged(tmp_path):
    tree = _fake_tree(tmp_path / "ns-3.44")
    subprocess.run(["bash", SCRIPT, tree], check=True, capture_output=True)
    assert MODULES == ["datacenter", "rdma", "wormhole", "wormhole-datacenter", "wormhole-rdma"]
    assert sorted(p.name for p in (tree / "contrib").iterdir()) == MODULES
    for module in MODULES:
        installed = tree / "contrib" / module
        # the committed CMakeLists.txt, model/, helper/, test/, doc/: nothing generated
        assert _files(installed) == _files(NATIVE / module)
        cmake = (installed / "CMakeLists.txt").read_text()
        assert f"LIBNAME {module}" in cmake
        for source in (installed / "model").glob("*.cc"):
            assert f"model/{source.name}" in cmake
        assert (installed / f"{module}-module.h").exists()


def test_a_second_run_replaces_the_modules_and_link_mode_symlinks_them(tmp_path):
    tree = _fake_tree(tmp_path / "ns-3.44")
    stale = tree / "contrib" / "wormhole" / "model" / "stale.cc"
    stale.parent.mkdir(parents=True)
    stale.write_text("// from an older install\n")
    subprocess.run(["bash", SCRIPT, tree], check=True, capture_output=True)
    assert not stale.exists()
    subprocess.run(["bash", SCRIPT, "--link", tree], check=True, capture_output=True)
    for module in MODULES:
        link = tree / "contrib" / module
        assert link.is_symlink() and link.resolve() == (NATIVE / module).resolve()


def test_a_tree_of_another_version_or_no_tree_is_refused(tmp_path):
    other = subprocess.run(
        ["bash", SCRIPT, _fake_tree(tmp_path / "ns-3.40", "3.40")], capture_output=True, text=True
    )
    assert other.returncode == 2 and "3.40" in other.stderr
    missing = subprocess.run(["bash", SCRIPT, tmp_path / "nothing"], capture_output=True, text=True)
    assert missing.returncode == 2 and "not an ns-3 source tree" in missing.stderr
