"""Queue occupancy of a run's ports (``--queues``): percentiles over time, and the comparison of two runs."""

from types import SimpleNamespace

import pytest

from wormhole_ns3.runtime.queues import port_queues, queue_comparison, queue_line, time_weighted_percentile


def test_a_time_weighted_percentile_counts_how_long_each_length_lasted():
    # 1 packet for 90 ns, 50 packets for 10 ns: the median is 1, the 99th percentile 50
    assert time_weighted_percentile([1, 50], [90, 10], 0.5) == 1
    assert time_weighted_percentile([1, 50], [90, 10], 0.99) == 50
    assert time_weighted_percentile([1, 50], [50, 50], 0.5) == 1
    assert time_weighted_percentile([1, 50], [49, 51], 0.5) == 50


def test_a_ports_idle_time_is_left_out_and_a_port_that_never_held_a_packet_too():
    records = [
        SimpleNamespace(link=7, packets=[0, 3, 40], durations=[10**9, 600, 400]),
        SimpleNamespace(link=2, packets=[0], durations=[10**9]),
    ]
    (port,) = port_queues(records)
    assert (port.link, port.p50, port.p99) == (7, 3, 40)
    assert port.occupied_s == pytest.approx(1e-6)


def test_the_comparison_counts_a_port_the_accelerated_run_left_empty_and_weights_time_by_the_baseline():
    baseline = [{"link": 1, "p50": 10, "p99": 60, "occupied_s": 0.9},
                {"link": 2, "p50": 1, "p99": 2, "occupied_s": 0.1}]
    accelerated = [{"link": 1, "p50": 12, "p99": 60, "occupied_s": 0.9}]
    queues = queue_comparison(baseline, accelerated)
    assert queues["busy_ports"] == 2
    assert (queues["p50_abs_err_max"], queues["p99_abs_err_max"]) == (2, 2)
    assert queues["p50_abs_err_mean"] == pytest.approx(1.5)
    assert queues["occupied_rel_err"] == pytest.approx(0.1)
    assert "over 2 ports that held packets" in queue_line({"queues": queues})
    assert queue_line({"queues": None}) is None


@pytest.mark.slow
def test_compare_measures_every_ports_queue_on_both_sides_alike(wormhole, tmp_path):
    """With nothing skipped or replayed the accelerated run is plain ns-3 event for event: its queues too.

    The bottleneck's DCTCP queue hovers around the RED marking threshold (65 packets).
    """
    from conftest import DUMBBELL, load_json

    done = wormhole("compare", "--queues", "--no-fast-forward", "--no-memo", "--json", "cmp.json",
                    str(DUMBBELL), "--flows", "2", "--min-mb", "5", "--max-mb", "5")
    assert done.returncode == 0, done.stderr
    queues = load_json(tmp_path / "cmp.json")["queues"]
    assert queues["busy_ports"] >= 4
    assert queues["p50_abs_err_max"] == queues["p99_abs_err_max"] == 0 and queues["occupied_rel_err"] == 0
    bottleneck = max(queues["ports"], key=lambda port: port["occupied_s_baseline"])
    assert 20 <= bottleneck["p50_baseline"] <= bottleneck["p99_baseline"] <= 200
    assert "queue lengths" in done.stdout and "over" in done.stdout
