"""The sweep's distribution: per-scenario errors over all scenarios, against the issue's bounds.

Written as ``scenarios.csv`` (one row per scenario: its results, its shortcuts, its
parameters), ``summary.json`` (the distribution and the counts) and ``errors.png``
(the CDFs of per-scenario max and mean FCT error, bounds marked).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from outcome import DRAW_CASES, Outcome

#: The 99th percentile of per-scenario max FCT error may be at most this (issue 36).
MAX_ERROR_P99_BOUND = 0.03
#: The mean of per-scenario mean FCT error may be at most this.
MEAN_ERROR_BOUND = 0.005


@dataclass(frozen=True)
class Failure:
    """A scenario with no comparison: its compare run failed, or it finished fewer flows on one side."""

    index: int
    name: str
    reason: str


def _stats(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"mean": None, "median": None, "p99": None, "max": None}
    array = np.asarray(values, dtype=float)
    return {"mean": float(array.mean()), "median": float(np.median(array)),
            "p99": float(np.percentile(array, 99)), "max": float(array.max())}


def summary(seed: int, outcomes: list[Outcome], failures: list[Failure]) -> dict[str, Any]:
    """The distribution of per-scenario errors, the bounds' verdicts, and how many scenarios took each shortcut."""
    max_errors = [o.fct_max for o in outcomes]
    mean_errors = [o.fct_mean for o in outcomes]
    of_max, of_mean = _stats(max_errors), _stats(mean_errors)
    inexact = [o.spec.name for o in outcomes if not o.rx_bytes_exact]
    over = sorted(((o.fct_max, o.spec.name) for o in outcomes if o.fct_max > MAX_ERROR_P99_BOUND), reverse=True)
    ratios = np.asarray([o.events_ratio for o in outcomes] or [1.0])
    speedups = np.asarray([o.speedup for o in outcomes] or [1.0])
    return {
        "seed": seed,
        "scenarios": len(outcomes) + len(failures),
        "compared": len(outcomes),
        "failed": [{"index": f.index, "name": f.name, "reason": f.reason} for f in failures],
        "per_scenario_max_fct_error": of_max,
        "per_scenario_mean_fct_error": of_mean,
        "bounds": {
            "p99_of_max_fct_error": MAX_ERROR_P99_BOUND,
            "mean_of_mean_fct_error": MEAN_ERROR_BOUND,
            "p99_of_max_met": of_max["p99"] is not None and of_max["p99"] <= MAX_ERROR_P99_BOUND,
            "mean_of_mean_met": of_mean["mean"] is not None and of_mean["mean"] <= MEAN_ERROR_BOUND,
            "packet_sink_totals_met": not inexact and not failures,
        },
        "scenarios_over_max_bound": [{"name": name, "fct_max_err": error} for error, name in over],
        "packet_sink_totals_differ": len(inexact),
        "packet_sink_totals_differ_in": inexact,
        "script_output_differs": sum(1 for o in outcomes if not o.stdout_identical),
        "events_ratio": {"median": float(np.median(ratios)), "geomean": float(np.exp(np.log(ratios).mean()))},
        "run_speedup": {"median": float(np.median(speedups)), "geomean": float(np.exp(np.log(speedups).mean()))},
        "shortcuts": {
            "with_skips": sum(1 for o in outcomes if o.skips),
            "with_skip_backs": sum(1 for o in outcomes if o.skip_backs),
            "with_memo_hits": sum(1 for o in outcomes if o.memo.get("memo_hits")),
            "with_memo_mirrors": sum(1 for o in outcomes if o.memo.get("memo_mirrored")),
            "with_memo_divergences": sum(1 for o in outcomes if o.memo.get("memo_diverged")),
            "that_drew_random_numbers": sum(1 for o in outcomes if o.trace.drew),
            "with_trace_rows_by_draws_case": {case: sum(1 for o in outcomes if o.trace.draws.get(case))
                                              for case in DRAW_CASES},
        },
    }


def write_table(outcomes: list[Outcome], path: Path) -> None:
    rows = [o.row() for o in outcomes]
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", newline="") as out:
        if rows:
            writer = csv.DictWriter(out, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    partial.replace(path)


def write_summary(document: dict[str, Any], path: Path) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(document, indent=1) + "\n")
    partial.replace(path)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.3%}"


def summary_text(document: dict[str, Any]) -> str:
    """The distribution in a few lines (what the sweep prints)."""
    of_max, of_mean = document["per_scenario_max_fct_error"], document["per_scenario_mean_fct_error"]
    failed = document["failed"]
    return "\n".join([
        f"{document['compared']} of {document['scenarios']} scenarios compared"
        + (f", {len(failed)} failed: " + ", ".join(f["name"] for f in failed) if failed else ""),
        f"per-scenario max FCT error: p99 {_pct(of_max['p99'])}, mean {_pct(of_max['mean'])}, "
        f"median {_pct(of_max['median'])}, max {_pct(of_max['max'])}",
        f"per-scenario mean FCT error: mean {_pct(of_mean['mean'])}, max {_pct(of_mean['max'])}",
        f"PacketSink totals differ in {document['packet_sink_totals_differ']} scenarios; "
        f"script output differs in {document['script_output_differs']}",
    ])


def findings(document: dict[str, Any]) -> str:
    """The distribution against the bounds, the shortcuts taken and the scenarios over the max bound, in Markdown.

    ``summary.md`` under its title, and the README's block (``readme.py``): so that no
    number of the README is typed by hand.
    """
    bounds, shortcuts = document["bounds"], document["shortcuts"]
    verdict = lambda met: "met" if met else "NOT met"  # noqa: E731
    lines = [
        *[f"- {line}" for line in summary_text(document).splitlines()],
        f"- 99th percentile of per-scenario max FCT error <= {bounds['p99_of_max_fct_error']:.0%}: "
        f"{verdict(bounds['p99_of_max_met'])}",
        f"- mean of per-scenario mean FCT error <= {bounds['mean_of_mean_fct_error']:.1%}: "
        f"{verdict(bounds['mean_of_mean_met'])}",
        f"- PacketSink totals exact in every scenario: {verdict(bounds['packet_sink_totals_met'])}",
        f"- events ratio: median {document['events_ratio']['median']:.2f}x, "
        f"geometric mean {document['events_ratio']['geomean']:.2f}x; `Run()` speedup: median "
        f"{document['run_speedup']['median']:.2f}x, geometric mean {document['run_speedup']['geomean']:.2f}x",
        f"- scenarios with steady skips: {shortcuts['with_skips']} ({shortcuts['with_skip_backs']} with skip-backs); "
        f"with memo hits: {shortcuts['with_memo_hits']}; with mirrors: {shortcuts['with_memo_mirrors']}; "
        f"with divergences: {shortcuts['with_memo_divergences']}",
        f"- scenarios where a shortcut considered had drawn random numbers: {shortcuts['that_drew_random_numbers']}; "
        "scenarios with trace rows of each draws case: " + ", ".join(
            f"{case} {n}" for case, n in shortcuts["with_trace_rows_by_draws_case"].items()),
    ]
    over = document["scenarios_over_max_bound"]
    lines += (["", "Scenarios over the max bound:", "", "| scenario | max FCT error |", "|---|---:|",
               *[f"| {row['name']} | {row['fct_max_err']:.3%} |" for row in over]]
              if over else ["", f"No scenario's max FCT error is over {bounds['p99_of_max_fct_error']:.0%}."])
    return "\n".join(lines) + "\n"


def write_markdown(document: dict[str, Any], path: Path) -> None:
    """``summary.md``: a title, then the ``findings``."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(f"# {document['scenarios']} generated scenarios, seed {document['seed']}\n\n"
                       + findings(document))
    partial.replace(path)


#: Errors below this are drawn at it (a log axis has no 0); the plot's legend says how many.
PLOT_FLOOR = 1e-6


def plot(outcomes: list[Outcome], path: Path, title: str) -> None:
    """CDFs of per-scenario max and mean FCT error on a log axis, the two bounds marked."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4.2))
    for values, label, colour in (([o.fct_max for o in outcomes], "max FCT error", "tab:red"),
                                  ([o.fct_mean for o in outcomes], "mean FCT error", "tab:blue")):
        ordered = np.sort(np.maximum(np.asarray(values, dtype=float), PLOT_FLOOR))
        zeros = int(np.sum(np.asarray(values) < PLOT_FLOOR))
        fraction = np.arange(len(ordered) + 1) / max(len(ordered), 1)
        axis.step(np.concatenate([[PLOT_FLOOR], ordered]), fraction, where="post", color=colour,
                  label=f"per-scenario {label} ({zeros} of {len(values)} below {PLOT_FLOOR:g})")
    axis.axvline(MAX_ERROR_P99_BOUND, color="tab:red", linestyle="--", linewidth=1,
                 label=f"{MAX_ERROR_P99_BOUND:.0%}: bound on the 99th percentile of max")
    axis.axvline(MEAN_ERROR_BOUND, color="tab:blue", linestyle="--", linewidth=1,
                 label=f"{MEAN_ERROR_BOUND:.1%}: bound on the mean of means")
    axis.axhline(0.99, color="grey", linestyle=":", linewidth=1)
    axis.set_xscale("log")
    axis.set_xlabel("FCT error against plain ns-3 (relative)")
    axis.set_ylabel("fraction of scenarios")
    axis.set_ylim(0, 1.02)
    axis.set_title(title)
    axis.legend(fontsize=7, loc="lower right")
    axis.grid(alpha=0.3)
    figure.tight_layout()
    figure.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(figure)
