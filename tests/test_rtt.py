"""Packet RTTs of a run's flows along their bytes (``--rtt``), and their NRMSE against a baseline's."""

import pytest

from wormhole_ns3.runtime.rtt import NOT_MEASURED, rtt_bins, rtt_comparison, rtt_line


def test_bins_without_samples_are_none_and_a_flow_not_followed_has_no_bins():
    assert rtt_bins([1e-5, -1.0, 2e-5]) == [1e-5, None, 2e-5]
    assert rtt_bins([]) is None


def test_the_nrmse_runs_over_bins_both_runs_have_and_says_over_how_many():
    baseline = [10.0, 10.0, 10.0, 10.0]
    accelerated = [11.0, None, 9.0, 10.0]  # a bin a skip credited has no sample
    replayed = None  # a replayed flow sent no data
    result = rtt_comparison([(baseline, accelerated), ([5.0, 5.0], replayed)])
    assert (result["rtt_flows"], result["rtt_bins"]) == (1, 3)
    assert result["rtt_nrmse"] == pytest.approx((2 / 3) ** 0.5 / 10)
    assert "over 1 flows (3 bins" in rtt_line(result)
    assert rtt_line(NOT_MEASURED) is None
    assert "no flow has RTTs" in rtt_line(rtt_comparison([(baseline, None)]))


@pytest.mark.slow
def test_packet_rtts_are_measured_alike_on_both_sides_and_a_skips_pause_is_left_out(wormhole, tmp_path):
    """Nothing skipped: the same RTTs bin for bin. Skipped: the bins a skip credits are left out, and the
    RTTs of segments a skip held in flight do not count the skip (they would be off by its length)."""
    from wormhole_ns3.tools.report import comparison, format_table

    from conftest import DUMBBELL, load_json

    # started together and long enough to be skipped once both windows have cycled twice after slow start
    args = [str(DUMBBELL), "--flows", "2", "--min-mb", "40", "--max-mb", "40", "--stagger-ms", "0"]
    # the sides of two comparisons with --rtt (compare's own --rtt is the RDMA test's): one baseline for both
    runs = {}
    for name, options in (("baseline", ["--baseline"]), ("plain", ["--no-fast-forward", "--no-memo"]),
                          ("skipped", ["--no-memo"])):
        done = wormhole("run", "--rtt", *options, "--results", f"{name}.json", *args)
        assert done.returncode == 0, done.stderr
        runs[name] = load_json(tmp_path / f"{name}.json")
    same = comparison(runs["baseline"], runs["plain"])
    assert (same["rtt_nrmse"], same["rtt_flows"]) == (0.0, 2) and same["rtt_bins"] >= 36
    fast = comparison(runs["baseline"], runs["skipped"])
    assert fast["skips"] >= 1 and fast["rtt_flows"] == 2 and fast["rtt_bins"] < same["rtt_bins"]
    assert 0 < fast["rtt_nrmse"] < 0.2
    assert "RTT                   NRMSE" in format_table(fast)


@pytest.mark.slow
def test_rdma_queue_pairs_rtts_are_measured_alike_when_nothing_is_skipped_or_replayed(wormhole, tmp_path):
    """An RDMA queue pair's packet RTTs come from its AckRtt trace; unaccelerated, they are plain ns-3's."""
    from conftest import REPO, load_json

    script = REPO / "tests" / "scripts" / "rdma_dag_ring.py"
    done = wormhole("compare", "--rtt", "--no-fast-forward", "--no-memo", "--json", "cmp.json",
                    str(script), "--hosts", "3", "--iterations", "1", "--mb", "2")
    assert done.returncode == 0, done.stderr
    summary = load_json(tmp_path / "cmp.json")
    assert summary["rtt_nrmse"] == 0.0 and summary["rtt_flows"] == 2 * (3 - 1) * 3  # every step of the ring
    assert summary["rtt_bins"] >= 0.9 * summary["rtt_flows"] * 20
