"""tools/report.py: what ``compare --json`` holds, from two runs' results."""

from wormhole_ns3.tools.report import MEMO_COUNTERS, comparison, optional_parts


def _run(fct: float, **extra) -> dict:
    flow = {"id": 0, "src": "10.0.0.1", "dst": "10.0.1.1", "sport": 49153, "dport": 5000, "bytes": 1000,
            "start": 0.1, "fct": fct, "rx_bytes": 1000, "credited_bytes": 0}
    return {"script": "s.py", "argv": [], "run_wall_s": 2.0, "process_wall_s": 3.0, "events": 100,
            "system_events": 0, "skips": 0, "skip_backs": 0, "skipped_time_s": 0.0, "sim_time_s": 1.0,
            "config": {}, "flows": [flow], **extra}


def test_a_comparison_repeats_the_accelerated_runs_memo_counters():
    counters = {counter: n for n, counter in enumerate(MEMO_COUNTERS)}
    summary = comparison(_run(0.010), _run(0.011, **counters))
    assert {counter: summary[counter] for counter in MEMO_COUNTERS} == counters
    assert round(summary["fct_max_rel_err"], 9) == 0.1 and summary["rx_bytes_exact"]


def test_without_a_memo_store_the_counters_are_none():
    summary = comparison(_run(0.010), _run(0.010, **dict.fromkeys(MEMO_COUNTERS)))
    assert all(summary[counter] is None for counter in MEMO_COUNTERS)


def test_a_comparison_carries_the_transient_memos_decisions_into_a_line_of_its_own():
    counts = {"hit": 1, "miss": 896, "refused": 2, "recorded": 3, "abandoned": 860, "events_avoided": 21_576.0,
              "skipped_time_s": 0.001}
    summary = comparison(_run(0.010), _run(0.010, transient_memo=counts))
    assert summary["transient_memo"] == counts
    parts = dict(optional_parts(summary))
    assert parts["transient memo"] == ("1 restored (21,576 events avoided), 896 misses, 2 refused, 3 recorded, "
                                       "860 recordings abandoned as their flows changed before converging")
    # without the option, no line
    assert "transient memo" not in dict(optional_parts(comparison(_run(0.010), _run(0.010))))
