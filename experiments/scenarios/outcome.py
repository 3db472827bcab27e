"""One scenario's outcome: what ``wormhole-ns3 compare`` measured, and what its skip trace shows.

The comparison's JSON gives the errors, exactness, speed and memo counters; the skip
trace (``compare --trace``) gives, per row kind (a steady skip, a memo replay, a
mirror, ...), how many shortcuts were considered, and per ``draws`` case (core/draws.py:
``drew-nothing``, ``steady-across-draws``, ``depends-on-draws``, ...) how they stood
with ns-3's random draws.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec import ScenarioSpec

#: Trace row kinds counted per scenario (core/trace.py TraceKind values), as the table's columns.
TRACE_KINDS = ("steady", "memo-replay", "memo-mirror", "memo-miss", "memo-recorded", "memo-diverged",
               "memo-distrusted", "memo-no-mirror", "memo-absorbed", "guard")
#: The draws cases (core/draws.py DrawCase values), as the table's columns.
DRAW_CASES = ("drew-nothing", "no-random-source", "agreed-across-draws", "steady-across-draws", "statistical",
              "depends-on-draws")
#: Cases that say the shortcut's episode or window drew random numbers.
DREW = ("agreed-across-draws", "steady-across-draws", "statistical", "depends-on-draws")


@dataclass(frozen=True)
class TraceCounts:
    """Rows of a skip trace per kind and per draws case."""

    kinds: dict[str, int] = field(default_factory=dict)
    draws: dict[str, int] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> TraceCounts:
        with Path(path).open(newline="") as rows:
            table = list(csv.DictReader(rows))
        return cls(kinds=dict(Counter(row["kind"] for row in table)),
                   draws=dict(Counter(row["draws"] for row in table if row["draws"])))

    @property
    def drew(self) -> bool:
        """Some shortcut considered had drawn random numbers."""
        return any(self.draws.get(case, 0) for case in DREW)


@dataclass(frozen=True)
class Outcome:
    """A finished comparison of one scenario."""

    index: int
    spec: ScenarioSpec
    fct_mean: float
    fct_p99: float
    fct_max: float
    #: The flow with the largest FCT error (its index in the spec) and that flow's size.
    worst_flow: int
    worst_flow_bytes: int
    flows_finished: tuple[int, int]  #: (baseline, accelerated)
    rx_bytes_exact: bool
    stdout_identical: bool
    events: tuple[int, int]  #: (baseline, accelerated)
    speedup: float
    skips: int
    skip_backs: int
    memo: dict[str, int | None]
    trace: TraceCounts

    @classmethod
    def read(cls, index: int, spec: ScenarioSpec, comparison: Path, trace: Path) -> Outcome:
        result = json.loads(Path(comparison).read_text())
        flows = result["flows"]
        errors = [flow["rel_err"] if flow["rel_err"] is not None else -1.0 for flow in flows]
        worst = max(range(len(flows)), key=errors.__getitem__)
        return cls(
            index=index, spec=spec,
            fct_mean=_error(result["fct_mean_rel_err"]), fct_p99=_error(result["fct_p99_rel_err"]),
            fct_max=_error(result["fct_max_rel_err"]),
            worst_flow=_spec_index(flows[worst]), worst_flow_bytes=flows[worst]["bytes"],
            flows_finished=(result["flows_finished_baseline"], result["flows_finished_accelerated"]),
            rx_bytes_exact=result["rx_bytes_exact"], stdout_identical=result["stdout_identical"],
            events=(result["events_baseline"], result["events_accelerated"]),
            speedup=result["speedup"], skips=result["skips"], skip_backs=result["skip_backs"],
            memo={key: result.get(key) for key in ("memo_hits", "memo_mirrored", "memo_misses", "memo_diverged",
                                                   "memo_distrusted", "flows_replayed", "flows_resumed")},
            trace=TraceCounts.read(trace),
        )

    @property
    def events_ratio(self) -> float:
        return self.events[0] / max(self.events[1], 1)

    def row(self) -> dict[str, Any]:
        """The scenario as one row of the sweep's table: results, shortcuts, then its parameters."""
        return {
            "index": self.index, "name": self.spec.name,
            "fct_mean_err": self.fct_mean, "fct_p99_err": self.fct_p99, "fct_max_err": self.fct_max,
            "worst_flow": self.worst_flow, "worst_flow_bytes": self.worst_flow_bytes,
            "flows_finished_baseline": self.flows_finished[0], "flows_finished_accelerated": self.flows_finished[1],
            "rx_bytes_exact": self.rx_bytes_exact, "stdout_identical": self.stdout_identical,
            "events_baseline": self.events[0], "events_accelerated": self.events[1],
            "events_ratio": round(self.events_ratio, 4), "run_speedup": round(self.speedup, 4),
            "skips": self.skips, "skip_backs": self.skip_backs,
            **self.memo,
            **{f"trace_{kind}": self.trace.kinds.get(kind, 0) for kind in TRACE_KINDS},
            **{f"draws_{case}": self.trace.draws.get(case, 0) for case in DRAW_CASES},
            **self.spec.parameters(),
        }


def _error(value: float | None) -> float:
    """A comparison's error; a scenario with no finished flow to compare has none, which is 0 here."""
    return 0.0 if value is None else float(value)


def _spec_index(flow: dict) -> int:
    """The flow's index in the spec: its sink listens on port 5000 + index (scenario.py)."""
    return int(flow["dport"]) - 5000
