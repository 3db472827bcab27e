"""``wormhole-ns3 experiment scoreboard``: the kept comparisons in tables, beside the Wormhole paper's figures.

Each kept comparison (``experiments/scoreboard/PRESET``, made by ``experiment
keep`` from an ``experiment compare`` folder) gives one row. The rows of the
training workloads go into the README between ``TRAINING``'s markers, and a
figure of our speedups against the paper's range beside it; those of scripts
written as users write theirs (``Experiment.user_script``) into a table of
their own between ``USER_SCRIPTS``' markers, where the paper has no figure to
set beside them and each row says its skips and whether the script's sinks
and output were the same. So no number of the README is typed by hand; ``--check``
says whether the README still shows what the kept summaries give.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from wormhole_ns3.tools.experiment.registry import ExperimentError, get_experiment
from wormhole_ns3.tools.experiment.results import counted, write_atomically
from wormhole_ns3.tools.experiment.run import COMMAND_FILE, SUMMARY_FILE
from wormhole_ns3.tools.experiment.timeline import activity_line

FIGURE_FILE = "scoreboard.png"


@dataclass(frozen=True)
class Section:
    """A table of the README's scoreboard: the comment lines it goes between, and its columns after ``HEADER``'s."""

    begin: str
    end: str
    extra: tuple[str, ...]


#: The training workloads' table (``llm-training``, the demo), with the paper's figures.
TRAINING = Section("<!-- scoreboard:begin -->", "<!-- scoreboard:end -->", ("paper, single core",))
#: The user scripts' table (``experiments/zoo``): where the paper has no figure, whether the script's PacketSinks
#: received the same bytes and it printed the same output, which a user checks first.
USER_SCRIPTS = Section("<!-- scoreboard:user-scripts:begin -->", "<!-- scoreboard:user-scripts:end -->",
                       ("skips", "PacketSink totals / output"))
#: The kept rows that moved by more than the recheck's tolerance when rerun on newer code (``experiment recheck``):
#: a kept row whose events no longer hold says so beside the table, from ``RECHECK_FILE``.
RECHECKED = Section("<!-- scoreboard:rechecked:begin -->", "<!-- scoreboard:rechecked:end -->", ())
#: The recheck the README reports, beside the kept comparisons' folder (``experiments/recheck``).
RECHECK_FILE = Path("recheck", "recheck.json")
#: What a section with no kept comparison shows.
NO_ROWS = "No comparison of these is kept yet.\n"


@dataclass(frozen=True)
class PaperFigure:
    """The Wormhole paper's single-core speedup over ns-3 for a workload family (paper-notes: headline results)."""

    family: str
    low: float
    high: float

    @property
    def label(self) -> str:
        return f"{self.family} {self.low:g}-{self.high:g}x"


#: The paper's single-core speedups by family (GPT 227-744x, MoE 135-510x).
PAPER = (PaperFigure("GPT", 227, 744), PaperFigure("MoE", 135, 510))


@dataclass(frozen=True)
class Entry:
    """One kept comparison: its folder's name, its summary and the command that made it."""

    name: str
    folder: Path
    summary: dict
    command: str

    @property
    def section(self) -> Section:
        """The table this comparison is a row of: the user scripts' if its experiment is one."""
        return USER_SCRIPTS if get_experiment(self.summary["experiment"]).user_script else TRAINING

    @property
    def paper(self) -> PaperFigure | None:
        """The paper's figure for this workload's family, by the family named in the preset (None: not measured)."""
        preset = self.summary["preset"].lower()
        return next((figure for figure in PAPER if figure.family.lower() in preset), None)


def read_entries(root: Path) -> list[Entry]:
    """The kept comparisons under ``root``: GPT first, then MoE, then the rest, each by baseline events."""
    if not root.is_dir():
        raise ExperimentError(f"{root}: no such folder of kept comparisons")
    entries = []
    for folder in sorted(path for path in root.iterdir() if path.is_dir()):
        try:
            summary = json.loads((folder / SUMMARY_FILE).read_text())
            command = (folder / COMMAND_FILE).read_text().strip()
        except (OSError, ValueError) as error:
            raise ExperimentError(f"{folder}: not a kept comparison ({error})") from None
        if "events_ratio" not in summary:
            raise ExperimentError(f"{folder}: its {SUMMARY_FILE} is not a comparison's")
        entries.append(Entry(folder.name, folder, summary, command))
    families = [figure.family for figure in PAPER]

    def order(entry: Entry) -> tuple:
        family = entry.paper.family if entry.paper else None
        return (families.index(family) if family else len(families), entry.summary["events_baseline"], entry.name)

    return sorted(entries, key=order)


#: The columns of every section's table: the workload, then numbers (right-aligned), then the section's own.
HEADER = ("workload", "events ratio", "`Run()` speedup", "process speedup", "FCT error mean / p99 / max",
          "iteration time error", "memo hit / mirror / miss", "steady-skipped share",
          "packet-level time left, largest cause")


def scoreboard_table(entries: list[Entry], relative_to: Path, section: Section = TRAINING) -> str:
    """``section``'s Markdown table, one row per entry; workload names link to the kept summaries (from
    ``relative_to``)."""
    if not entries:
        return NO_ROWS
    lines = ["| " + " | ".join((*HEADER, *section.extra)) + " |",
             "|---|" + "---:|" * (len(HEADER) - 1) + "---|" * len(section.extra)]
    for entry in entries:
        lines.append("| " + " | ".join(_row(entry, relative_to) + _section_cells(entry, section)) + " |")
    return "\n".join(lines) + "\n"


def _section_cells(entry: Entry, section: Section) -> list[str]:
    """The cells of ``section``'s own columns (``Section.extra``)."""
    s = entry.summary
    if section is TRAINING:
        return [entry.paper.label if entry.paper else "-"]
    return [f"{s['skips']:,}", f"{'exact' if s['rx_bytes_exact'] else 'DIFFER'} / "
                               f"{'identical' if s['stdout_identical'] else 'DIFFERS'}"]


def _row(entry: Entry, relative_to: Path) -> list[str]:
    s = entry.summary
    link = Path(os.path.relpath(entry.folder / "summary.md", relative_to)).as_posix()
    size = f"{s['flows_compared']:,} flows, {counted(s['iterations_compared'], 'iteration')}"
    workload = f"[`{entry.name}`]({link}) ({size})"
    memo = "-" if s.get("memo_hits") is None else f"{s['memo_hits']:,} / {s['memo_mirrored']:,} / {s['memo_misses']:,}"
    return [
        workload,
        f"{s['events_ratio']:.1f}x ({_count(s['events_baseline'])} → {_count(s['events_accelerated'])})",
        f"{s['speedup']:.1f}x ({s['run_wall_baseline_s']:,.1f} s → {s['run_wall_accelerated_s']:,.1f} s)",
        "-" if s.get("process_speedup") is None else f"{s['process_speedup']:.1f}x",
        " / ".join(_percent(s[f"fct_{name}_rel_err"]) for name in ("mean", "p99", "max")),
        _percent(s["iteration_time_rel_err"]),
        memo,
        _skipped_share(s),
        _packet_level(s),
    ]


def _skipped_share(s: dict) -> str:
    """Simulated time steady skips covered, summed over partitions, over the baseline's training time.

    The training time (the iterations' times added up: from the workload's
    start to the last iteration's end) and not the simulated time, which runs
    on past the last flow while the transports' timers expire.
    """
    training = (s["iteration_time_mean_baseline_s"] or 0.0) * s["iterations_compared"]
    return _percent(s["skipped_time_s"] / training) if training > 0 else "-"


def _packet_level(s: dict) -> str:
    """Where the accelerated run kept simulating packets: the time partitions ran unskipped, and its largest cause.

    Summed over partitions, each sampling period charged to why it was not
    skipped (``packet_level_time_s``: settling after a flow event, filling a
    window, unfair shares, flow tails...). An episode the memo records runs
    there too; one it replays does not. Then, where the comparison has it
    (``events_by_activity``), the phases running while most of the run's events ran.
    """
    breakdown = s.get("packet_level_time_s") or {}
    total = sum(breakdown.values())
    if total <= 0:
        return "-"
    cause, seconds = max(breakdown.items(), key=lambda item: (item[1], item[0]))
    where = f"{_significant(total * 1e3)} ms: {seconds / total:.0%} {cause}"
    if s.get("events_by_activity"):
        where += f"; events: {activity_line(s, largest=1)}"
    return where


def _count(events: int) -> str:
    for scale, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if events >= scale:
            return f"{events / scale:.3g} {unit}"
    return str(events)


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{_significant(value * 100)}%"


def _significant(value: float) -> str:
    """Three significant digits, and whole thousands as such ("22,546", not "2.25e+04"): a user script's
    errors and packet-level times can run into them."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def with_table(text: str, table: str, where: Path, section: Section = TRAINING) -> str:
    """``text`` with the lines between ``section``'s marker lines replaced by ``table``; ExperimentError without
    them."""
    lines = text.splitlines(keepends=True)
    marks = [[k for k, line in enumerate(lines) if line.strip() == marker] for marker in (section.begin, section.end)]
    if [len(found) for found in marks] != [1, 1] or marks[1][0] < marks[0][0]:
        raise ExperimentError(f"{where}: no single {section.begin} line, then {section.end}, to put the table between")
    begin, end = marks[0][0], marks[1][0]
    return "".join(lines[:begin + 1]) + table + "".join(lines[end:])


def rechecked_table(recheck: Path, entries: list[Entry]) -> str:
    """The rechecked rows whose events moved beyond the tolerance, and that were not kept again since.

    Each says its events kept and now, and what else moved. Speedups are left out:
    a recheck's wall times come from whatever machine it ran on.
    """
    kept_events = {entry.name: entry.summary.get("events_accelerated") for entry in entries}
    try:
        rows = json.loads(recheck.read_text())
    except FileNotFoundError:
        return "No kept row has been rechecked yet.\n"
    except (OSError, ValueError) as error:
        raise ExperimentError(f"{recheck}: not a recheck's result ({error})") from None
    moved = [r for r in rows if any(d.startswith("events ") for d in r["differences"])
             and kept_events.get(r["row"]) != r["events_now"]]
    if not moved:
        return "Every rechecked row holds its events.\n"
    lines = ["| row | events kept | events now | change | what else moved |", "|---|---:|---:|---:|---|"]
    for r in moved:
        others = [d for d in r["differences"] if not d.startswith("events ")]
        lines.append(f"| {r['row']} | {r['events_kept']:,} | {r['events_now']:,} | {r['events_change']:+.2%} | "
                     f"{'; '.join(others) or 'nothing'} |")
    return "\n".join(lines) + "\n"


def update_readme(root: Path, readme: Path, check: bool) -> list[Entry]:
    """Write the scoreboard into ``readme`` (and its figure into ``root``), or with ``check`` only compare.

    With ``check``, a README that does not show what the kept summaries give
    raises ExperimentError saying so in one line.
    """
    entries = read_entries(root)
    try:
        text = readme.read_text()
    except OSError as error:
        raise ExperimentError(f"{readme}: {error.strerror}") from None
    updated = text
    for section in (TRAINING, USER_SCRIPTS):
        rows = [entry for entry in entries if entry.section is section]
        updated = with_table(updated, scoreboard_table(rows, readme.parent, section), readme, section)
    updated = with_table(updated, rechecked_table(root.parent / RECHECK_FILE, entries), readme, RECHECKED)
    if check:
        if updated != text:
            raise ExperimentError(f"{readme}: its scoreboard differs from the kept summaries in {root}: "
                                  "run wormhole-ns3 experiment scoreboard")
        return entries
    from wormhole_ns3.tools.experiment.plots import scoreboard_bars

    write_atomically(readme, updated)
    scoreboard_bars([entry for entry in entries if entry.section is TRAINING], root / FIGURE_FILE)
    return entries
