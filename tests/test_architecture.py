"""The package's layers, checked from its source: no import cycles, folders in ARCHITECTURE.md's order.

Every import counts, function-local and ``TYPE_CHECKING`` ones included: a
cycle hidden inside a function is still a cycle a reader has to untangle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "wormhole_ns3"
ARCHITECTURE = PACKAGE.parent / "ARCHITECTURE.md"


def _modules() -> dict[str, Path]:
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = _modules()


def _imported(name: str, path: Path) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            targets = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != name and target != "wormhole_ns3" and not name.startswith(target + "."):
                found.add(target)
    return found


GRAPH = nx.DiGraph({name: _imported(name, path) for name, path in MODULES.items()})


def test_the_package_has_no_import_cycles():
    cycles = [sorted(c) for c in nx.strongly_connected_components(GRAPH) if len(c) > 1]
    assert cycles == []


def _imports_of(layer: str) -> set[str]:
    return {t for m in GRAPH if m == layer or m.startswith(layer + ".") for t in GRAPH.successors(m)}


@pytest.mark.parametrize("layer, forbidden", [
    ("wormhole_ns3.models", ("wormhole_ns3.accel", "wormhole_ns3.memo", "wormhole_ns3.tools",
                             "wormhole_ns3.run.harness")),
    ("wormhole_ns3.accel", ("wormhole_ns3.tools", "wormhole_ns3.models")),
    ("wormhole_ns3.memo", ("wormhole_ns3.tools", "wormhole_ns3.models")),
    ("wormhole_ns3.runtime.loader", ("wormhole_ns3.accel", "wormhole_ns3.memo", "wormhole_ns3.tools")),
    ("wormhole_ns3.runtime.native", ("wormhole_ns3.accel", "wormhole_ns3.memo", "wormhole_ns3.tools")),
])
def test_a_layer_never_imports_the_layers_above_it(layer, forbidden):
    reached = {t for t in _imports_of(layer) if t.startswith(forbidden)}
    assert reached == set()


def test_a_newcomer_finds_where_a_skip_is_decided_from_the_folder_names():
    assert (PACKAGE / "accel" / "steady.py").is_file() and (PACKAGE / "accel" / "fastforward.py").is_file()
    assert "Where a skip is decided" in (PACKAGE / "accel" / "__init__.py").read_text()


def _folder(module: str) -> str:
    """A module's folder: the package's top-level subpackage (or top-level module) holding it."""
    return module.split(".")[1]


#: The folder graph: an edge for every import from one folder into another (the package's
#: own __init__ re-exports its API and sits above every folder).
FOLDERS = nx.DiGraph()
FOLDERS.add_nodes_from(_folder(m) for m in GRAPH if m != "wormhole_ns3")
FOLDERS.add_edges_from((_folder(a), _folder(b)) for a, b in GRAPH.edges
                       if a != "wormhole_ns3" and _folder(a) != _folder(b))


def _written_order() -> list[list[str]]:
    """ARCHITECTURE.md's folder order, lowest first: ``core ← config ← ... ← tools, api ← __main__``."""
    line = next(line for line in ARCHITECTURE.read_text().splitlines() if re.match(r"core ←", line))
    return [[folder.strip() for folder in layer.split(",")] for layer in line.split("←")]


def test_the_folders_have_no_import_cycles():
    assert [sorted(c) for c in nx.strongly_connected_components(FOLDERS) if len(c) > 1] == []


def test_architecture_md_places_every_folder_once():
    written = [folder for layer in _written_order() for folder in layer]
    assert sorted(written) == sorted(FOLDERS.nodes)


def test_a_folder_imports_only_folders_below_it_in_architecture_md():
    layer = {folder: rank for rank, folders in enumerate(_written_order()) for folder in folders}
    upward = sorted(f"{a} -> {b}" for a, b in FOLDERS.edges if layer[b] >= layer[a])
    assert upward == []


def test_the_folder_checks_see_the_imports_they_judge():
    assert {("accel", "memo"), ("memo", "core"), ("run", "accel"), ("tools", "run")} <= set(FOLDERS.edges)
