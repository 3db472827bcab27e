"""The user guide (``doc/``, Sphinx) builds with warnings as errors (a link to a missing page or section is one),
and the README's links land."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

DOC = REPO / "doc"
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


def test_the_readmes_links_land_on_files_of_the_repository():
    text = re.sub(r"```.*?```|`[^`]*`", "", (REPO / "README.md").read_text(), flags=re.S)  # code is no link
    targets = [target for target, _ in LINK.findall(text) if not re.match(r"[a-z]+:", target)]
    assert any(target.startswith("doc/") for target in targets)
    assert [target for target in targets if not (REPO / target).exists()] == []
