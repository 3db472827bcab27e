"""``experiment compare --seeds N``: the preset's plain runs under other RngRun values, and their spread.

Besides the comparison's baseline (run under what the environment gives,
ns-3's RngRun 1 by default), N-1 more plain runs, each through
``execute_run`` in a process of its own as the baseline is, are asked for the
RngRun values after the baseline's (``tools/seeds.py``) and kept in
``OUT/seeds/run-K``, whole: a reused baseline (``--reuse-baseline``) makes
these the only new plain runs. Per flow task and per iteration, the N plain
values' spread is set beside the accelerated run's error: columns
``fct_spread`` and ``fct_cv`` of the joined ``flows.csv``, ``time_spread`` and
``time_cv`` of ``iterations.csv``, and a ``SeedReport``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from wormhole_ns3.tools.experiment.child import RUN_RESULTS_FILE, ChildOptions
from wormhole_ns3.tools.experiment.registry import Experiment
from wormhole_ns3.tools.experiment.results import FLOWS_FILE, ITERATIONS_FILE, read_flows, read_iterations
from wormhole_ns3.tools.experiment.run import execute_run
from wormhole_ns3.tools.seeds import Matched, PlainRun, Quantity, SeedReport, SpreadSummary, seed_lines, seed_runs

SEEDS_DIR = "seeds"


def seed_folder(folder: Path, run: int) -> Path:
    """Where the plain run under RngRun ``run`` of the comparison in ``folder`` is kept."""
    return folder / SEEDS_DIR / f"run-{run}"


def run_seeds(experiment: Experiment, preset: str, folder: Path, options: ChildOptions, count: int,
              stop: threading.Event | None = None) -> list[int]:
    """Run the ``count - 1`` plain runs after the baseline's RngRun in ``folder`` (a comparison's); their runs."""
    baseline = json.loads((folder / "baseline" / RUN_RESULTS_FILE).read_text())
    runs = seed_runs(baseline.get("rng_run"), count)
    for run in runs:
        target = seed_folder(folder, run)
        target.mkdir(parents=True)
        execute_run(experiment, preset, target, replace(options, baseline=True, rng_run=run), stop)
    return runs


def seed_spread(folder: Path, runs: Sequence[int], flows, iterations) -> tuple[SeedReport, list[Matched]]:
    """ns-3's spread over the baseline and the seed runs ``runs`` in ``folder``, beside the joined tables' errors.

    Adds the spread columns to ``flows`` (by task) and ``iterations`` (by
    iteration); an item some plain run did not finish gets none.
    """
    folders = [folder / "baseline", *(seed_folder(folder, run) for run in runs)]
    plain_flows = [read_flows(plain / FLOWS_FILE) for plain in folders]
    plain_iterations = [_iterations(plain) for plain in folders]
    matched = [Matched.of(Quantity.FCT, [dict(zip(table["task"], table["fct"])) for table in plain_flows],
                          dict(zip(flows["task"], flows["rel_err"])))]
    _add_columns(flows, "task", "fct", matched[0])
    if len(iterations):
        matched.append(Matched.of(Quantity.ITERATION_TIME,
                                  [dict(zip(table["iteration"], table["time"])) for table in plain_iterations],
                                  dict(zip(iterations["iteration"], iterations["rel_err"]))))
        _add_columns(iterations, "iteration", "time", matched[1])
    plain = tuple(PlainRun.of_results(json.loads((plain / RUN_RESULTS_FILE).read_text()), asked, _outcome(plain))
                  for plain, asked in zip(folders, [None, *runs]))
    return SeedReport(plain, tuple(SpreadSummary.of(quantity) for quantity in matched)), matched


def _iterations(folder: Path):
    """A run's iterations, or an empty table for a script that writes none."""
    import pandas as pd

    path = folder / ITERATIONS_FILE
    return read_iterations(path) if path.exists() else pd.DataFrame({"iteration": [], "time": []})


def _add_columns(table, key: str, prefix: str, matched: Matched) -> None:
    per_item = matched.by_key()
    rows = [per_item.get(item) for item in table[key]]
    table[f"{prefix}_spread"] = [row.spread if row else None for row in rows]
    table[f"{prefix}_cv"] = [row.cv if row else None for row in rows]


def _outcome(folder: Path) -> str:
    """A digest of what a plain run's script computed: its flow and iteration tables, byte for byte."""
    digest = hashlib.sha256()
    for name in (FLOWS_FILE, ITERATIONS_FILE):
        path = folder / name
        digest.update(path.read_bytes() if path.exists() else b"")
    return digest.hexdigest()


def seed_markdown(seeds: dict) -> list[str]:
    """``seed_lines`` as Markdown list items: the case first, each quantity's lines under it."""
    lines = []
    for label, text in seed_lines(seeds):
        if label and not label.startswith(" "):
            lines.append(f"- {label}: {text}")
        else:
            lines.append(f"  - {label.strip()}: {text}" if label.strip() else f"  - {text}")
    return lines
