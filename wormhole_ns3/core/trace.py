"""The skip trace: one line per fast-forward, saying what was skipped and why it was safe."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from wormhole_ns3.core.draws import DrawCase
from wormhole_ns3.core.vocabulary import Label


class TraceKind(Label):
    """What a row of the skip trace is (its ``kind`` column)."""

    #: A fast-forward of a steady partition.
    STEADY = "steady"
    #: Memo events (memo.decisions.MemoDecision.trace_kind maps each decision to its row kind).
    MEMO_MISS = "memo-miss"
    MEMO_REPLAY = "memo-replay"
    MEMO_MIRROR = "memo-mirror"
    MEMO_RECORDED = "memo-recorded"
    MEMO_DIVERGED = "memo-diverged"
    MEMO_DISTRUSTED = "memo-distrusted"
    MEMO_NO_MIRROR = "memo-no-mirror"
    MEMO_ABSORBED = "memo-absorbed"
    MEMO_MERGED = "memo-merged"
    #: The transient memo (memo/transient.py, ``--transient-memo``): a restore, a miss recorded,
    #: a record refused, a recording stored, a recording dropped by a change before it converged.
    TRANSIENT_HIT = "transient-hit"
    TRANSIENT_MISS = "transient-miss"
    TRANSIENT_REFUSED = "transient-refused"
    TRANSIENT_RECORDED = "transient-recorded"
    TRANSIENT_ABANDONED = "transient-abandoned"
    #: The error guard stopped a kind of decision (accel/verify.py).
    GUARD = "guard"
    #: A bet that did not pay is made more rarely (core/backoff.py); ``limit`` says which.
    BACK_OFF = "back-off"

    @property
    def memo(self) -> bool:
        """Whether the row reports a memo event (one of the MEMO_ kinds)."""
        return self in _MEMO_KINDS


_MEMO_KINDS = frozenset({
    TraceKind.MEMO_MISS, TraceKind.MEMO_REPLAY, TraceKind.MEMO_MIRROR, TraceKind.MEMO_RECORDED,
    TraceKind.MEMO_DIVERGED, TraceKind.MEMO_DISTRUSTED, TraceKind.MEMO_NO_MIRROR, TraceKind.MEMO_ABSORBED,
    TraceKind.MEMO_MERGED,
})


class Facts(Protocol):
    """The typed facts a decision was made on; ``render`` is its trace row's prose (``memo/decisions.py``)."""

    def render(self) -> str: ...


#: The trace's columns, in order.
COLUMNS = (
    "time", "partition", "flows", "dt", "events_moved", "events_avoided", "credited_bytes",
    "queue_packets", "limit", "reason", "kind", "draws", "cycles",
)


@dataclass(frozen=True)
class SkipRecord:
    time: float  #: simulation time the skip started, s
    #: The partition's flow ids (sorted for a skip; in the episode's order for a memo event).
    flow_ids: tuple[int, ...]
    dt: float  #: skipped simulation time, s
    events_moved: int  #: pending events shifted by dt
    events_avoided: int  #: estimated packet-level events not executed
    credited_bytes: int
    queue_packets: int  #: the partition's longest egress queue, held as it is during the skip
    limit: str  #: what ended the skip (the memo decision for a memo event)
    reason: str  #: why the partition was judged steady
    #: The facts a memo event's ``reason`` is rendered from (None for a skip: its reason is the steady
    #: verdict's). Not a column: what tests and tools that read the run in its process assert on.
    facts: Facts | None = None
    #: A fast-forward, or a memo event.
    kind: TraceKind = TraceKind.STEADY
    #: Its case with respect to ns-3's random draws (core/draws.py); None where none applies.
    draws: DrawCase | None = None
    #: Whole congestion cycles the skip spans, of flows whose window grows with time (Cubic): 0 where
    #: its length is not cut to whole cycles (accel/cycles.py).
    cycles: int = 0

    @property
    def partition(self) -> str:
        """The partition's flow ids, space separated (the trace's ``partition`` column)."""
        return " ".join(map(str, self.flow_ids))

    @property
    def flows(self) -> int:
        return len(self.flow_ids)

    @classmethod
    def columns(cls) -> list[str]:
        return list(COLUMNS)

    def as_row(self) -> dict:
        """The record as the trace's columns, in plain Python values."""
        row = {column: getattr(self, column) for column in COLUMNS}
        row["kind"] = self.kind.value
        row["draws"] = self.draws.value if self.draws is not None else ""
        return row


def write_trace(records: list[SkipRecord], path: str | Path) -> None:
    """Write the skip trace as CSV (atomically: a reader never sees half a file)."""
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", newline="") as out:
        writer = csv.DictWriter(out, fieldnames=SkipRecord.columns())
        writer.writeheader()
        for record in records:
            row = record.as_row()
            row["time"] = f"{record.time:.9f}"
            row["dt"] = f"{record.dt:.9f}"
            writer.writerow(row)
    partial.replace(path)
