"""Real ns-3 runs, baseline against accelerated, as a user runs them."""


import re

import pytest

from conftest import DUMBBELL, REPO, SCRIPTS, load_json, steady_skips

REPO_SCRIPTS = REPO / "tests" / "scripts"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def dumbbell_comparison(tmp_path_factory):
    """A small dumbbell, 2 DCTCP flows of 40 and 80 MB over 10 Gbps: what ``compare`` makes of its two sides.

    The sides are run here (the plain one is also what enable_inside.py's run is held to) and joined by
    compare's own comparison() and table.
    """
    import subprocess
    import sys

    from wormhole_ns3.tools.report import comparison, format_table

    from conftest import child_environment

    out = tmp_path_factory.mktemp("dumbbell")
    args = [DUMBBELL, "--flows", "2", "--min-mb", "40", "--max-mb", "80", "--stagger-ms", "0"]
    sides = {}
    for side, options in (("baseline", ["--baseline"]), ("accelerated", ["--trace", out / "skips.csv"])):
        done = subprocess.run([sys.executable, "-m", "wormhole_ns3", "run", "--results", out / f"{side}.json",
                               *options, *args], cwd=out, capture_output=True, text=True,
                              env=child_environment(), timeout=900)
        assert done.returncode == 0, done.stderr
        sides[side] = load_json(out / f"{side}.json"), done.stdout
    summary = comparison(sides["baseline"][0], sides["accelerated"][0])
    summary["stdout_identical"] = sides["baseline"][1] == sides["accelerated"][1]
    return summary, steady_skips(out / "skips.csv"), format_table(summary), sides["baseline"]


def test_dumbbell_skips_and_stays_accurate(dumbbell_comparison):
    summary, skips, table, _ = dumbbell_comparison
    assert summary["skips"] == len(skips) >= 1
    assert summary["rx_bytes_exact"]
    assert summary["stdout_identical"]
    assert summary["flows_finished_accelerated"] == summary["flows_finished_baseline"] == 2
    assert summary["fct_mean_rel_err"] <= 0.01
    assert summary["fct_max_rel_err"] <= 0.03
    # the pair is skipped once DCTCP cycles; the 80 MB flow left alone then grows its window into its
    # own host's queue, which marks nothing, until it ends: that window is never steady, and runs
    # packet by packet (``steady._cycle_unseen``)
    assert summary["events_accelerated"] * 3 < summary["events_baseline"] * 2
    assert "speedup (Run() wall)" in table and "speedup (process)" in table


def test_every_skip_says_what_it_skipped_and_why(dumbbell_comparison):
    summary, skips, _, _ = dumbbell_comparison
    for row in skips:
        assert float(row["dt"]) > 0
        assert int(row["events_moved"]) > 0
        assert int(row["credited_bytes"]) > 0
        assert int(row["queue_packets"]) > 0  # a saturated bottleneck holds a queue, kept as is
        assert "aggregate spread" in row["reason"] and "RTTs since last flow event" in row["reason"]
        assert row["limit"]
    credited = sum(f["credited_bytes"] for f in summary["flows"])
    assert credited == sum(int(r["credited_bytes"]) for r in skips)


def test_the_first_skip_waits_until_both_windows_have_cycled_twice_after_slow_start(dumbbell_comparison):
    """Both flows start together: their aggregate and shares hold within 20-odd RTTs, their windows do not.

    The cuts that end slow start leave DCTCP's estimate of the marks at 0.8, and it decays for
    tens of RTTs while the windows grow back with no mark. Skipped there (as it was until
    ``steady._cycle_unseen``), the pair carried that transient through the skip; it is now skipped
    once each window has cycled twice (a mark, the window rising, a mark again).
    """
    _, skips, _, _ = dumbbell_comparison
    first = skips[0]
    assert first["partition"] == "0 1"
    since = int(re.search(r"(\d+) RTTs since last flow event", first["reason"]).group(1))
    assert since >= 30 and first["reason"].endswith("held back until then by congestion cycles not yet repeating")


def test_same_script_same_results_byte_for_byte(wormhole, tmp_path):
    args = [DUMBBELL, "--flows", "2", "--min-mb", "20", "--max-mb", "40"]
    first = wormhole("run", "--results", tmp_path / "1.json", "--trace", tmp_path / "1.csv", *args)
    second = wormhole("run", "--results", tmp_path / "2.json", "--trace", tmp_path / "2.csv", *args)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    assert (tmp_path / "1.csv").read_bytes() == (tmp_path / "2.csv").read_bytes()
    one, two = load_json(tmp_path / "1.json"), load_json(tmp_path / "2.json")
    for run in (one, two):
        run.pop("run_wall_s")
        run.pop("process_wall_s")
    assert one == two


def test_leaf_spine_steady_group_skips_while_the_bursty_group_runs_packet_by_packet(
    wormhole, tmp_path
):
    script = SCRIPTS / "leaf_spine_two_groups.py"
    # the bursty group starts over 30 ms: the steady pair is skipped once its DCTCP windows cycle
    args = ["--steady-mb", "60", "--bursty-flows", "30", "--gap-ms", "1"]
    base = wormhole("run", "--baseline", "--results", tmp_path / "b.json", script, *args)
    accel = wormhole(  # fast-forwarding alone: the memo would replay (and credit) bursty flows too
        "run", "--no-memo", "--results", tmp_path / "a.json", "--trace", tmp_path / "s.csv", script, *args
    )
    assert base.returncode == accel.returncode == 0, accel.stderr
    # per-flow totals are exact; the script's per-link packet counters see real packets only
    flow_lines = lambda out: [line for line in out.splitlines() if line.startswith("flow ")]  # noqa: E731
    assert flow_lines(accel.stdout) == flow_lines(base.stdout)
    b, a = load_json(tmp_path / "b.json"), load_json(tmp_path / "a.json")
    steady = {f["id"] for f in a["flows"] if f["dport"] < 6000}
    skips = steady_skips(tmp_path / "s.csv")
    assert skips, "the steady group never skipped"
    bursty_start = min(f["start"] for f in a["flows"] if f["id"] not in steady)
    bursty_end = max(f["start"] + f["fct"] for f in a["flows"] if f["id"] not in steady)
    for row in skips:
        assert {int(x) for x in row["partition"].split()} <= steady
    assert any(bursty_start < float(r["time"]) < bursty_end for r in skips), (
        "no skip while the bursty group was active"
    )
    for f in a["flows"]:
        if f["id"] not in steady:
            assert f["credited_bytes"] == 0
    fct_b = {f["id"]: f["fct"] for f in b["flows"]}
    errors = [abs(f["fct"] - fct_b[f["id"]]) / fct_b[f["id"]] for f in a["flows"]]
    assert max(errors) <= 0.03
    assert sum(errors) / len(errors) <= 0.01
    assert a["events"] < b["events"]


def test_flow_monitor_counts_survive_skips(wormhole, tmp_path):
    from conftest import REPO

    script = REPO / "tests" / "scripts" / "dumbbell_flowmonitor.py"
    args = ["--flows", "2", "--min-mb", "40", "--max-mb", "80", "--stagger-ms", "0"]
    base = wormhole("run", "--baseline", script, *args)
    accel = wormhole("run", "--trace", tmp_path / "s.csv", script, *args)
    assert base.returncode == accel.returncode == 0, accel.stderr
    assert steady_skips(tmp_path / "s.csv"), "nothing was skipped"

    def rows(out):
        return {int(r[0]): r for r in (line.split() for line in out.splitlines())}

    b, a = rows(base.stdout), rows(accel.stdout)
    assert b.keys() == a.keys() and len(b) == 4  # two data flows, two ACK flows
    for fid in b:
        for column in (3, 4, 5):  # tx packets, rx packets, rx bytes
            assert abs(int(a[fid][column]) - int(b[fid][column])) <= 0.01 * int(b[fid][column])
        assert a[fid][6] == b[fid][6] == "0"  # no lost packets
    # ACKs see no queueing, so their mean delay is the same in both runs unless the ACKs in
    # flight during a skip had the skipped time counted as delay (a skip here lasts ~80 ms)
    acks = [fid for fid in b if 5000 <= int(b[fid][1]) < 6000]  # from the sinks back
    assert len(acks) == 2
    for fid in acks:
        assert abs(float(a[fid][7]) - float(b[fid][7])) <= 0.02 * float(b[fid][7])


def test_a_congestion_control_with_time_based_state_is_never_skipped(wormhole, tmp_path):
    """H-TCP grows its window with the time since its last loss: no skip may pause it."""
    args = [DUMBBELL, "--flows", "2", "--min-mb", "20", "--max-mb", "30", "--stagger-ms", "0",
            "--tcp", "TcpHtcp"]
    base = wormhole("run", "--baseline", "--results", tmp_path / "b.json", *args)
    accel = wormhole("run", "--results", tmp_path / "a.json", *args)
    assert base.returncode == accel.returncode == 0, accel.stderr
    b, a = load_json(tmp_path / "b.json"), load_json(tmp_path / "a.json")
    assert a["skips"] == 0
    assert a["unskippable_flows"] == {"0": "ns3::TcpHtcp keeps time-based state",
                                      "1": "ns3::TcpHtcp keeps time-based state"}
    assert accel.stdout == base.stdout
    assert a["events"] == b["events"]
    assert [f["fct"] for f in a["flows"]] == [f["fct"] for f in b["flows"]]


def test_constant_rate_udp_flows_skip_and_bursty_onoff_does_not(wormhole, tmp_path):
    from conftest import REPO

    script = REPO / "tests" / "scripts" / "udp_constant_rate.py"
    done = wormhole("compare", "--json", tmp_path / "c.json", "--trace", tmp_path / "s.csv", script)
    assert done.returncode == 0, done.stderr
    summary = load_json(tmp_path / "c.json")
    assert summary["skips"] >= 1 and summary["rx_bytes_exact"] and summary["stdout_identical"]
    assert summary["fct_max_rel_err"] <= 0.01
    bursty = [f for f in summary["flows"] if f["dport"] == 7002]
    assert bursty[0]["credited_bytes"] == 0
    assert summary["packet_level_time_s"].get("unskippable flow", 0) > 0
    for row in steady_skips(tmp_path / "s.csv"):
        assert "2" not in row["partition"].split()


def test_enable_from_inside_a_plain_python_script(plain_python, dumbbell_comparison):
    """enable_inside.py runs the dumbbell of dumbbell_comparison: held to its plain side."""
    from conftest import REPO

    *_, (baseline, base_stdout) = dumbbell_comparison
    inside = plain_python(REPO / "tests" / "scripts" / "enable_inside.py")
    assert inside.returncode == 0, inside.stderr
    *flows, summary = inside.stdout.splitlines()
    skips, events = int(summary.split()[1]), int(summary.split()[3])
    assert skips >= 1
    assert base_stdout.splitlines() == flows  # exact totals
    # the 80 MB flow, alone once the 40 MB one ends, grows its window into its host's queue: packet by packet
    assert events * 3 < baseline["events"] * 2


def test_a_flow_a_workload_may_release_onto_a_partitions_links_holds_its_skip_off(wormhole, tmp_path):
    """FlowDag releases flows at run time; one may land on the links of a steady pair before it ends.

    A skip would freeze the pair in one phase of its congestion cycle, and the
    released flow would meet that phase, not plain ns-3's (it ended 12.9% off
    when a skip was taken and cut short at the release). The workload's oracle
    gives the earliest it may release it (every running flow taken to end now),
    and that is before the pair ends: the pair runs packet by packet, its time
    charged to "a flow due on its links", and every flow ends exactly as in
    plain ns-3. The long flow has a rival: alone, it meets no mark.
    """
    script = REPO_SCRIPTS / "flow_dag_star.py"
    done = wormhole("compare", "--json", tmp_path / "c.json", "--trace", tmp_path / "s.csv", script)
    assert done.returncode == 0, done.stderr
    summary = load_json(tmp_path / "c.json")
    assert summary["skips"] == summary["skip_backs"] == 0
    assert summary["packet_level_time_s"]["a flow due on its links"] > 0.005
    assert summary["flows_finished_baseline"] == summary["flows_finished_accelerated"] == 4
    assert summary["rx_bytes_exact"] and summary["stdout_identical"]
    assert summary["fct_max_rel_err"] == 0.0


def test_enable_takes_a_memo_store_that_the_next_process_replays_from(plain_python, tmp_path):
    from conftest import REPO

    script = REPO / "tests" / "scripts" / "enable_memo_inside.py"
    args = (tmp_path / "memo", "--iterations", "2", "--mb", "4", "--compute-ms", "1")
    cold, warm = plain_python(script, *args), plain_python(script, *args)
    assert cold.returncode == 0 and warm.returncode == 0, (cold.stderr[-2000:], warm.stderr[-2000:])
    *cold_lines, cold_memo = cold.stdout.splitlines()
    *warm_lines, warm_memo = warm.stdout.splitlines()
    # the script saw the same iteration times, to within what a replay cannot carry over: a
    # replayed flow leaves none of its last ACKs in flight when the next episode opens
    times = [[float(line.split()[3]) for line in lines if line.startswith("iteration")]
             for lines in (cold_lines, warm_lines)]
    assert len(times[0]) == 2 and times[1] == pytest.approx(times[0], rel=1e-4)
    assert warm_lines[-1] == cold_lines[-1] == "tasks finished 58 of 58"
    cold_counts, warm_counts = cold_memo.split()[2::2], warm_memo.split()[2::2]
    assert int(cold_counts[2]) >= 1  # recorded
    assert int(warm_counts[0]) > int(cold_counts[0]) and int(warm_counts[1]) < int(cold_counts[1])


def test_profile_changes_nothing_simulated_and_accounts_for_all_of_run(wormhole, tmp_path):
    """``--profile`` is neutral: the same events, flows and skips as without it."""
    script = REPO_SCRIPTS / "flow_dag_star.py"
    runs = {}
    for name, options in (("plain", ()), ("profiled", ("--profile",))):
        # fast-forwarding alone: every Python entry is then a controller callback
        done = wormhole("run", "--no-memo", *options, "--results", tmp_path / f"{name}.json",
                        "--trace", tmp_path / f"{name}.csv", script)
        assert done.returncode == 0, done.stderr
        runs[name] = load_json(tmp_path / f"{name}.json")
    plain, profiled = runs["plain"], runs["profiled"]
    for key in ("events", "skips", "skip_backs", "skipped_time_s", "events_avoided", "flows"):
        assert profiled[key] == plain[key], key
    assert (tmp_path / "plain.csv").read_bytes() == (tmp_path / "profiled.csv").read_bytes()
    assert plain["profile"] is None
    profile = profiled["profile"]
    assert sum(profile["seconds"].values()) == pytest.approx(profiled["run_wall_s"])
    # start-up is the process's time outside Run(), read as run.json was written
    assert profile["startup_s"] == pytest.approx(profiled["process_wall_s"] - profiled["run_wall_s"])
    calls = profile["calls"]
    assert calls["controller (Python decisions)"] >= 3 and calls["boundary calls (Python into C++)"] > 0
    # every callback was seen entering Python from C++ but three: the two that start and stop the
    # watch, and the one before Run() (RunObserver's before-run callback, outside the watch)
    # (the script's own callback is list.append: a builtin, which enters no Python frame)
    assert profile["entries"] == {"accelerator": calls["controller (Python decisions)"] - 3, "script": 0}


def test_a_lone_flow_in_slow_start_is_not_skipped_though_its_delivery_is_steady(wormhole, tmp_path):
    """Alone on 10 Gbps links, DCTCP's first flow fills its own host queue (no marks) in slow start.

    Its delivery rate holds within 0.4% while its window doubles. A skip froze that window and
    the queue behind it: the three flows starting after it then took their shares at once instead
    of waiting behind its queue, and its 30 MB took 55.6 ms instead of 28.3 ms. Its sender's
    bytes on the network (sent more than delivered) refuse such a window.
    """
    out = tmp_path / "c.json"
    done = wormhole("compare", "--json", out, "--trace", tmp_path / "skips.csv", DUMBBELL, "--",
                    "--flows", "4", "--min-mb", "30", "--max-mb", "60")
    assert done.returncode == 0, done.stderr
    summary = load_json(out)
    assert summary["rx_bytes_exact"] and summary["skips"] >= 1
    first = min(summary["flows"], key=lambda f: f["start"])
    assert first["rel_err"] <= 0.01
    # the 40 and 50 MB flows are credited DCTCP shares they are still converging to, within the
    # 0.5% budget of their bytes by its estimate: 1.9% and 2.3% off their FCTs
    assert summary["fct_mean_rel_err"] <= 0.011 and summary["fct_max_rel_err"] <= 0.03
    # no skip before the second flow starts: the first flow's window is still growing
    assert all(float(row["time"]) >= 0.104 for row in steady_skips(tmp_path / "skips.csv"))


def test_a_joiner_rising_past_its_share_is_not_credited_it(wormhole, tmp_path):
    """Round 3 of ``transient_repeats.py`` alone: two 150 MB DCTCP flows, a 60 MB joiner 32 ms after them.

    The joiner rises from its slow start toward a third of the link for some 110 ms and goes on past
    it, to 13-25% over it, until it ends. Judged when the second half of its history came within the
    noise floor of its share (4.9% under it, its first half 44% under), it owed nothing: the three
    were credited their shares for 65 ms and the joiner ended 4.5% late (p99 4.47%). Its approach
    owes what its pace says, and once it has crossed its share it is still moving: the three run
    packet by packet, and the pair is skipped once the joiner has left.
    """
    out = tmp_path / "c.json"
    done = wormhole("compare", "--json", out, REPO_SCRIPTS / "transient_repeats.py", "--",
                    "--rounds", "1", "--join-ms", "32")
    assert done.returncode == 0, done.stderr
    summary = load_json(out)
    assert summary["rx_bytes_exact"] and summary["stdout_identical"] and summary["skips"] >= 1
    joiner = max(summary["flows"], key=lambda f: f["start"])
    assert joiner["rel_err"] <= 0.01
    assert summary["fct_mean_rel_err"] <= 0.01 and summary["fct_p99_rel_err"] <= 0.03
