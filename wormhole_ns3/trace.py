"""The skip trace: one line per fast-forward, saying what was skipped and why it was safe."""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass, fields
from pathlib import Path


@dataclass(frozen=True)
class SkipRecord:
    time: float  #: simulation time the skip started, s
    partition: str  #: the partition's flow ids, space separated
    flows: int
    dt: float  #: skipped simulation time, s
    events_moved: int  #: pending events shifted by dt
    events_avoided: int  #: estimated packet-level events not executed
    credited_bytes: int
    queue_packets: int  #: the partition's longest egress queue, held as it is during the skip
    limit: str  #: what ended the skip
    reason: str  #: why the partition was judged steady
    #: "steady" (a fast-forward), or a memo event: "memo-replay", "memo-recorded", "memo-diverged"
    kind: str = "steady"

    @classmethod
    def columns(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    def as_row(self) -> dict:
        return asdict(self)


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
