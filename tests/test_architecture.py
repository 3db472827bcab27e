"""The package's layers, checked from its source: no import cycles, and models never reach into the accelerator.

Every import counts, function-local and ``TYPE_CHECKING`` ones included: a
cycle hidden inside a function is still a cycle a reader has to untangle.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "wormhole_ns3"


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
