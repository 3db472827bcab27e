"""``wormhole-ns3 compare``: the same script, baseline and accelerated, in separate processes.

With ``--seeds N``, N-1 more plain runs under other RngRun values, each a
process as the baseline is, measure ns-3's own seed-to-seed spread per flow
(``tools/seeds.py``); ``--plot`` draws it beside the accelerated run's error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.tools.experiment.child import die_with_parent_hook
from wormhole_ns3.tools.options import run_command
from wormhole_ns3.tools.report import comparison, flow_keys, format_table
from wormhole_ns3.tools.seeds import (
    Matched,
    PlainRun,
    Quantity,
    SeedCase,
    SeedReport,
    SpreadSummary,
    flow_fcts,
    seed_lines,
    seed_runs,
    seeded_environment,
)


def run_child(command: list[str], label: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run one side; its stdout is captured (compared later), its stderr passes through.

    The child dies with this process (a ``kill -9`` of compare leaves no ns-3 run behind, on Linux).
    """
    print(f"[wormhole] running {label} ...", file=sys.stderr, flush=True)
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, preexec_fn=die_with_parent_hook(), env=env)
    return done.returncode, done.stdout


class RunFailed(Exception):
    """A child run failed (it said so on stderr); ``code`` is the exit code compare returns."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def run_side(command: list[str], label: str, results: Path, env: dict[str, str] | None = None) -> tuple[dict, str]:
    """Run one child to completion: its results (``results``, the file it writes) and its stdout."""
    code, stdout = run_child(command, label, env)
    if code != 0 or not results.exists():
        print(f"wormhole-ns3: the {label} run failed (exit code {code})", file=sys.stderr)
        raise RunFailed(code or 1)
    return json.loads(results.read_text()), stdout


def compare_script(
    script: str,
    argv: list[str],
    config: AcceleratorConfig,
    json_out: Path | None,
    trace: Path | None,
    progress: bool = False,
    memo: Path | None = None,
    memo_key: Path | None = None,
    seeds: int | None = None,
    plot: Path | None = None,
) -> int:
    """Run baseline then accelerated (then the seed runs); print the table; write the JSON (and the plot)."""
    if not Path(script).is_file():
        print(f"wormhole-ns3: can't open file '{script}': no such file", file=sys.stderr)
        return 2
    runs, outputs = {}, {}
    with tempfile.TemporaryDirectory(prefix="wormhole-compare-") as tmp:
        try:
            for side in ("baseline", "accelerated"):
                accelerated = side == "accelerated"
                results = Path(tmp) / f"{side}.json"
                command = run_command(
                    script, argv, results, not accelerated, config,
                    trace if accelerated else None, progress and accelerated, memo, memo_key,
                )
                runs[side], outputs[side] = run_side(command, side, results)
            plain: list[tuple[int | None, dict]] = [(None, runs["baseline"])]
            for run in seed_runs(runs["baseline"].get("rng_run"), seeds) if seeds else []:
                results = Path(tmp) / f"baseline-{run}.json"
                command = run_command(script, argv, results, True, config)
                plain.append((run, run_side(command, f"RngRun {run} baseline", results,
                                            seeded_environment(os.environ, run))[0]))
        except RunFailed as failure:
            return failure.code
    summary = comparison(runs["baseline"], runs["accelerated"])
    summary["stdout_identical"] = outputs["baseline"] == outputs["accelerated"]
    summary["seeds"] = None
    matched = add_seed_spread(summary, plain) if seeds else None
    print(format_table(summary))
    if matched is not None:
        print("\n".join(f"{label:<21} {text}" for label, text in seed_lines(summary["seeds"])))
    if plot is not None and matched is not None:
        case = SeedCase(summary["seeds"]["case"])
        if case is SeedCase.VARIES:
            from wormhole_ns3.tools.experiment.plots import seed_spread

            seed_spread([matched], plot)
        else:
            print(f"wormhole-ns3: {plot} not drawn: the plain runs have no seed spread to draw ({case})",
                  file=sys.stderr)
    if json_out is not None:
        partial = Path(json_out).with_name(Path(json_out).name + ".partial")
        partial.write_text(json.dumps(summary, indent=1))
        partial.replace(json_out)
    return 0


def add_seed_spread(summary: dict, plain: list[tuple[int | None, dict]]) -> Matched:
    """Put the plain runs' seed spread in ``summary``: per flow beside its error, and as ``summary["seeds"]``.

    ``plain`` holds each plain run's asked RngRun (None for the baseline) and results, the baseline's first.
    """
    keys = flow_keys(summary["flows"])
    matched = Matched.of(Quantity.FCT, [flow_fcts(results) for _, results in plain],
                         {key: row["rel_err"] for key, row in zip(keys, summary["flows"])})
    per_flow = matched.by_key()
    for row, key in zip(summary["flows"], keys):
        item = per_flow.get(key)
        row.update(fct_seeds=item.values if item else None, seed_spread=item.spread if item else None,
                   seed_cv=item.cv if item else None)
    runs = tuple(PlainRun.of_results(results, asked) for asked, results in plain)
    summary["seeds"] = SeedReport(runs, (SpreadSummary.of(matched),)).as_dict()
    return matched
