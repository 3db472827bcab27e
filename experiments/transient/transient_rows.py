"""Tally a compare's transient-memo rows: decisions, abandoned recordings, slow starts, repeated keys."""

from __future__ import annotations

import collections
import csv
import json
import re
import statistics
import sys
from pathlib import Path


def main(compared: Path) -> None:
    accelerated = compared / "accelerated"
    print(json.loads((accelerated / "run.json").read_text()).get("transient_memo"))
    with (accelerated / "skips.csv").open() as trace:
        rows = [row for row in csv.DictReader(trace) if row["kind"].startswith("transient")]
    abandoned = [row for row in rows if row["limit"] == "abandoned"]
    judged = collections.Counter(
        match.group(1) for row in abandoned
        if (match := re.search(r"\((never judged since|last judged unsteady: [^;]*);", row["reason"])))
    left = sum("; 0 left:" not in row["reason"] for row in abandoned)
    print(f"abandoned {len(abandoned)} ({left} by a flow leaving, {len(abandoned) - left} by one joining): "
          f"{dict(judged)}")
    after = sorted(float(row["dt"]) * 1e6 for row in abandoned)
    if after:
        print(f"  after their change: median {statistics.median(after):.1f} us, "
              f"p90 {after[int(0.9 * len(after))]:.1f} us, max {after[-1]:.1f} us")
    misses = [row for row in rows if row["limit"] == "miss"]
    starting = sum("1" in re.findall(r" s([01]) ", row["reason"]) for row in misses)
    keys = [row["reason"].split(":")[0].split()[1] for row in misses]
    print(f"misses {len(misses)}: {starting} keyed with a flow in slow start; {len(set(keys))} keys, "
          f"{len(keys) - len(set(keys))} lookups met a key seen before")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
