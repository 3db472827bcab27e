"""``wormhole-ns3 experiment recheck``: rerun kept comparisons from their ``command.txt`` and say what moved.

A change to the accelerator that should leave results alone (a redesign, a
rule that must not touch the presets) is shown so row by row: each kept
comparison's command runs again, against its kept baseline where one is kept
(``experiments/baselines/ROW``: the plain run is the part that takes hours),
into a scratch folder, and its events, memo counters and errors are set
beside the kept ones. Wall-clock speedups are shown, never judged: they move
with the machine.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from wormhole_ns3.tools.experiment.registry import ExperimentError
from wormhole_ns3.tools.experiment.run import COMMAND_FILE, SUMMARY_FILE

#: Counters that must come out the same.
EXACT_FIELDS = ("memo_hits", "memo_mirrored", "memo_misses", "memo_diverged")
#: Errors that must come out within ERROR_TOLERANCE (a fraction: 1e-5 is 0.001 percentage points).
ERROR_FIELDS = ("fct_mean_rel_err", "fct_p99_rel_err", "fct_max_rel_err", "iteration_time_rel_err")
ERROR_TOLERANCE = 1e-5
#: How far the accelerated run's events may move, as a share of the kept count.
EVENTS_TOLERANCE = 0.01


@dataclass(frozen=True)
class Recheck:
    """One kept comparison run again: what it gave, beside what was kept."""

    row: str
    kept: dict
    now: dict

    @property
    def events_change(self) -> float:
        return self.now["events_accelerated"] / max(self.kept["events_accelerated"], 1) - 1

    def differences(self) -> list[str]:
        """What moved beyond its tolerance, one phrase each (empty: the row holds)."""
        moved = []
        if abs(self.events_change) > EVENTS_TOLERANCE:
            moved.append(f"events {self.kept['events_accelerated']:,} -> {self.now['events_accelerated']:,}")
        for field in EXACT_FIELDS:
            if self.kept.get(field) != self.now.get(field):
                moved.append(f"{field} {self.kept.get(field)} -> {self.now.get(field)}")
        for field in ERROR_FIELDS:
            kept, now = self.kept.get(field), self.now.get(field)
            if (kept is None) != (now is None) or (kept is not None and abs(kept - now) > ERROR_TOLERANCE):
                moved.append(f"{field} {_percent(kept)} -> {_percent(now)}")
        return moved

    def as_row(self) -> dict:
        return {"row": self.row, "events_kept": self.kept["events_accelerated"],
                "events_now": self.now["events_accelerated"], "events_change": self.events_change,
                "speedup_kept": self.kept.get("speedup"), "speedup_now": self.now.get("speedup"),
                "differences": self.differences()}


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.4%}"


def _as_run_here(words: list[str]) -> list[str]:
    """A ``wormhole-ns3 ...`` command as this Python runs it."""
    return [sys.executable, "-m", "wormhole_ns3", *words[1:]] if words[:1] == ["wormhole-ns3"] else words


def rerun_commands(command: str, out: Path, baselines: Path, row: str) -> list[list[str]]:
    """The kept command as this Python runs it: what it prepares (``A && B && compare``) as it is, then the
    comparison into ``out``, from the kept baseline if there is one."""
    *prepared, compare = (shlex.split(part) for part in command.split("&&"))
    if compare[:3] != ["wormhole-ns3", "experiment", "compare"]:
        raise ExperimentError(f"{row}/{COMMAND_FILE}: does not end in an 'experiment compare': {command.strip()}")
    words = _as_run_here(compare)
    if "--out" in words:
        words[words.index("--out") + 1] = str(out)
    else:
        words += ["--out", str(out)]
    if "--force" not in words:
        words.append("--force")
    if "--reuse-baseline" not in words and (baselines / row).is_dir():
        words += ["--reuse-baseline", str(baselines / row)]
    return [*map(_as_run_here, prepared), words]


def recheck(kept: Path, rows: list[str], baselines: Path, out: Path) -> list[Recheck]:
    """Rerun each named kept comparison (every one if none is named) and set it beside what was kept."""
    folders = sorted(p for p in Path(kept).iterdir() if (p / SUMMARY_FILE).is_file())
    known = {p.name: p for p in folders}
    unknown = [r for r in rows if r not in known]
    if unknown:
        raise ExperimentError(f"no kept comparison named {', '.join(unknown)} in {kept}")
    checked = []
    for name in rows or list(known):
        folder = known[name]
        for command in rerun_commands((folder / COMMAND_FILE).read_text(), out / name, baselines, name):
            print(f"[recheck] {name}: {shlex.join(command[3:])}", file=sys.stderr, flush=True)
            done = subprocess.run(command, stdout=subprocess.DEVNULL)
            if done.returncode != 0:
                raise ExperimentError(f"{name}: its command failed (exit code {done.returncode})")
        checked.append(Recheck(name, json.loads((folder / SUMMARY_FILE).read_text()),
                               json.loads((out / name / SUMMARY_FILE).read_text())))
    return checked


def recheck_table(checked: list[Recheck]) -> str:
    """The rows as a Markdown table: events kept and now, speedups, and what moved."""
    lines = ["| row | events kept | events now | change | Run() speedup kept / now | moved |",
             "|---|---:|---:|---:|---:|---|"]
    for r in checked:
        speed = f"{r.kept.get('speedup', 0):.1f}x / {r.now.get('speedup', 0):.1f}x"
        lines.append(f"| {r.row} | {r.kept['events_accelerated']:,} | {r.now['events_accelerated']:,} | "
                     f"{r.events_change:+.2%} | {speed} | {'; '.join(r.differences()) or 'nothing'} |")
    return "\n".join(lines)
