"""``--verify``, the error guard, on a real ns-3 run: a forked child re-simulates skips packet by packet.

The dumbbell's 2 flows (40 and 80 MB, started together: started 4 ms apart, the
first is alone and meets no mark, and the pair ends before it cycles twice) give
one skip with default settings;
checking it (``--verify 1``) must leave the run's own results exactly as they
are without the guard. A deliberately loose setting (any spread is steady, any
share fair, no convergence owed, no congestion cycle, no settling) skips 10 and 20 MB flows while the second,
started 1 ms after the first, still takes its share: the child's packets
disagree with the credit, and the guard stops skipping. (With the flows 4 ms
apart the first ends before the second's bytes in flight stop growing.)
"""

from __future__ import annotations

import csv

import pytest

from conftest import DUMBBELL, load_json

ARGS = ("--flows", "2", "--min-mb", "40", "--max-mb", "80", "--stagger-ms", "0")
LOOSE_ARGS = ("--flows", "2", "--min-mb", "10", "--max-mb", "20", "--stagger-ms", "1")
LOOSE = ("--theta", "0.99", "--fairness", "10", "--convergence-budget", "0", "--congestion-cycles", "0",
         "--settle-rtts", "0", "--window", "2")


def _run(wormhole, tmp_path, name, *options, args=ARGS):
    done = wormhole("run", "--results", tmp_path / f"{name}.json", "--trace", tmp_path / f"{name}.csv",
                    *options, DUMBBELL, *args)
    assert done.returncode == 0, done.stderr
    return done, load_json(tmp_path / f"{name}.json")


@pytest.mark.slow
def test_a_checked_skip_is_measured_by_the_child_and_leaves_the_run_as_it_was(wormhole, tmp_path):
    plain_done, plain = _run(wormhole, tmp_path, "plain")
    done, checked = _run(wormhole, tmp_path, "checked", "--verify", "1")
    assert plain["skips"] == checked["skips"] >= 1 and plain["verify"] is None
    assert checked["flows"] == plain["flows"]  # every flow's FCT, bytes and credit
    assert (checked["events"], done.stdout) == (plain["events"], plain_done.stdout)
    verify = checked["verify"]
    assert verify["skip"]["checked"] == checked["skips"] and verify["skip"]["stopped"] is None
    (check,) = verify["checks"]
    assert check["kind"] == "skip" and check["bytes_off"] > 0  # the child measured its own bytes
    assert 0 < check["error"] < verify["skip"]["bound"]
    assert "verify" not in done.stderr


@pytest.mark.slow
def test_a_loose_skip_trips_the_guard_which_stops_skipping(wormhole, tmp_path):
    # the second flow 1 ms after the first: the loose setting skips both while it takes its share
    done, loose = _run(wormhole, tmp_path, "loose", "--verify", "1", *LOOSE, args=LOOSE_ARGS)
    stopped = loose["verify"]["skip"]["stopped"]
    assert stopped is not None and loose["verify"]["skip"]["error_max"] > 0.05
    assert [line for line in done.stderr_lines if "verify" in line] == [f"wormhole-ns3: verify: {stopped}"]
    with (tmp_path / "loose.csv").open() as trace:
        rows = list(csv.DictReader(trace))
    guard = [r for r in rows if r["kind"] == "guard"]
    assert [r["limit"] for r in guard] == ["skips stopped"]
    assert not [r for r in rows if r["kind"] == "steady" and float(r["time"]) > float(guard[0]["time"])]


@pytest.mark.slow
def test_replays_and_skips_of_a_ring_are_checked_and_its_flows_stay_byte_identical(experiment_cli, tmp_path):
    """The ring's small preset replays (a memo hit) with a run-only memo: check them all.

    Its steps' flows are each alone on their links and meet no mark: they run packet by
    packet (``steady._cycle_unseen``), so the skips checked are the dumbbell's above.
    """
    for name, extra in (("plain", ()), ("checked", ("--verify", "1"))):
        done = experiment_cli("experiment", "run", "ring", "--preset", "small", "--memo", ":memory:",
                              *extra, "--out", name)
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "checked" / "flows.csv").read_bytes() == (tmp_path / "plain" / "flows.csv").read_bytes()
    results = load_json(tmp_path / "checked" / "run.json")
    verify = results["verify"]
    assert verify["replay"]["checked"] >= 1 and verify["skip"]["checked"] == results["skips"] == 0
    replays = [c for c in verify["checks"] if c["kind"] == "replay"]
    # the child simulated the replayed flows to their end: a recorded episode replays what it simulated
    assert all(c["fct_simulated"] > 0 and c["error"] < verify["replay"]["bound"] for c in replays)
    assert verify["replay"]["stopped"] is None and verify["skip"]["stopped"] is None
