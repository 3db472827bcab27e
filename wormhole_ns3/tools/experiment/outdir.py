"""Result folders that appear only when complete, and never replace a finished result by accident.

A run writes into a staging folder next to the one asked for
(``OUT.partial``, or ``OUT.partial-2`` ... when an earlier interrupted run
left one) and renames it to ``OUT`` when it is done. An interrupted or failed
run therefore leaves its rows in the staging folder, and ``OUT`` holds either
nothing or a complete result. An existing non-empty ``OUT`` is replaced only
with ``force``, and only once the new result is complete.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from itertools import count
from pathlib import Path

from wormhole_ns3.tools.experiment.registry import ExperimentError


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
        if _non_empty(self.final) and not self.force:
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
    """Raise ExperimentError if ``final`` is a file, or a non-empty folder and not ``force``, or cannot be made."""
    blocking = next((p for p in (final, *final.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise ExperimentError(f"cannot write results to {final}: {blocking} is a file")
    if _non_empty(final) and not force:
        raise ExperimentError(f"{final} already holds results; choose another --out or pass --force to replace them")
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ExperimentError(f"cannot write results to {final}: {error.strerror}") from None


def _non_empty(folder: Path) -> bool:
    return folder.is_dir() and any(folder.iterdir())
