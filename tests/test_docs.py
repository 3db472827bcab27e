"""The user guide (``doc/``, Sphinx) builds with warnings as errors (a link to a missing page or section is one),
the README's links land, and the native modules' pages name every TypeId, attribute and trace source their C++
declares, as ns-3's model docs do."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

DOC = REPO / "doc"
NATIVE = REPO / "native"
TYPE_ID = re.compile(r'TypeId\s*\(\s*"(ns3::\w+)"\s*\)')
DECLARED = re.compile(r'\.Add(Attribute|TraceSource)\s*\(\s*"(\w+)"')
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The guide built as CI builds it: every warning is an error, a MyST link to a missing section too."""
    out = tmp_path_factory.mktemp("html")
    built = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(DOC),
                            str(out)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr
    return out


def test_the_guide_builds_and_holds_every_page(site):
    sources = [path for path in DOC.rglob("*") if path.suffix in (".md", ".rst")]
    pages = {str(path.relative_to(DOC).with_suffix(".html")) for path in sources}
    assert {"index.html", "memoization.html", "randomness.html", "changelog.html", "models/wormhole.html"} <= pages
    assert [page for page in sorted(pages) if not (site / page).is_file()] == []


def _module_page(module: Path) -> str:
    (page,) = (module / "doc").glob("*.rst")
    return page.read_text()


def _declared(module: Path) -> dict[str, list[str]]:
    """Each TypeId a module's C++ registers, with the attributes and trace sources it adds."""
    declared: dict[str, list[str]] = {}
    for source in sorted(module.rglob("*.cc")):
        if "test" in source.parts:
            continue
        text = source.read_text()
        starts = [(match.start(), match.group(1)) for match in TYPE_ID.finditer(text)]
        for k, (start, name) in enumerate(starts):
            end = starts[k + 1][0] if k + 1 < len(starts) else len(text)
            declared[name] = [found.group(2) for found in DECLARED.finditer(text, start, end)]
    return declared


MODULES = sorted(path.parent for path in NATIVE.glob("*/CMakeLists.txt"))


@pytest.mark.parametrize("module", MODULES, ids=[module.name for module in MODULES])
def test_a_native_modules_page_is_in_the_guide_and_names_what_its_cxx_declares(module):
    included = f".. include:: ../../native/{module.name}/doc/{module.name}.rst"
    assert (DOC / "models" / f"{module.name}.rst").read_text().strip() == included
    page = _module_page(module)
    missing = []
    for name, items in _declared(module).items():
        missing += [name] if name not in page else []
        missing += [f"{name}::{item}" for item in items if f"``{name}::{item}``" not in page]
    assert not missing, f"native/{module.name}/doc/{module.name}.rst does not name {missing}"


def test_the_check_of_a_modules_page_sees_attributes_and_trace_sources():
    """The regexes behind the check above find what ns-3's TypeId chains declare."""
    declared = _declared(NATIVE / "rdma")
    assert declared["ns3::RdmaNic"][:2] == ["Mtu", "AckInterval"]
    assert declared["ns3::RdmaNic"][-2:] == ["FlowStart", "FlowFinish"]
    assert declared["ns3::RdmaBthHeader"] == []
    assert _declared(NATIVE / "wormhole")["ns3::FlowTracker"] == ["SampleDepth", "FlowStart", "FlowFinish"]


def test_the_readmes_links_land_on_files_of_the_repository():
    text = re.sub(r"```.*?```|`[^`]*`", "", (REPO / "README.md").read_text(), flags=re.S)  # code is no link
    targets = [target for target, _ in LINK.findall(text) if not re.match(r"[a-z]+:", target)]
    assert any(target.startswith("doc/") for target in targets)
    assert [target for target in targets if not (REPO / target).exists()] == []
