"""SimAI's and HPCC's inputs as their users have them, through ``experiment compare`` against plain ns-3.

The SimAI run: 2 servers x 4 GPUs (25 Gbps NICs on 4 rails, 100 Gbps to 2
spines, NVLink inside servers), a workload of one layer with TP 4 and DP 2:
its TP all-reduce is left out (--intra-server skip), its weight-gradient
all-reduce is 4 rings of 2 ranks, 16 flows of 6 MB, over RoCEv2 (DCQCN).
"""

import math

import pandas as pd
import pytest

from wormhole_ns3.models.workloads import hpcc_address

from conftest import load_json
from simai_inputs import allreduce_workload, rail_topology

pytestmark = pytest.mark.slow

DP_FLOWS = 4 * 2 * 2
FLOW_BYTES = 6_000_000


@pytest.fixture(scope="module")
def simai_compare(tmp_path_factory):
    from test_experiment_compare import experiment

    folder = tmp_path_factory.mktemp("simai")
    rail_topology(folder / "topo", nic="25Gbps", uplink="100Gbps", trailer="\nhelp text after the links\n")
    allreduce_workload(folder / "layer.txt", gpus=8, tp=4, bytes_=2 * FLOW_BYTES, tp_bytes=2_000_000)
    done = experiment(folder, "compare", "llm-training", "--simai", "layer.txt", "--topology-file", "topo",
                      "--transport", "dcqcn", "--out", "cmp")
    assert done.returncode == 0, done.stderr
    return folder, done


def test_a_simai_workload_on_a_simai_topology_runs_as_plain_ns3_does(simai_compare):
    folder, _ = simai_compare
    out = folder / "cmp"
    summary = load_json(out / "summary.json")
    assert summary["preset"] == "simai-layer-topo-dcqcn"
    assert summary["flows_compared"] == summary["flows_finished_baseline"] == DP_FLOWS
    assert summary["rx_bytes_exact"] and summary["skips"] >= 1
    assert summary["fct_max_rel_err"] < 0.01 and summary["iteration_time_rel_err"] < 0.01
    for side in ("baseline", "accelerated"):
        flows = pd.read_csv(out / side / "flows.csv")
        assert set(flows["bytes"]) == {FLOW_BYTES} and flows["bytes"].sum() == DP_FLOWS * FLOW_BYTES
        assert set(flows["group"]) == {f"dp/pp0/tp{t}" for t in range(4)}
    workload = load_json(out / "baseline" / "workload.json")
    assert workload["metadata"]["skipped_tp"] == {"collectives": 1, "bytes": 2_000_000}
    assert ("SimAI topology topo: 8 GPUs (4 per server, H100), NVLink left out (2 NVSwitches), 6 switches, "
            "16 links") in (out / "baseline" / "stdout.txt").read_text()


def test_its_baseline_is_reused_from_another_folder_holding_the_same_files(simai_compare, tmp_path):
    """The inputs reach the script as absolute paths: a kept baseline is recognised by their names and contents."""
    import shutil

    from test_experiment_compare import experiment

    folder, _ = simai_compare
    baseline = load_json(folder / "cmp" / "baseline" / "summary.json")
    assert sorted(baseline["input_sha256"]) == ["layer.txt", "topo"]
    for name in ("layer.txt", "topo"):
        shutil.copy(folder / name, tmp_path / name)
    args = ("compare", "llm-training", "--simai", "layer.txt", "--topology-file", "topo", "--transport", "dcqcn",
            "--reuse-baseline", folder / "cmp" / "baseline")
    done = experiment(tmp_path, *args, "--out", "again")
    assert done.returncode == 0, done.stderr
    assert load_json(tmp_path / "again" / "summary.json")["events_baseline"] == baseline["events"]
    (tmp_path / "topo").write_text((tmp_path / "topo").read_text() + "\n")
    refused = experiment(tmp_path, *args, "--out", "edited")
    assert refused.returncode == 2
    assert "its input files differ from this run's (input_sha256 " in refused.stderr
    assert "running accelerated" not in refused.stderr


def test_its_fct_file_names_gpus_as_hpcc_does_with_a_standalone_fct(simai_compare):
    folder, _ = simai_compare
    flows = pd.read_csv(folder / "cmp" / "baseline" / "flows.csv").sort_values(["start", "src"])
    lines = [line.split() for line in (folder / "cmp" / "baseline" / "fct.txt").read_text().splitlines()]
    assert len(lines) == DP_FLOWS and all(len(fields) == 8 for fields in lines)
    assert {fields[0] for fields in lines} == {hpcc_address(gpu) for gpu in range(8)}
    assert sorted(int(fields[6]) for fields in lines) == sorted(round(fct * 1e9) for fct in flows["fct"])
    ideal = FLOW_BYTES * 8 / 25e9
    for fields in lines:
        standalone = int(fields[7]) * 1e-9
        assert ideal < standalone < 1.01 * ideal  # the 25 Gbps NIC is the path's bottleneck
        assert math.isfinite(int(fields[6]) / int(fields[7]))


def test_hpccs_files_as_shipped_run_and_their_fct_file_keeps_the_flow_files_ports(tmp_path):
    from test_experiment_compare import experiment

    (tmp_path / "topology.txt").write_text(
        "5 2 4\n3 4\n0 3 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 4 100Gbps 0.001ms 0\n3 4 100Gbps 0.001ms 0\n"
        "\nFirst line: total node #, switch node #, link #\n")
    (tmp_path / "flow.txt").write_text(
        "2\n0 2 3 100 4000000 0.001\n1 2 3 200 4000000 0.0015\n1 0 3 100 99 2\n\nFirst line: # of flows\n")
    done = experiment(tmp_path, "compare", "llm-training", "--hpcc-flows", "flow.txt", "--topology-file",
                      "topology.txt", "--out", "cmp")
    assert done.returncode == 0, done.stderr
    summary = load_json(tmp_path / "cmp" / "summary.json")
    assert summary["flows_compared"] == 2 and summary["rx_bytes_exact"] and summary["fct_max_rel_err"] < 0.01
    flows = pd.read_csv(tmp_path / "cmp" / "baseline" / "flows.csv").sort_values("task")
    assert list(flows["start"]) == [0.001, 0.0015]
    lines = [line.split() for line in (tmp_path / "cmp" / "baseline" / "fct.txt").read_text().splitlines()]
    assert sorted((f[0], f[1], f[3], f[5]) for f in lines) == [
        (hpcc_address(0), hpcc_address(2), "100", "1000000"), (hpcc_address(1), hpcc_address(2), "200", "1500000")]


def test_a_workload_of_tp_only_is_refused_in_one_line_that_says_why(tmp_path):
    from test_experiment_compare import experiment

    rail_topology(tmp_path / "topo")
    allreduce_workload(tmp_path / "tp.txt", gpus=8, tp=4, bytes_=0, tp_bytes=1_000_000)
    done = experiment(tmp_path, "run", "llm-training", "--simai", "tp.txt", "--topology-file", "topo",
                      "--baseline", "--out", "r")
    assert done.returncode != 0
    assert ("tp has no network flows: its 1 collectives (0.001 GB) are all TP collectives, which --intra-server "
            "skip (the default, as in the Wormhole paper) leaves out; --intra-server nvlink keeps them") in done.stderr
