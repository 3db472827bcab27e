"""experiments/zoo/ceiling/skippable.py: the ceiling of any skipper or memo on a script, from its partitions."""

import csv
import importlib.util
import json
import math
import subprocess
import sys

import pytest

from conftest import REPO

TOOL = REPO / "experiments" / "zoo" / "ceiling" / "skippable.py"
_spec = importlib.util.spec_from_file_location("skippable", TOOL)
skippable = importlib.util.module_from_spec(_spec)
sys.modules["skippable"] = skippable
_spec.loader.exec_module(skippable)


def write_run(directory, flows, lifetimes, events=1000, sample_period=1e-4, min_window=4):
    directory.mkdir()
    (directory / "run.json").write_text(json.dumps({
        "events": events, "sample_period_s": sample_period, "config": {"min_window": min_window},
        "flows": [{"simulation": 0, "id": i, "src": src, "dst": dst, "dport": port, "bytes": size, "start": start}
                  for i, (src, dst, port, size, start) in enumerate(flows)],
    }))
    with (directory / "partitions.csv").open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["simulation", "start", "end", "events", "flows"])
        writer.writerows([0, start, end, n, " ".join(map(str, ids))] for start, end, n, ids in lifetimes)


def test_the_bound_counts_each_lifetimes_events_after_convergence_and_window_and_repeats_by_offsets(tmp_path):
    # an exchange of two flows, the same exchange an iteration later (its second flow 0.3 us late), and a
    # lone flow 200 us long; two flow events at one instant leave a lifetime no time passes in (dropped)
    flows = [("a", "b", 1, 100, 0.0), ("b", "a", 1, 100, 0.0),
             ("a", "b", 1, 100, 0.005), ("b", "a", 1, 100, 0.0050003), ("a", "c", 2, 50, 0.01)]
    write_run(tmp_path / "run", flows, [
        (0.0, 0.001, 400, (0, 1)), (0.005, 0.006, 400, (2, 3)), (0.01, 0.01, 0, (4,)), (0.01, 0.0102, 100, (4,)),
    ])
    c = skippable.analyze(tmp_path / "run", t_conv=0.0002, window=None)
    assert (c.total_events, c.partition_events, c.lifetimes, c.window) == (1000, 900, 3, pytest.approx(0.0004))
    # 800 of 900 events are in the 1 ms lifetimes, 100 (11%) in the 200 us one
    assert (c.length_quantiles["p10"], c.length_quantiles["p50"]) == (pytest.approx(0.0002), pytest.approx(0.001))
    assert c.share_longer_than["0.0003"] == pytest.approx(0.8)
    bound = {(round(b["t_conv"] * 1e6), round(b["window"] * 1e6)): b for b in c.bound}
    # every event in a lifetime is skippable at T_conv 0 without a window: 90%, 10x at best
    assert bound[(0, 0)]["share"] == pytest.approx(0.9) and bound[(0, 0)]["events_ratio"] == pytest.approx(10)
    # a 400 us window leaves 60% of the 1 ms lifetimes and nothing of the 200 us one
    assert bound[(0, 400)]["share"] == pytest.approx(0.48)
    # T_conv 100 us (half the measured one): 90% of 800, and all of the lone flow's 100 (it has no one to
    # converge with); with the window, half of 800
    assert c.alone_events == 100
    assert bound[(100, 0)]["share"] == pytest.approx(0.82) and bound[(100, 400)]["share"] == pytest.approx(0.4)
    alone = skippable.analyze(tmp_path / "run", t_conv=0.0002, window=None, t_conv_alone=0.0001)
    assert {(round(b["t_conv"] * 1e6), round(b["window"] * 1e6)): b["share"] for b in alone.bound}[(100, 0)] == \
        pytest.approx(0.77)
    assert bound[(800, 400)]["share"] == 0.0 and bound[(800, 400)]["events_ratio"] == 1.0
    # 2x leaves half the events: 800 * (1 - D / 1 ms) = 500 once the 200 us lifetime is gone, D = 375 us;
    # 5x leaves 800: 900 - 800 D / 1 ms - 100 D / 200 us = 800, D = 1/13 ms
    assert c.dead_time_for["2x"] == pytest.approx(375e-6) and c.dead_time_for["5x"] == pytest.approx(1e-3 / 13)
    repeats = {r["tolerance"]: r for r in c.transient_repeats}
    # 0.3 us apart: not the same transient to the ns; the same to 1 us, or ignoring offsets
    assert repeats[1e-9]["repeats"] == 0 and repeats[1e-9]["events_ratio"] == 1.0
    assert repeats[1e-6]["repeats"] == repeats[math.inf]["repeats"] == 1
    assert repeats[1e-6]["share"] == pytest.approx(0.4)
    assert c.episodes == 3 and [r["repeats"] for r in c.episode_repeats] == [0, 1, 1, 1]


def test_episodes_join_lifetimes_that_share_flows():
    flows = {(0, i): skippable.Flow(0, i, ("h", str(i), 1, 10), start) for i, start in enumerate((0.0, 0.1, 0.2))}
    lifetimes = [skippable.Lifetime(0, 0.0, 0.1, (0,), 5), skippable.Lifetime(0, 0.1, 0.2, (0, 1), 7),
                 skippable.Lifetime(0, 0.2, 0.3, (2,), 11)]
    found = skippable.episodes(lifetimes, flows)
    assert [([f.id for f in e.flows], e.events) for e in found] == [([0, 1], 12), ([2], 11)]


def test_convergence_is_the_first_bin_from_which_every_flow_holds_its_share_until_the_next_change():
    # flow 0 alone at 2 per s; flow 1 joins at t=10: 1.5 and 0.5 for four samples, then 1 and 1
    times = [float(t) for t in range(31)]
    received = [[0, 0]]
    for t in times[1:]:
        rate = (2, 0) if t <= 10 else (1.5, 0.5) if t <= 14 else (1, 1)
        received.append([received[-1][0] + rate[0], received[-1][1] + rate[1]])
    found = skippable.convergence_times(times, received, sizes=[10**6, 10**6], starts=[0.0, 10.0], bin_s=1.0,
                                        tolerance=0.05)
    assert found == [(0.0, 0.0), (10.0, 4.0)]


@pytest.mark.slow
def test_a_recorded_run_is_plain_ns3s_and_its_lifetimes_hold_the_events_of_its_partitions(tmp_path):
    tiny = ["--leaves", "2", "--hosts-per-leaf", "2", "--message-kb", "128", "--iterations", "2", "--layers", "1"]
    script = REPO / "experiments" / "zoo" / "moe_alltoall.py"
    done = subprocess.run([sys.executable, TOOL, "record", "--out", "rec", script, *tiny],
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    plain = subprocess.run([sys.executable, script, *tiny], capture_output=True, text=True, timeout=600)
    assert done.stdout == plain.stdout
    c = skippable.analyze(tmp_path / "rec", t_conv=0.0, window=None)
    # plain ns-3's events (tests/test_zoo.py's baseline): nothing skipped, nothing replayed
    assert c.total_events == 16_416
    # each all-to-all of the two groups: one partition of a pair of 128 KB messages, 127 us long
    assert (c.lifetimes, c.partition_events) == (8, 14_054)
    assert c.length_quantiles["p50"] == pytest.approx(127.26e-6, abs=1e-8)
    bound = {(b["t_conv"], b["window"]): b for b in c.bound}
    assert bound[(0.0, 0.0)]["share"] == pytest.approx(14_054 / 16_416)
    # the judging window (4 samples of 51.2 us) is longer than any lifetime
    assert bound[(0.0, c.window)]["share"] == 0.0
    # 5x: an oracle may spend no more than a sixth of each lifetime before it skips the rest
    assert c.dead_time_for["5x"] == pytest.approx(127.26e-6 * (1 - 0.8 * 16_416 / 14_054), abs=1e-8)
