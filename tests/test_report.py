"""tools/report.py: what ``compare --json`` holds, from two runs' results."""

from wormhole_ns3.tools.report import MEMO_COUNTERS, comparison


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
