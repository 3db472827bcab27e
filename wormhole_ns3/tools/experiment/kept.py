"""Kept results: a finished run or comparison in the compact form the repository keeps, and back.

A plain ns-3 baseline of a paper-scale preset takes hours, so the repository
keeps it (``experiments/baselines/PRESET``) for ``experiment compare
--reuse-baseline``, and keeps each comparison's summary
(``experiments/scoreboard/PRESET``) for the scoreboard. ``keep_result`` makes
that form from a result folder:

* a run keeps every file but the Parquet copies of its tables; text files
  larger than ``GZIP_ABOVE_BYTES`` are gzipped (``flows.csv.gz``), with no time
  stamp in the gzip header, so the same run gives the same bytes;
* a comparison keeps its summary (``summary.json``, ``summary.md``), its
  per-iteration table and its plots, not the two runs (its baseline is kept
  on its own, and its accelerated run is remade in the time of the run alone);
* both hold ``command.txt``, the command that made the result.

``unpack_result`` turns a kept folder (or a result folder as a run left it)
back into a result folder, decompressing what was gzipped.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from wormhole_ns3.tools.experiment.child import RUN_RESULTS_FILE
from wormhole_ns3.tools.experiment.outdir import StagedDir
from wormhole_ns3.tools.experiment.registry import ExperimentError
from wormhole_ns3.tools.experiment.results import ITERATIONS_FILE, WORKLOAD_FILE, write_atomically
from wormhole_ns3.tools.experiment.run import COMMAND_FILE, SUMMARY_FILE, portable_args, write_json

GZIP_SUFFIX = ".gz"
#: Files larger than this are kept gzipped (small ones stay readable in a diff).
GZIP_ABOVE_BYTES = 16 * 1024
#: Files a kept result leaves out: copies of the CSV tables, and staging leftovers.
DROPPED_SUFFIXES = (".parquet", ".partial")
#: Files always kept as they are: what a reader and the reuse check open first.
PLAIN_FILES = (SUMMARY_FILE, COMMAND_FILE, "summary.md")
#: Files kept as they are because they are compressed already (the plots).
COMPRESSED_SUFFIXES = (".png",)
#: What a comparison keeps besides its summary files (the plots it draws are added by suffix).
COMPARISON_FILES = (ITERATIONS_FILE,)


@dataclass(frozen=True)
class KeptResult:
    """What ``keep_result`` made: the folder, whether it is a run or a comparison, and its files."""

    folder: Path
    kind: str
    files: tuple[str, ...]


def keep_result(source: Path, into: Path, command: str | None = None, force: bool = False) -> KeptResult:
    """Copy the finished result in ``source`` to ``into`` in kept form; ``command`` overrides its ``command.txt``."""
    source, into = Path(source), Path(into)
    summary = _finished_summary(source)
    kind = "run" if "mode" in summary else "comparison" if "events_ratio" in summary else None
    if kind is None:
        raise ExperimentError(f"{source}: its {SUMMARY_FILE} is neither a run's nor a comparison's")
    recorded = source / COMMAND_FILE
    if command is None and not recorded.is_file():
        raise ExperimentError(f"{source} records no {COMMAND_FILE}: give the command that made it with --command")
    summary = _with_portable_script(_with_workload_digest(source, summary) if kind == "run" else summary)
    staged = StagedDir.create(into, force)
    names = _run_files(source) if kind == "run" else _comparison_files(source)
    kept = [_keep_file(source / name, staged.staging, _portable_results(source / name) if kind == "run" else None)
            for name in names if name not in (SUMMARY_FILE, COMMAND_FILE)]
    write_atomically(staged.staging / COMMAND_FILE,
                     command.strip() + "\n" if command is not None else recorded.read_text())
    write_json(staged.staging / SUMMARY_FILE, summary)
    staged.commit()
    return KeptResult(into, kind, tuple(sorted([*kept, COMMAND_FILE, SUMMARY_FILE])))


def unpack_result(kept: Path, into: Path) -> None:
    """Copy the result in ``kept`` into the new folder ``into``, each ``X.gz`` decompressed to ``X``."""
    into.mkdir()
    for path in sorted(Path(kept).iterdir()):
        if not path.is_file():
            continue
        if path.name.endswith(GZIP_SUFFIX):
            with gzip.open(path, "rb") as packed, (into / path.name[:-len(GZIP_SUFFIX)]).open("wb") as plain:
                shutil.copyfileobj(packed, plain)
        else:
            shutil.copy2(path, into / path.name)


def _with_portable_script(summary: dict) -> dict:
    """The summary with no path of this machine: its script named from the repository (``experiments/x.py``),
    the result folder it was written to and its input files by their own names (``portable_args``)."""
    portable = summary
    script = Path(summary.get("script") or "")
    if script.is_absolute():
        parts = script.parts
        start = len(parts) - 1 - parts[::-1].index("experiments") if "experiments" in parts[:-1] else len(parts) - 1
        portable = {**portable, "script": Path(*parts[start:]).as_posix()}
    for field in ("argv", "script_args"):
        args = summary.get(field) or []
        if any(Path(arg).is_absolute() for arg in args):
            portable = {**portable, field: portable_args(args)}
    return portable


def _finished_summary(source: Path) -> dict:
    if not source.is_dir():
        raise ExperimentError(f"{source}: no such result folder")
    try:
        return json.loads((source / SUMMARY_FILE).read_text())
    except (OSError, ValueError):
        raise ExperimentError(f"{source}: not a finished result (no readable {SUMMARY_FILE})") from None


def _with_workload_digest(source: Path, summary: dict) -> dict:
    """The run's summary with the digest of its workload file, checked if recorded, added if not (older runs)."""
    workload = source / WORKLOAD_FILE
    if not workload.is_file():
        return summary
    digest = hashlib.sha256(workload.read_bytes()).hexdigest()
    recorded = summary.get("workload_sha256")
    if recorded is not None and recorded != digest:
        raise ExperimentError(f"{source}: its {WORKLOAD_FILE} does not match the workload_sha256 of its summary")
    return {**summary, "workload_sha256": digest}


def _run_files(source: Path) -> list[str]:
    return sorted(path.name for path in source.iterdir()
                  if path.is_file() and not path.name.endswith(DROPPED_SUFFIXES))


def _comparison_files(source: Path) -> list[str]:
    plots = [path.name for path in source.glob("*.png")]
    return sorted(name for name in (*PLAIN_FILES, *COMPARISON_FILES, *plots) if (source / name).is_file())


def _keep_file(path: Path, folder: Path, content: bytes | None = None) -> str:
    """Copy ``path`` (or ``content`` in its name) into ``folder``, gzipped if large; the kept file's name."""
    data = path.read_bytes() if content is None else content
    if path.name in PLAIN_FILES or path.name.endswith(COMPRESSED_SUFFIXES) or len(data) <= GZIP_ABOVE_BYTES:
        (folder / path.name).write_bytes(data)
        return path.name
    name = path.name + GZIP_SUFFIX
    with (folder / name).open("wb") as raw, \
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=9, mtime=0) as packed:
        packed.write(data)
    return name


def _portable_results(path: Path) -> bytes | None:
    """A run's ``run.json`` with its script named from the repository, if it names it from this machine."""
    if path.name != RUN_RESULTS_FILE:
        return None
    results = json.loads(path.read_text())
    portable = _with_portable_script(results)
    return None if portable is results else (json.dumps(portable, indent=1) + "\n").encode()
