"""RoCEv2 transport: exact delivery through losses, determinism, crediting, time shifts.

Every test runs experiments/rdma/incast.py (or the crediting driver built on it) as
a user runs a script, and checks what the real ns-3 run printed.
"""

import json

import pytest

from conftest import REPO

INCAST = REPO / "experiments" / "rdma" / "incast.py"
CREDIT = REPO / "tests" / "scripts" / "rdma_credit.py"
ECMP = REPO / "tests" / "scripts" / "rdma_ecmp.py"


def run_json(plain_python, script, *args):
    done = plain_python(script, *args)
    assert done.returncode == 0, done.stderr_lines[-5:]
    return json.loads(done.stdout)


def test_go_back_n_recovers_random_losses_with_exact_totals(plain_python):
    out = run_json(plain_python, INCAST, "--senders", "2", "--flow-mb", "2",
                   "--duration-ms", "20", "--warmup-ms", "1", "--loss", "0.01")
    assert out["summary"]["packets_not_received"] > 20  # packets really were lost
    for flow in out["flows"]:
        assert flow["delivered"] == flow["bytes"] == 2_000_000
        assert flow["fct_us"] is not None
        assert flow["naks"] > 0 and flow["retransmitted"] > 0


def test_retransmission_timeout_recovers_lost_tails(plain_python):
    # An 8:1 burst into a 400 KB port drops whole windows, tails included:
    # only the retransmission timer can recover those.
    out = run_json(plain_python, INCAST, "--senders", "8", "--flow-mb", "1",
                   "--duration-ms", "20", "--warmup-ms", "1", "--buffer-kb", "400")
    assert out["summary"]["drops"] > 1000
    assert sum(flow["timeouts"] for flow in out["flows"]) > 0
    assert all(flow["delivered"] == flow["bytes"] for flow in out["flows"])


def test_queue_pairs_spread_over_equal_cost_paths_by_their_source_ports(plain_python):
    out = run_json(plain_python, ECMP, "--flows", "8", "--bytes", "200000")
    assert len({flow["port"] for flow in out["flows"]}) == 8
    assert all(flow["delivered"] == 200_000 for flow in out["flows"])
    # Each flow stays on one spine (its 5-tuple is fixed), and both spines carry flows.
    per_flow = 200 * (1000 + 44)  # 200 data packets: payload + ICRC, BTH, UDP, IPv4
    assert sum(out["spine_bytes"]) == 8 * per_flow
    assert all(spine % per_flow == 0 and spine > 0 for spine in out["spine_bytes"])


@pytest.mark.slow
def test_the_same_run_twice_gives_the_same_output_byte_for_byte(plain_python):
    args = ("--senders", "3", "--flow-mb", "1", "--duration-ms", "5", "--warmup-ms", "1",
            "--loss", "0.005")
    first = plain_python(INCAST, *args)
    second = plain_python(INCAST, *args)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    assert all(f["fct_us"] for f in json.loads(first.stdout)["flows"])


@pytest.mark.slow
def test_credit_advances_both_ends_and_the_flow_still_finishes_exactly(plain_python):
    common = ("--", "--senders", "2", "--flow-mb", "4", "--duration-ms", "20",
              "--warmup-ms", "1", "--loss", "0.005")
    plain = run_json(plain_python, CREDIT, "--credit-bytes", "0", *common)
    credited = run_json(plain_python, CREDIT, "--credit-bytes", "1000000", *common)
    for before, after in zip(plain, credited):
        assert after["credited"] == after["credited_total"] == 1_000_000
        for counter in ("sent", "acked", "delivered"):
            assert after["after"][counter] == after["before"][counter] + 1_000_000
        assert after["final_delivered"] == after["final_acked"] == after["size"]
        assert after["finished"] and after["acknowledged"]
        # A million bytes fewer to send: the flow ends earlier.
        assert after["fct_us"] < before["fct_us"] - 50


def test_credit_takes_whole_packets_and_keeps_the_last_one_real(plain_python):
    out = run_json(plain_python, CREDIT, "--credit-bytes", "10000000", "--at-us", "50",
                   "--", "--senders", "1", "--flow-mb", "0.5", "--duration-ms", "5",
                   "--warmup-ms", "1")
    (flow,) = out
    # 500 packets of 1000 B: everything never sent is credited but the last packet.
    assert flow["credited"] == flow["size"] - flow["before"]["sent"] - 1000
    assert flow["final_delivered"] == flow["size"] and flow["finished"]


@pytest.mark.slow
def test_an_rdma_script_runs_unchanged_under_the_accelerator(plain_python, wormhole):
    args = ("--senders", "3", "--flow-mb", "1", "--duration-ms", "3", "--warmup-ms", "1",
            "--loss", "0.005")
    plain = plain_python(INCAST, *args)
    accelerated = wormhole("run", INCAST, *args)
    assert plain.returncode == accelerated.returncode == 0, accelerated.stderr_lines[-5:]
    assert accelerated.stdout == plain.stdout


@pytest.mark.slow
def test_shift_times_delays_the_pacing_clock_of_a_flow(plain_python):
    common = ("--credit-bytes", "0", "--", "--senders", "1", "--flow-mb", "4",
              "--duration-ms", "20", "--warmup-ms", "1")
    plain = run_json(plain_python, CREDIT, *common)
    shifted = run_json(plain_python, CREDIT, "--shift-us", "200", *common)
    # Shifting without moving the NIC's events leaves the flow silent for 200 us.
    assert shifted[0]["fct_us"] - plain[0]["fct_us"] == pytest.approx(200, abs=2)
    assert shifted[0]["final_delivered"] == shifted[0]["size"]


@pytest.mark.slow
def test_a_cpp_program_runs_rdma_flows_with_the_helpers_and_traces(wormhole):
    program = REPO / "experiments" / "cpp" / "rdma_incast.cc"
    done = wormhole("run", "--baseline", program, "--", "--flows=3", "--bytes=1000000")
    assert done.returncode == 0, done.stderr_lines[-5:]
    lines = [line.split() for line in done.stdout.splitlines()]
    completions = sorted(line for line in lines if line[0] == "flow")
    assert [line[:4] for line in completions] == [
        ["flow", str(i), "bytes", "1000000"] for i in range(3)]
    # 3 MB through one 100 Gb/s port: at least 240 us each, and DCQCN keeps it close.
    assert all(240 <= int(line[5]) < 300 for line in completions)
    # FlowStart and FlowFinish fire once per flow, at its start and at its completion.
    starts = {line[1]: int(line[3]) for line in lines if line[0] == "start"}
    finishes = {line[1]: int(line[3]) for line in lines if line[0] == "finish"}
    assert sum(line[0] == "start" for line in lines) == len(starts) == 3
    assert sum(line[0] == "finish" for line in lines) == len(finishes) == 3
    for flow, fct in ((line[1], int(line[5])) for line in completions):
        assert starts[flow] == 10 and finishes[flow] - starts[flow] in (fct, fct + 1)


def test_payloads_too_large_for_the_device_are_a_clear_error(plain_python):
    done = plain_python(INCAST, "--senders", "1", "--mtu", "1480", "--duration-ms", "1",
                        "--warmup-ms", "0.5")
    assert done.returncode != 0
    assert ("RDMA on node 0: 1480-byte payloads make 1524-byte IP packets, above the device "
            "MTU of 1500") in done.stderr
