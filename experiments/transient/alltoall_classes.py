"""Which all-to-alls of a run are the same one, up to a renaming of their ranks, and whether plain ns-3 ran them alike.

Reads a baseline's flows (a compare's ``baseline/flows.csv``, or a kept baseline's
``flows.csv.gz``). Each all-to-all instance is one message per (source, destination)
pair of its group; its *shape* is its messages' start offsets from its first, with
its ranks renamed to make that list least (every renaming tried: four ranks, 24).
On a rail-optimized fabric an expert-parallel group's ranks are hosts of one rail
switch, so a renaming is a symmetry of the fabric: two instances of one shape are
the same all-to-all but for what else the run has on their links and for the order
their flows are made in, which no renaming keeps (the memo keys both).

It prints how many shapes the first iteration has, which shapes come more than once
in it and whether their FCTs are then the same (each flow against its renamed
counterpart), and whether a later iteration brings a shape the first did not. A
shape met once in the first iteration can only miss there: no key can make its
lookup hit.
"""

from __future__ import annotations

import collections
import csv
import gzip
import itertools
import sys
from pathlib import Path

from replay_across_offsets import Instance, instances  # the all-to-alls of a flows table, as that reader finds them

Shape = tuple[tuple[int, int, int], ...]


def read(path: Path) -> list[dict[str, str]]:
    with (gzip.open(path, "rt") if path.suffix == ".gz" else path.open()) as table:
        return list(csv.DictReader(table))


def ns(seconds: str) -> int:
    return round(float(seconds) * 1e9)


def shape(instance: Instance) -> tuple[Shape, dict[tuple[int, int], int], int]:
    """The instance's least shape under a renaming of its ranks, its FCTs by renamed pair (ns), its start (ns)."""
    start = min(ns(flow["start"]) for flow in instance.values())
    ranks = sorted({int(rank) for pair in instance for rank in pair})
    best: tuple[Shape, dict[int, int]] | None = None
    for renamed in itertools.permutations(range(len(ranks))):
        name = dict(zip(ranks, renamed))
        form = tuple(sorted((ns(f["start"]) - start, name[int(s)], name[int(d)]) for (s, d), f in instance.items()))
        if best is None or form < best[0]:
            best = (form, name)
    assert best is not None
    form, name = best
    return form, {(name[int(s)], name[int(d)]): ns(f["fct"]) for (s, d), f in instance.items()}, start


def main(flows_csv: Path) -> None:
    found = instances(read(flows_csv))
    shapes: dict[Shape, list[tuple[str, str, int, dict[tuple[int, int], int]]]] = collections.defaultdict(list)
    for (group, iteration), instance in found:
        form, fcts, start = shape(instance)
        shapes[form].append((group, iteration, start, fcts))
    first = min(iteration for (_, iteration), _ in found)
    in_first = sum(iteration == first for (_, iteration), _ in found)
    print(f"{len(found)} all-to-alls, {len(shapes)} shapes; the first iteration: {in_first} all-to-alls "
          f"(twins of one instant counted apart), "
          f"{sum(any(m[1] == first for m in ms) for ms in shapes.values())} shapes")
    for form, members in shapes.items():
        met = [m for m in members if m[1] == first]
        starts = sorted({m[2] for m in met})
        if len(starts) < 2:
            continue
        runs: dict[tuple, list[int]] = collections.defaultdict(list)  # FCTs -> the instants that ran so
        for _, _, start, fcts in met:
            if start not in runs[tuple(sorted(fcts.items()))]:
                runs[tuple(sorted(fcts.items()))].append(start)
        offsets = sorted({offset for offset, _, _ in form})
        print(f"  shape with offsets {offsets} ns met at {len(starts)} instants of the first iteration, "
              f"{len(runs)} outcome(s): " + "; ".join(
                  ", ".join(f"{s / 1e6:.6f}" for s in alike) + " ms" for alike in runs.values()))
    later = [m for ms in shapes.values() for m in ms if m[1] != first]
    new = [m for m in later if not any(other[1] == first for other in shapes[next(
        form for form, ms in shapes.items() if m in ms)])]
    print(f"later iterations: {len(later)} all-to-alls, {len(new)} of a shape the first iteration did not have")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
