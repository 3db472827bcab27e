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
    summary, skips = compare(wormhole, tmp_path, SCRIPTS / "dumbbell_variants.py", "--variants", variants,
                             options=["--skip-cubic"])
    by_simulation = {f["id"]: f["id"] // 2 for f in summary["flows"]}
    # NewReno, DCTCP, and Cubic, whose epoch a skip moves with the flow
    assert {by_simulation[f] for f in skipped_flows(skips)} == {0, 1, 2}
    assert all(f["credited_bytes"] > 0 for f in summary["flows"])
    assert summary["fct_mean_rel_err"] <= 0.01 and summary["fct_max_rel_err"] <= 0.03


def test_cubic_with_everything_else_ns3s_defaults_is_skipped_within_the_bounds(wormhole, tmp_path):
    """Cubic, FQ-CoDel on every port, 536-byte segments, 128 KiB buffers: with --skip-cubic, skips.

    The bottleneck's FQ-CoDel drops (its queue stands above CoDel's 5 ms target), so Cubic backs off and
    grows again along its cubic function: its epoch moves with each skip. Steadiness waits for two whole
    congestion cycles, so the flows carry 16 MB (at 6 MB they end before their second cycle)."""
    summary, skips = compare(wormhole, tmp_path, SCRIPTS / "cubic_defaults.py", "--mb", "16",
                             options=["--skip-cubic"])
    assert skipped_flows(skips) == {0, 1}
    assert summary["events_accelerated"] < summary["events_baseline"]
    assert summary["fct_mean_rel_err"] <= 0.01 and summary["fct_max_rel_err"] <= 0.03
