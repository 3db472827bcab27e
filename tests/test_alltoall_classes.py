"""experiments/transient/alltoall_classes.py: all-to-alls of one shape up to a renaming of their ranks."""

import csv
import subprocess
import sys

from conftest import REPO

TOOL = REPO / "experiments" / "transient" / "alltoall_classes.py"
FIELDS = ("task", "iteration", "collective", "group", "step", "phase", "src", "dst", "bytes", "start", "finish", "fct")


def alltoall(ranks, start_s, late, fcts, iteration="0"):
    """An all-to-all of ``ranks``: the pairs in ``late`` start 1 us after the others; ``fcts`` by pair (s)."""
    rows = []
    for src in ranks:
        for dst in ranks:
            if src == dst:
                continue
            begin = start_s + (1e-6 if (src, dst) in late else 0.0)
            fct = fcts[(src, dst)]
            rows.append({"task": len(rows), "iteration": iteration, "collective": "alltoall", "group": "ep/0",
                         "step": 0, "phase": "forward", "src": src, "dst": dst, "bytes": 1000,
                         "start": repr(begin), "finish": repr(begin + fct), "fct": repr(fct)})
    return rows


def run(tmp_path, rows):
    table = tmp_path / "flows.csv"
    with table.open("w", newline="") as out:
        writer = csv.DictWriter(out, FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    done = subprocess.run([sys.executable, TOOL, table], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_an_all_to_all_with_its_ranks_renamed_is_one_shape_and_its_outcomes_are_told_apart(tmp_path):
    ranks = (0, 2, 4)
    fcts = {(s, d): (10 + 3 * s + d) * 1e-6 for s in ranks for d in ranks if s != d}
    # the second is the first with ranks 0 and 2 swapped, its FCTs swapped alike: the same run
    swap = {0: 2, 2: 0, 4: 4}
    renamed = {(swap[s], swap[d]): fct for (s, d), fct in fcts.items()}
    # the third is the same shape, one flow 1 ns slower; the fourth has two late pairs, another shape
    slower = dict(renamed)
    slower[(2, 4)] += 1e-9
    rows = (alltoall(ranks, 1e-3, {(0, 2)}, fcts) + alltoall(ranks, 2e-3, {(2, 0)}, renamed)
            + alltoall(ranks, 3e-3, {(2, 0)}, slower) + alltoall(ranks, 4e-3, {(0, 4), (4, 0)}, fcts))
    out = run(tmp_path, rows)
    assert "4 all-to-alls, 2 shapes" in out
    assert "met at 3 instants of the first iteration, 2 outcome(s): 1.000000, 2.000000 ms; 3.000000 ms" in out
    assert "later iterations: 0 all-to-alls" in out
