"""DCQCN sanity on real incast runs: fair shares at line rate, queue near Kmin, CNP
rate limiting at the notification point, and PFC keeping a small buffer lossless."""

import json

import pytest

from conftest import REPO

INCAST = REPO / "experiments" / "rdma" / "incast.py"
KMIN_KB_AT_100G = 400  # RdmaSwitchHelper's default: 4 KB per Gb/s


def incast(plain_python, *args):
    done = plain_python(INCAST, *args)
    assert done.returncode == 0, done.stderr_lines[-5:]
    return json.loads(done.stdout)


@pytest.mark.slow
def test_two_to_one_incast_converges_to_fair_line_rate_shares(plain_python):
    out = incast(plain_python, "--senders", "2", "--duration-ms", "4", "--warmup-ms", "1")
    summary = out["summary"]
    assert summary["jain"] > 0.99
    assert summary["utilization"] > 0.95  # wire bytes / 100 Gb/s over the last 3 ms
    assert 10 < summary["queue_mean_kb"] < 2 * KMIN_KB_AT_100G
    assert summary["drops"] == 0
    assert all(flow["cnps"] > 0 for flow in out["flows"])  # DCQCN did the work
    assert all(40 < g < 50 for g in summary["goodput_gbps"])


@pytest.mark.slow
def test_cnps_are_limited_to_one_per_interval_per_queue_pair(plain_python):
    args = ("--senders", "2", "--duration-ms", "2", "--warmup-ms", "1")
    limited = incast(plain_python, *args)
    unlimited = incast(plain_python, *args, "--nic-attr", "CnpInterval=0s")
    for flow in limited["flows"]:
        assert flow["marked"] > 2 * flow["cnps"]
        assert flow["cnps"] <= 2000 // 50 + 1  # at most one per 50 us over 2 ms
    for flow in unlimited["flows"]:
        assert flow["cnps"] == flow["marked"]  # every CE mark answered
    assert sum(f["cnps"] for f in unlimited["flows"]) > 2 * sum(
        f["cnps"] for f in limited["flows"])


@pytest.mark.slow
def test_pfc_makes_a_small_buffer_incast_lossless(plain_python):
    args = ("--senders", "8", "--flow-mb", "1", "--duration-ms", "20", "--warmup-ms", "1",
            "--buffer-kb", "400", "--xoff-kb", "15", "--xon-kb", "5", "--headroom-kb", "30")
    lossy = incast(plain_python, *args)
    lossless = incast(plain_python, *args, "--pfc")
    assert lossy["summary"]["drops"] > 1000
    assert lossless["summary"]["drops"] == 0
    assert lossless["summary"]["headroom_drops"] == 0
    assert lossless["summary"]["pauses"] > 10
    for flow in lossless["flows"]:
        assert flow["delivered"] == flow["bytes"]
        assert flow["retransmitted"] == 0
        # 8 MB through one 100 Gb/s port takes 640 us; PFC shares it evenly.
        assert 640 < flow["fct_us"] < 720
    assert lossless["summary"]["host_paused_us"] > 100  # the senders' NICs really stopped
    assert lossless["summary"]["max_ingress_kb"] <= 15 + 30  # XOFF + headroom


@pytest.mark.slow
def test_pfc_pauses_spread_from_switch_to_switch(plain_python):
    # 8 senders on 2 leaves; the root's port to the receiver is the bottleneck, so the
    # root pauses the leaves' uplinks and the leaves pause their hosts.
    args = ("--senders", "8", "--leaves", "2", "--flow-mb", "1", "--duration-ms", "20",
            "--warmup-ms", "1", "--buffer-kb", "400", "--xoff-kb", "15", "--xon-kb", "5",
            "--headroom-kb", "30")
    lossy = incast(plain_python, *args)
    lossless = incast(plain_python, *args, "--pfc")
    assert lossy["summary"]["drops"] > 1000
    summary = lossless["summary"]
    assert summary["drops"] == summary["headroom_drops"] == summary["packets_not_received"] == 0
    assert summary["switch_paused_us"] > 100 and summary["host_paused_us"] > 100
    assert all(flow["delivered"] == flow["bytes"] for flow in lossless["flows"])


def test_acks_coalesce_to_one_per_interval_and_at_message_end(plain_python):
    out = incast(plain_python, "--senders", "2", "--flow-mb", "1", "--duration-ms", "5",
                 "--warmup-ms", "1", "--ack-interval", "8")
    for flow in out["flows"]:
        # 1000 packets in order: one ACK per 8, the last one at message end.
        assert flow["acks"] == 1000 // 8
        assert flow["delivered"] == flow["bytes"]


def test_hpcc_holds_the_queue_near_zero_at_its_target_utilization(plain_python):
    out = incast(plain_python, "--cc", "hpcc", "--senders", "4", "--duration-ms", "3",
                 "--warmup-ms", "1")
    summary = out["summary"]
    assert summary["jain"] > 0.98
    assert 0.90 < summary["utilization"] < 0.97  # eta = 0.95
    assert summary["queue_mean_kb"] < 10  # DCQCN sits near Kmin = 400 KB instead
    assert summary["marks"] == 0 and summary["drops"] == 0
