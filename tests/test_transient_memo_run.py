"""The transient memo in a real ns-3 run (``--transient-memo``), its restores checked by the guard."""

import csv

import pytest

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

SCRIPT = REPO / "tests" / "scripts" / "transient_repeats.py"


def test_a_repeated_transient_is_restored_and_the_guard_measures_it(wormhole, tmp_path):
    """Three rounds of two long DCTCP flows and a joiner: later rounds restore the first's transient.

    The rounds are episodes that differ in the joiner's offset, so the whole-episode
    memo replays none; each round's transient after the joiner leaves starts from a
    steady state of three flows, and the later rounds' keys are the first's (rounds 2
    and 3 restore it: 19.1 ms, 318,421 events each).
    """
    results, trace = tmp_path / "run.json", tmp_path / "trace.csv"
    done = wormhole("run", "--transient-memo", "--verify", "1", "--results", results, "--trace", trace,
                    SCRIPT)
    assert done.returncode == 0, done.stderr
    run = load_json(results)
    counts = run["transient_memo"]
    assert counts["hit"] == 2 and counts["recorded"] >= 1
    assert counts["events_avoided"] == 2 * 318_421
    with trace.open() as rows:
        hits = [row for row in csv.DictReader(rows) if row["kind"] == "transient-hit"]
    assert len(hits) == counts["hit"]
    for row in hits:
        assert float(row["dt"]) > 0 and int(row["credited_bytes"]) > 0 and int(row["events_moved"]) > 0
        assert "no flow due on its links before its flows end" in row["reason"]
    # every restore re-simulated packet by packet in a forked child: each flow's bytes at its end
    checked = run["verify"]["transient"]
    assert checked["checked"] == counts["hit"] and checked["stopped"] is None
    assert checked["error_max"] <= 0.01
    # every sink got every byte
    assert all(f["rx_bytes"] == f["bytes"] for f in run["flows"])
