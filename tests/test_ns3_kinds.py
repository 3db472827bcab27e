"""The kinds of ns-3's own test suites (simulator events, applications, TCP, traffic control), accelerated.

ns-3's suites of these areas pass under the accelerator as they pass plainly
(issue 41), but most of their traffic is too short or too lossy to skip. These
tests build traffic of each kind that the accelerator can act on, compare with
plain ns-3, and show that it acted: the flows tracked, events of theirs moved
(events carry their flow's tag), skips where the traffic allows and none where
it does not. Several simulations in one process: test_simulations_in_one_process.py.
"""

import csv

import pytest

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

SCRIPTS = REPO / "tests" / "scripts"


def compare(wormhole, tmp_path, script, *args, options=()):
    done = wormhole("compare", *options, "--json", tmp_path / "c.json", "--trace", tmp_path / "t.csv", script, *args)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = load_json(tmp_path / "c.json")
    skips = [row for row in csv.DictReader((tmp_path / "t.csv").open()) if row["kind"] == "steady"]
    assert summary["stdout_identical"] and summary["rx_bytes_exact"]
    assert summary["fallback"] is None
    return summary, skips


def skipped_flows(skips):
    return {int(flow) for row in skips for flow in row["partition"].split()}


def test_the_scripts_own_events_keep_ns3s_semantics_beside_skipped_flows(wormhole, tmp_path):
    """Ticks, a far event's IsPending and GetDelayLeft, Cancel, Remove, same-time order, contexts, Stop and
    a second Run(), destroy events: every line as plain ns-3 prints it, while the flows between them skip."""
    summary, skips = compare(wormhole, tmp_path, SCRIPTS / "event_semantics.py")
    assert skipped_flows(skips) == {0, 1}
    assert all(int(row["events_moved"]) > 0 for row in skips)  # the flows' tagged events moved, no other
    assert summary["fct_max_rel_err"] <= 0.01


def test_applications_count_what_they_count_plainly_and_their_flows_are_tracked_and_skipped(wormhole, tmp_path):
    summary, skips = compare(wormhole, tmp_path, SCRIPTS / "applications_mix.py")
    # BulkSend and OnOff are tracked; UdpClient and UdpEcho are not flows of the tracker
    assert [(f["id"], f["sport"] > 0, f["dport"]) for f in summary["flows"]] == [(0, True, 5000), (1, True, 6000)]
    assert skipped_flows(skips) == {0, 1}
    assert summary["fct_max_rel_err"] <= 0.01
    assert summary["events_accelerated"] < summary["events_baseline"]


def test_tcp_congestion_controls_are_skipped_where_they_may_be(wormhole, tmp_path):
    variants = "TcpNewReno:red,TcpDctcp:red,TcpCubic:red"
    summary, skips = compare(wormhole, tmp_path, SCRIPTS / "dumbbell_variants.py", "--variants", variants)
    by_simulation = {f["id"]: f["id"] // 2 for f in summary["flows"]}
    # NewReno, DCTCP, and Cubic, whose epoch a skip moves with the flow
    assert {by_simulation[f] for f in skipped_flows(skips)} == {0, 1, 2}
    assert all(f["credited_bytes"] > 0 for f in summary["flows"])
    assert summary["fct_mean_rel_err"] <= 0.01 and summary["fct_max_rel_err"] <= 0.03


def test_cubic_with_everything_else_ns3s_defaults_is_skipped_within_the_bounds(wormhole, tmp_path):
    """Cubic, FQ-CoDel on every port, 536-byte segments, 128 KiB buffers: skipped by default, in whole cycles.

    The bottleneck's FQ-CoDel drops (its queue stands above CoDel's 5 ms target), so Cubic backs off and
    grows again along its cubic function: its epoch moves with each skip, and each skip spans whole
    congestion cycles (1.35 s here). Steadiness waits for two of them, so the flows carry 48 MB: at 16 MB
    less than a cycle is left after the two, and nothing is skipped."""
    summary, skips = compare(wormhole, tmp_path, SCRIPTS / "cubic_defaults.py", "--mb", "48")
    assert skipped_flows(skips) == {0, 1}
    assert all(int(row["cycles"]) >= 1 for row in skips)
    assert summary["events_accelerated"] < summary["events_baseline"]
    assert summary["fct_mean_rel_err"] <= 0.01 and summary["fct_max_rel_err"] <= 0.03


def test_cubic_s_window_read_by_the_script_after_a_capacity_step_is_plain_ns3_s(wormhole, tmp_path):
    """ns3-tcp-cubic's capacity step, accelerated: the flows cycle at 100 Mb/s, skip whole cycles, run the
    rest of the interval packet by packet, and meet the step at 4 s in the phase plain ns-3's are in, so the
    windows the script reads after it climb as plain ns-3's (a skip of any other length resumed them
    behind or ahead of it by the rest of a cycle)."""
    args = [SCRIPTS / "cubic_capacity_step.py", "--flows", "2", "--rate", "100Mbps", "--step-rate", "200Mbps",
            "--delay", "1ms", "--step-s", "4", "--stop-s", "4.6", "--read-ms", "100"]
    plain = wormhole("run", "--baseline", "--results", tmp_path / "plain.json", *args)
    assert plain.returncode == 0, plain.stderr[-3000:]
    accelerated = wormhole("run", "--results", tmp_path / "r.json", "--trace", tmp_path / "t.csv", *args)
    assert accelerated.returncode == 0, accelerated.stderr[-3000:]
    skips = [row for row in csv.DictReader((tmp_path / "t.csv").open()) if row["kind"] == "steady"]
    assert skips and all(int(row["cycles"]) >= 1 for row in skips)
    assert sum(float(row["dt"]) for row in skips) > 1.0  # seconds of the 4 before the step

    def readings(stdout):
        return [[float(w) for w in line.split()[3:]] for line in stdout.splitlines() if line.startswith("t ")]

    before, after = readings(plain.stdout), readings(accelerated.stdout)
    assert len(before) == len(after) == 6
    for plain_windows, windows in zip(before, after):
        # within 2 segments (2%): paused at 1.69 s and resumed at the step, 3.03 cycles on, they read 5 more
        assert all(abs(w - p) <= max(2.0, 0.02 * p) for w, p in zip(windows, plain_windows)), (before, after)
