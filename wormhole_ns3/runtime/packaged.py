"""Folders of the repository that a wheel ships inside the package: the shim's C++ sources, the experiment scripts.

pyproject.toml maps each such top-level folder ``<name>`` to a package
``wormhole_ns3._<name>``, so a non-editable install has its own copy next to
the Python code, while a checkout (or an editable install) uses the folder
itself. One resolver keeps the two layouts from drifting apart.
"""

from __future__ import annotations

from pathlib import Path


def packaged_dir(name: str, marker: str | None = None) -> Path:
    """``wormhole_ns3/_<name>`` when installed from a wheel, else the repository's ``<name>/``.

    ``marker`` is a file the installed copy always holds, when there is one,
    so that a stray empty folder is not taken for an installed copy.
    """
    package = Path(__file__).resolve().parents[1]
    installed = package / f"_{name}"
    if (installed / marker).exists() if marker else installed.is_dir():
        return installed
    return package.parent / name
