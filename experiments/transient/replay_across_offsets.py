"""How far off an all-to-all replayed from an earlier one whose joiners came at other offsets would be.

Reads the baseline's flows of a compare (plain ns-3). Each all-to-all instance is
one message per (source, destination) pair of its group; a first-iteration one is
compared with every earlier one of its group in that iteration, each flow given its
counterpart's FCT, and the best of them (the least mean error) is reported.
"""

from __future__ import annotations

import collections
import csv
import statistics
import sys
from pathlib import Path

Instance = dict[tuple[str, str], dict[str, str]]


def instances(flows: list[dict[str, str]]) -> list[tuple[tuple[str, str], Instance]]:
    """The all-to-alls, by (group, iteration): a pair met again opens the group's next one."""
    by_group: dict[tuple[str, str], list[dict[str, str]]] = collections.defaultdict(list)
    for flow in flows:
        if flow["collective"] == "alltoall":
            by_group[(flow["group"], flow["iteration"])].append(flow)
    found = []
    for group, members in by_group.items():
        current: Instance = {}
        for flow in sorted(members, key=lambda f: float(f["start"])):
            pair = (flow["src"], flow["dst"])
            if pair in current:
                found.append((group, current))
                current = {}
            current[pair] = flow
        found.append((group, current))
    return found


def opening(instance: Instance) -> float:
    return min(float(flow["start"]) for flow in instance.values())


def main(compared: Path) -> None:
    with (compared / "baseline" / "flows.csv").open() as table:
        found = instances(list(csv.DictReader(table)))
    best = []
    for group, instance in found:
        if group[1] != "0":
            continue
        start = opening(instance)
        candidates = []
        for other_group, other in found:
            if other_group != group or opening(other) >= start or set(other) != set(instance):
                continue
            errors = [abs(float(instance[p]["fct"]) - float(other[p]["fct"])) / float(instance[p]["fct"])
                      for p in instance]
            apart = max(abs((float(instance[p]["start"]) - start) - (float(other[p]["start"]) - opening(other)))
                        for p in instance)
            candidates.append((statistics.mean(errors), max(errors), apart))
        if candidates:
            best.append(min(candidates))
    within = sum(mean <= 0.01 and most <= 0.03 for mean, most, _ in best)
    print(f"{len(best)} first-iteration all-to-alls with an earlier one of their group; from the best of them, "
          f"FCT error per all-to-all: mean median {100 * statistics.median(b[0] for b in best):.2f}%, "
          f"max median {100 * statistics.median(b[1] for b in best):.2f}%; joiners' offsets apart median "
          f"{1e6 * statistics.median(b[2] for b in best):.2f} us; within 1% mean and 3% max: {within}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
