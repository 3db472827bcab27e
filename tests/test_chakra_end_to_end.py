"""Chakra traces through ``experiment compare`` and ``run`` against plain ns-3, on a SimAI topology and as presets.

The independent trace (written with protoc's classes of chakra.proto, not
by the product): 2 servers x 4 GPUs (25 Gbps NICs on 4 rails, NVLink inside
servers). Each GPU computes 10 us, all-reduces 1 MB with the other GPUs of
its server (a TP group: left out, --intra-server skip) and then 12 MB with
the same GPU of the other server (a DP group of 2: 2 flows of 6 MB each way),
GPUs of server 0 send 3 MB to those of server 1, and a barrier of all eight
ends the iteration: 16 DP flows and 4 sends, over RoCEv2 (DCQCN).
"""

import pandas as pd
import pytest

from wormhole_ns3.tools.experiment.results import read_flows, read_iterations

from chakra_protoc import MB, coll, comp, process_groups, recv, send, write_trace
from conftest import load_json
from simai_inputs import rail_topology

pytestmark = pytest.mark.slow

DP_FLOWS, SENDS = 4 * 2 * 2, 4


def server_trace():
    groups = {"1": [0, 1, 2, 3], "2": [4, 5, 6, 7], **{str(3 + gpu): [gpu, gpu + 4] for gpu in range(4)}}
    traces = []
    for rank in range(8):
        server, gpu = divmod(rank, 4)
        message = send(5, rank, rank + 4, 3 * MB, deps=[3]) if server == 0 else recv(5, rank - 4, rank, 3 * MB)
        traces.append([process_groups(0, groups), comp(1, 10), coll(2, "ALL_REDUCE", MB, str(1 + server), [1]),
                       coll(3, "ALL_REDUCE", 12 * MB, str(3 + gpu), [2]), message,
                       coll(6, "BARRIER", 0, "0", [3, 5])])
    return traces


def test_an_independently_written_trace_on_a_simai_topology_runs_as_plain_ns3_does(tmp_path):
    from test_experiment_compare import experiment

    rail_topology(tmp_path / "topo", nic="25Gbps", uplink="100Gbps")
    (tmp_path / "traces").mkdir()
    write_trace(tmp_path / "traces" / "layer", server_trace())
    done = experiment(tmp_path, "compare", "llm-training", "--chakra", "traces", "--topology-file", "topo",
                      "--transport", "dcqcn", "--out", "cmp")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "cmp"
    summary = load_json(out / "summary.json")
    assert summary["preset"] == "chakra-traces-topo-dcqcn"
    assert summary["flows_compared"] == summary["flows_finished_baseline"] == DP_FLOWS + SENDS
    assert summary["rx_bytes_exact"] and summary["skips"] >= 1
    assert summary["fct_max_rel_err"] < 0.01 and summary["iteration_time_rel_err"] < 0.01
    flows = read_flows(out / "baseline" / "flows.csv")
    assert sorted(flows["bytes"]) == [3 * MB] * SENDS + [6 * MB] * DP_FLOWS
    assert set(flows["group"]) == {"3", "4", "5", "6", ""}  # the DP groups; the sends name none
    workload = load_json(out / "baseline" / "workload.json")
    assert workload["metadata"]["skipped_tp"] == {"collectives": 2, "bytes": 2 * MB}
    assert workload["metadata"]["parallelism"] == {"gpus_per_server": 4}  # the topology file's


def test_an_exported_preset_runs_flow_for_flow_as_the_preset_does(tmp_path):
    from test_experiment_compare import experiment

    exported = experiment(tmp_path, "export-chakra", "--preset", "gpt-small", "--out", "traces")
    assert exported.returncode == 0, exported.stderr
    runs = {}
    for name, source in (("preset", ["--preset", "gpt-small"]), ("chakra", ["--chakra", "traces/gpt-small"])):
        done = experiment(tmp_path, "run", "llm-training", *source, "--baseline", "--out", name)
        assert done.returncode == 0, done.stderr
        runs[name] = read_flows(tmp_path / name / "flows.csv").sort_values("task").reset_index(drop=True)
    assert len(runs["preset"]) == 320
    pd.testing.assert_frame_equal(runs["preset"], runs["chakra"])  # same tasks, same start and finish times
    iterations = [read_iterations(tmp_path / name / "iterations.csv") for name in runs]
    pd.testing.assert_frame_equal(*iterations)


def test_a_trace_that_cannot_run_stops_the_script_with_its_one_line(plain_python, tmp_path):
    from conftest import REPO

    traces = server_trace()
    traces[6][4] = comp(5, 1, deps=[3])  # rank 6 receives nothing: rank 2's send has no match
    write_trace(tmp_path / "broken", traces)
    done = plain_python(REPO / "experiments" / "llm_training.py", "--chakra", tmp_path / "broken")
    assert done.returncode == 1
    assert done.stderr_lines[-1] == (f"llm_training.py: error: {tmp_path}/broken.2.et: rank 2, node 5: sends "
                                     "3,000,000 bytes to rank 6 (tag 0), which has no receive to match it (0 receives "
                                     "from rank 2 with tag 0 for 1 sends)")
