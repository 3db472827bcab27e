"""Result folders that appear only when complete, and never replace a finished result by accident.

A run writes into a staging folder next to the one asked for
(``OUT.partial``, or ``OUT.partial-2`` ... when an earlier interrupted run
left one) and renames it to ``OUT`` when it is done. An interrupted or failed
run therefore leaves its rows in the staging folder, and ``OUT`` holds either
nothing or a complete result. An existing non-empty ``OUT`` is replaced only
with ``force``, only if it is a result this product wrote, and only once the
new result is complete: ``--force`` never deletes a folder of the user's own.

A result is recognised by the file the product writes last into every result
folder, before the staged folder is renamed into place: ``summary.json`` (a
run or a comparison) or ``runs.csv`` (a sweep, written even when interrupted).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from itertools import count
from pathlib import Path

from wormhole_ns3.tools.experiment.registry import ExperimentError

#: Files only a finished result folder holds: ``run`` and ``compare`` write summary.json, ``sweep`` runs.csv.
RESULT_MARKERS = ("summary.json", "runs.csv")


@dataclass(frozen=True)
class StagedDir:
    """A result folder being written: ``staging`` now, renamed to ``final`` by ``commit``."""

    final: Path
    staging: Path
    force: bool

    @classmethod
    def create(cls, final: Path, force: bool = False) -> StagedDir:
        """Check that ``final`` may receive a result, and make its staging folder."""
        final = Path(final)
        check_writable(final, force)
        for attempt in count(1):
            staging = final.with_name(final.name + (".partial" if attempt == 1 else f".partial-{attempt}"))
            try:
                staging.mkdir()
            except FileExistsError:
                continue
            except OSError as error:
                raise ExperimentError(f"cannot write results to {final}: {error.strerror}") from None
            return cls(final, staging, force)
        raise AssertionError("unreachable")

    def commit(self) -> Path:
        """Move the finished result into place; keep it in staging (and say so) if that cannot be done."""
        if _non_empty(self.final) and not (self.force and is_result(self.final)):
            raise ExperimentError(
                f"{self.final} was filled while this run went on; its result is kept in {self.staging}"
            )
        replaced = None
        if self.final.is_dir():
            replaced = self.final.with_name(self.staging.name + ".replaced")
            self.final.rename(replaced)
        self.staging.rename(self.final)
        if replaced is not None:
            shutil.rmtree(replaced)
        return self.final


def check_writable(final: Path, force: bool) -> None:
    """Raise ExperimentError if ``final`` is a file, or cannot be made, or is non-empty and may not be replaced.

    A non-empty folder may be replaced only with ``force`` and only if it is
    a result (``is_result``); the error says which of the two is missing.
    """
    blocking = next((p for p in (final, *final.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise ExperimentError(f"cannot write results to {final}: {blocking} is a file")
    if _non_empty(final) and not is_result(final):
        raise ExperimentError(
            f"{final} holds files that are not a wormhole-ns3 result: refusing to replace it; choose another --out"
        )
    if _non_empty(final) and not force:
        raise ExperimentError(f"{final} already holds results; choose another --out or pass --force to replace them")
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ExperimentError(f"cannot write results to {final}: {error.strerror}") from None


def is_result(folder: Path) -> bool:
    """Whether ``folder`` is a result folder this product wrote (it holds one of ``RESULT_MARKERS``)."""
    return any((folder / marker).is_file() for marker in RESULT_MARKERS)


def _non_empty(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())
