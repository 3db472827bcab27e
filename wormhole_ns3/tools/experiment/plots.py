"""The PNG figures of a comparison: what a person looks at to trust (or not) an accelerated run.

Each function draws one figure from the comparison's tables and writes it
atomically; matplotlib's Agg backend is selected explicitly, so no display
is needed and the figures are the same on every machine.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - after choosing the backend
import numpy as np  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from wormhole_ns3.tools.seeds import Matched  # noqa: E402

BASELINE_COLOR = "#4c72b0"
ACCELERATED_COLOR = "#dd8452"
PAPER_COLOR = "#8c8c8c"
#: FCTs spread over more than this factor are drawn on a log axis.
WIDE_RANGE = 20
#: Below this (in percent) the seed spread plot's axes are linear, above it logarithmic.
SPREAD_LINEAR_PERCENT = 0.01
#: PNG metadata without the matplotlib version, so the same data gives the same bytes.
_METADATA = {"Software": None}


def fct_cdf(flows, path: Path) -> Path:
    """Empirical CDF of the flow completion times of both runs, on one axis."""
    figure, axis = plt.subplots(figsize=(6, 4))
    for column, label, color in (("fct_baseline", "baseline", BASELINE_COLOR),
                                 ("fct_accelerated", "accelerated", ACCELERATED_COLOR)):
        values = np.sort(flows[column].to_numpy(dtype=float) * 1e3)
        fraction = np.arange(1, values.size + 1) / max(values.size, 1)
        axis.step(values, fraction, where="post", label=label, color=color,
                  linestyle="-" if label == "baseline" else "--")
    fcts = flows[["fct_baseline", "fct_accelerated"]].to_numpy(dtype=float)
    if fcts.size and fcts.max() > WIDE_RANGE * fcts.min() > 0:
        axis.set_xscale("log")
    else:
        axis.ticklabel_format(axis="x", useOffset=False)
        axis.xaxis.set_major_locator(MaxNLocator(5))
    axis.set_xlabel("flow completion time (ms)")
    axis.set_ylabel("fraction of flows")
    axis.set_ylim(0, 1.02)
    axis.set_title(f"FCT CDF, {len(flows)} flows")
    axis.legend(loc="lower right")
    axis.grid(alpha=0.3)
    return _save(figure, path)


def fct_error_scatter(flows, path: Path) -> Path:
    """Each flow's relative FCT error against its size, one colour per collective."""
    figure, axis = plt.subplots(figsize=(6, 4))
    for collective, group in flows.groupby("collective", sort=True):
        axis.scatter(group["bytes"], group["rel_err"] * 100, s=14, alpha=0.7, label=collective or "flow")
    axis.set_xscale("log")
    axis.set_xlabel("flow size (bytes)")
    axis.set_ylabel("|FCT error| (%)")
    axis.set_ylim(bottom=0)
    axis.set_title("per-flow FCT error, accelerated vs baseline")
    axis.legend(loc="upper right", fontsize="small")
    axis.grid(alpha=0.3)
    return _save(figure, path)


def iteration_timeline(iterations, path: Path) -> Path:
    """One bar per iteration on a time axis, the baseline's row above the accelerated one's."""
    figure, axis = plt.subplots(figsize=(7, 2.6))
    rows = (("baseline", 1, BASELINE_COLOR), ("accelerated", 0, ACCELERATED_COLOR))
    for side, y, color in rows:
        spans = [(start * 1e3, (finish - start) * 1e3)
                 for start, finish in zip(iterations[f"start_{side}"], iterations[f"finish_{side}"])]
        axis.broken_barh(spans, (y - 0.35, 0.7), facecolors=color, edgecolors="white")
        for k, (start, width) in zip(iterations["iteration"], spans):
            axis.text(start + width / 2, y, str(k), ha="center", va="center", color="white", fontsize="small")
    axis.set_yticks([1, 0], [side for side, _, _ in rows])
    axis.set_xlabel("simulated time (ms)")
    axis.set_title("training iterations")
    axis.grid(axis="x", alpha=0.3)
    return _save(figure, path)


def event_timeline(timeline, events_baseline: int, until: float | None, path: Path) -> Path:
    """The accelerated run's events executed so far against simulated time: where it spent them.

    A flat stretch was skipped or replayed; a steep one ran packet by packet.
    The baseline ran ``events_baseline`` events over the whole run (a plain run
    records no timeline). Drawn up to ``until`` (s), the last flow's end, if
    given: TCP's timers run a run on for minutes after its traffic.
    """
    figure, axis = plt.subplots(figsize=(7, 3.4))
    times = np.array([t for t, _ in timeline], dtype=float) * 1e3
    counts = np.array([n for _, n in timeline], dtype=float)
    total = int(counts[-1])
    if until is not None and until * 1e3 < times[-1]:
        shown = np.count_nonzero(times <= until * 1e3)
        times, counts = np.append(times[:shown], until * 1e3), np.append(counts[:shown], counts[shown - 1])
    axis.step(times, counts, where="post", color=ACCELERATED_COLOR, label="accelerated")
    axis.set_xlabel("simulated time (ms)")
    axis.set_ylabel("events executed so far")
    axis.set_title(f"where the accelerated run spent its {total:,} events\n"
                   f"(plain ns-3 ran {events_baseline:,})")
    axis.set_ylim(bottom=0)
    axis.grid(alpha=0.3)
    return _save(figure, path)


def speedup_bars(summary: dict, path: Path) -> Path:
    """Run() wall time, the whole process's wall time and executed events of both runs, with the ratios."""
    figure, (wall, process, events) = plt.subplots(1, 3, figsize=(10, 3.4))
    process_speedup = summary.get("process_speedup")
    panels = (
        (wall, "Run() wall time (s)", "run_wall_baseline_s", "run_wall_accelerated_s",
         f"speedup {summary['speedup']:.2f}x", "{:.2f}"),
        (process, "process wall time (s)", "process_wall_baseline_s", "process_wall_accelerated_s",
         f"speedup {process_speedup:.2f}x" if process_speedup else "not measured", "{:.2f}"),
        (events, "events executed", "events_baseline", "events_accelerated",
         f"ratio {summary['events_ratio']:.2f}x", "{:,}"),
    )
    for axis, title, base, accel, ratio, fmt in panels:
        values = [summary.get(base) or 0, summary.get(accel) or 0]
        bars = axis.bar(["baseline", "accelerated"], values, color=[BASELINE_COLOR, ACCELERATED_COLOR])
        axis.bar_label(bars, labels=[fmt.format(v) for v in values], fontsize="small")
        axis.set_title(f"{title}\n{ratio}")
        axis.margins(y=0.15)
    figure.tight_layout()
    return _save(figure, path)


def scoreboard_bars(entries, path: Path) -> Path:
    """Per kept comparison (``scoreboard.Entry``): our Run() speedup and events ratio, the paper's range; log y."""
    figure, axis = plt.subplots(figsize=(max(6.0, 1.3 * len(entries) + 2), 4))
    x = np.arange(len(entries))
    ours = (("Run() speedup", "speedup", ACCELERATED_COLOR, -0.27),
            ("events ratio", "events_ratio", BASELINE_COLOR, 0.0))
    for label, field, color, offset in ours:
        values = [entry.summary[field] for entry in entries]
        bars = axis.bar(x + offset, values, width=0.26, color=color, label=f"ours: {label}")
        axis.bar_label(bars, labels=[f"{v:.1f}" for v in values], fontsize="x-small")
    papers = [entry.paper for entry in entries]
    measured = [k for k, paper in enumerate(papers) if paper is not None]
    ranges = axis.bar([x[k] + 0.27 for k in measured], [papers[k].high - papers[k].low for k in measured],
                      bottom=[papers[k].low for k in measured], width=0.26, color=PAPER_COLOR, hatch="//",
                      label="the paper, single core: its family's range")
    axis.bar_label(ranges, labels=[f"{papers[k].low:g}-{papers[k].high:g}" for k in measured], fontsize="x-small")
    axis.set_yscale("log")
    axis.axhline(1, color="black", linewidth=0.8)
    axis.set_xticks(x, [entry.name for entry in entries], rotation=20, ha="right", fontsize="small")
    axis.set_ylabel("times faster / fewer than plain ns-3")
    axis.set_title("wormhole-ns3 vs the Wormhole paper, per workload")
    axis.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=3, fontsize="small")
    axis.grid(axis="y", alpha=0.3, which="both")
    return _save(figure, path)


def seed_spread(quantities: Sequence[Matched], path: Path) -> Path:
    """Per quantity (FCT, iteration time), a row: each item's accelerated error against ns-3's own seed spread,
    with the y = x line (below it: within ns-3's noise), and the CDFs of both.

    Spreads run from nothing to many times a flow's FCT (a flow that meets a
    retransmission timeout under one seed and none under another), and errors
    are often exactly zero: both axes are linear up to ``SPREAD_LINEAR_PERCENT``
    and logarithmic above it, so zeros and decades show alike.
    """
    figure, axes = plt.subplots(len(quantities), 2, figsize=(10, 4 * len(quantities)), squeeze=False)
    for (scatter, cdf), matched in zip(axes, quantities):
        spread, error = matched.spread * 100, matched.error * 100
        runs = matched.values.shape[1]
        top = max(float(spread.max(initial=0)), float(error.max(initial=0)), SPREAD_LINEAR_PERCENT) * 1.5
        scatter.scatter(spread, error, s=14, alpha=0.6, color=ACCELERATED_COLOR, clip_on=False, zorder=3)
        scatter.plot([0, top], [0, top], color="black", linewidth=0.8, label="y = x")
        for set_scale, set_limits in ((scatter.set_xscale, scatter.set_xlim), (scatter.set_yscale, scatter.set_ylim)):
            set_scale("symlog", linthresh=SPREAD_LINEAR_PERCENT)
            set_limits(-SPREAD_LINEAR_PERCENT / 2, top)  # a little room left of 0, where exact errors lie
        scatter.set_xlabel(f"ns-3 seed spread, (max - min) / median over {runs} runs (%)")
        scatter.set_ylabel("accelerated |error| vs baseline (%)")
        scatter.set_title(f"{matched.quantity.heading} of {len(matched.keys)} {matched.quantity.noun}: "
                          "below the line, within ns-3's noise", fontsize="medium")
        scatter.legend(loc="upper left")
        scatter.grid(alpha=0.3)
        for values, label, color, style in ((spread, "ns-3 seed spread", BASELINE_COLOR, "-"),
                                            (error, "accelerated error", ACCELERATED_COLOR, "--")):
            ordered = np.sort(values)
            fraction = np.arange(ordered.size + 1) / max(ordered.size, 1)
            cdf.step(np.concatenate([ordered[:1], ordered]), fraction, where="post",
                     label=label, color=color, linestyle=style)
        cdf.set_xscale("symlog", linthresh=SPREAD_LINEAR_PERCENT)
        cdf.set_xlim(-SPREAD_LINEAR_PERCENT / 2, top)
        cdf.set_xlabel(f"{matched.quantity.heading}: relative spread or error (%)")
        cdf.set_ylabel(f"fraction of {matched.quantity.noun}")
        cdf.set_ylim(0, 1.02)
        cdf.set_title(f"CDFs over the {matched.quantity.noun}", fontsize="medium")
        cdf.legend(loc="lower right")
        cdf.grid(alpha=0.3)
    figure.tight_layout()
    return _save(figure, path)


def _save(figure, path: Path) -> Path:
    partial = path.with_name(path.name + ".partial")
    figure.savefig(partial, format="png", dpi=110, bbox_inches="tight", metadata=_METADATA)
    plt.close(figure)
    partial.replace(path)
    return path
