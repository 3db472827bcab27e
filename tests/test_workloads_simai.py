from collections import Counter
from pathlib import Path

import pytest

from wormhole_ns3.models.workloads import (
    Parallelism,
    Workload,
    ideal_schedule,
    read_simai_workload,
    simai_to_workload,
)

DATA = Path(__file__).parent / "data"
MICRO = DATA / "simai_microAllReduce.txt"
EP_TEST = DATA / "simai_workload_ep_test.txt"
GPT7B = DATA / "simai_workload_gpt7b_64g.txt"
LINE_RATE = 100e9


def compute_seconds(simai):
    return sum(p.compute_time for layer in simai.layers
               for p in (layer.forward, layer.input_gradient, layer.weight_gradient)) * 1e-9


def update_seconds(simai):
    return sum(layer.update_time for layer in simai.layers) * 1e-9


def test_micro_allreduce_is_compute_only_when_tp_stays_inside_the_server():
    simai = read_simai_workload(MICRO)
    assert (simai.tensor_parallel, simai.gpus) == (8, 8)
    workload = simai_to_workload(simai, iterations=2)
    assert workload.ranks == 8 and workload.flows == [] and workload.iterations == 2
    assert workload.metadata["skipped_tp"] == {"collectives": 4, "bytes": 2 * (16 + 64) * 2**20}
    expected = compute_seconds(simai) + update_seconds(simai)
    assert expected == pytest.approx(1.112006e-3)
    assert ideal_schedule(workload, LINE_RATE).iteration_times == pytest.approx([expected, expected])


def test_micro_allreduce_with_tp_simulated_is_two_blocking_ring_allreduces():
    simai = read_simai_workload(MICRO)
    workload = simai_to_workload(simai, include_tp=True)
    flows = workload.flows
    assert len(flows) == 2 * 8 * 14
    assert Counter(f.bytes for f in flows) == {2 * 2**20: 112, 8 * 2**20: 112}
    assert {f.group for f in flows} == {"tp/pp0/dp0"} and {f.phase for f in flows} == {"forward"}
    ring_time = 14 * (2 + 8) * 2**20 * 8 / LINE_RATE  # 14 steps of size/8, one collective after the other
    expected = compute_seconds(simai) + ring_time + update_seconds(simai)
    assert ideal_schedule(workload, LINE_RATE).iteration_times == pytest.approx([expected])


def test_moe_example_runs_expert_alltoall_in_ep_groups_and_gradients_over_dp():
    simai = read_simai_workload(EP_TEST)
    workload = simai_to_workload(simai)
    par = Parallelism(tp=4, dp=8, pp=1, ep=4)
    assert workload.ranks == 32
    by_group = Counter((f.collective, f.group.split("/")[0]) for f in workload.flows)
    assert by_group == {
        ("alltoall", "ep"): 16 * 8 * 12,  # 8 layers x (forward + input gradient), 8 EP groups of 4
        ("allgather", "dp"): 4 * 8 * 7,
        ("reducescatter", "dp"): 4 * 8 * 7,
        ("allgather", "edp"): 16 * 2,  # 16 groups of the 2 DP ranks holding the same experts
        ("reducescatter", "edp"): 16 * 2,
    }
    ep_groups = {name: set(ranks) for name, ranks in par.ep_groups(0)}
    for flow in workload.flows:
        if flow.collective == "alltoall":
            assert {flow.src, flow.dst} <= ep_groups[flow.group] and flow.bytes == 25165824 // 4
    assert workload.metadata["skipped_tp"]["collectives"] == sum(
        1 for layer in simai.layers for p in (layer.forward, layer.input_gradient)
        if p.communicates and p.group_suffix == ""
    )


def test_a_blocking_alltoall_holds_the_next_compute_and_a_weight_gradient_sync_does_not():
    workload = simai_to_workload(read_simai_workload(EP_TEST))
    tasks = workload.tasks
    first_alltoall = next(f for f in workload.flows if f.collective == "alltoall")
    after = next(t for t in tasks[first_alltoall.id:] if t.kind == "compute" and t.src == first_alltoall.src)
    assert any(tasks[d].collective == "alltoall" for d in after.deps)
    syncs = {f.id for f in workload.flows if f.phase == "grad-sync"}
    later_compute = [t for t in tasks if t.kind == "compute" and t.phase == "backward" and t.id > min(syncs)]
    assert later_compute and not any(set(t.deps) & syncs for t in later_compute)
    optimizer = [t for t in tasks if t.phase == "optimizer"]
    assert len(optimizer) == 32 and all(set(t.deps) & syncs for t in optimizer)


def test_gpt7b_example_reduce_scatters_its_gradients_on_each_rail():
    simai = read_simai_workload(GPT7B)
    workload = simai_to_workload(simai)
    assert workload.ranks == 64 and len(simai.layers) == 1058
    flows = workload.flows
    assert len(flows) == 8 * 8 * 7 and {f.collective for f in flows} == {"reducescatter"}
    assert workload.total_bytes == 8 * 7 * 3058696192
    assert all(f.src % 8 == f.dst % 8 for f in flows)
    step = 3058696192 / 8 * 8 / LINE_RATE
    expected = compute_seconds(simai) + 7 * step + update_seconds(simai)
    assert ideal_schedule(workload, LINE_RATE).iteration_times == pytest.approx([expected])


def test_conversion_is_deterministic_and_round_trips_through_json():
    simai = read_simai_workload(EP_TEST)
    first, second = simai_to_workload(simai, iterations=2), simai_to_workload(simai, iterations=2)
    assert first.to_json() == second.to_json()
    assert Workload.from_json(first.to_json()) == first


def test_a_header_key_may_lack_its_colon(tmp_path):
    path = tmp_path / "w.txt"
    path.write_text(MICRO.read_text().replace("checkpoint_initiates: 0", "checkpoint_initiates: 0 pp_comm 5"))
    assert read_simai_workload(path).parallelism["pp_comm"] == 5


@pytest.mark.parametrize(
    "edit, problem",
    [
        (lambda t: t.replace("HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_DLRM"),
         "SimAI policy 'HYBRID_DLRM' is not supported "
         "\\(supported: HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_TRANSFORMER\\)"),
        (lambda t: t.replace("checkpoints: 0", "checkpoints: 1"),
         "SimAI workloads with activation checkpoints \\(recomputation\\) are not supported"),
        (lambda t: t.replace("all_gpus: 8", "all_gpus: 12"),
         "SimAI workload: all_gpus=12 is not a multiple of TP\\*PP=8\\*1"),
        (lambda t: t.replace("ALLREDUCE   16777216", "BROADCAST 16777216"),
         "layer 0 \\(embedding_layer\\): collective BROADCAST is not supported"),
    ],
)
def test_an_unsupported_simai_workload_is_a_clear_error(tmp_path, edit, problem):
    path = tmp_path / "w.txt"
    path.write_text(edit(MICRO.read_text()))
    with pytest.raises(ValueError, match=f"^{problem}$"):
        simai_to_workload(read_simai_workload(path))


def test_a_workload_without_network_flows_says_why_and_which_option_keeps_them():
    from wormhole_ns3.models.workloads import no_flows_reason

    workload = simai_to_workload(read_simai_workload(MICRO), name="microAllReduce")
    assert no_flows_reason(workload) == (
        "microAllReduce has no network flows: its 2 collectives (0.084 GB) are all TP collectives, which "
        "--intra-server skip (the default, as in the Wormhole paper) leaves out; --intra-server nvlink keeps them")
    kept = simai_to_workload(read_simai_workload(MICRO), include_tp=True)
    assert len(kept.flows) == 2 * 2 * 8 * 7 and kept.metadata["skipped_tp"] == {"collectives": 0, "bytes": 0}


def test_ranks_that_do_not_fit_the_hosts_are_an_error_and_idle_hosts_a_warning():
    from wormhole_ns3.models.workloads import rank_fit

    assert rank_fit(16, 8, "the topology t") == ("the workload has 16 ranks, the topology t has only 8 hosts", None)
    assert rank_fit(4, 8, "the topology t") == (
        None, "the workload has 4 ranks, the topology t has 8 hosts: hosts 4..7 (by rank) stay idle")
    assert rank_fit(8, 8, "the topology t") == (None, None)


@pytest.mark.parametrize("path, include_tp", [(GPT7B, False), (EP_TEST, False), (EP_TEST, True), (MICRO, True)])
def test_the_size_counted_from_the_file_is_what_the_build_makes(path, include_tp):
    from wormhole_ns3.models.workloads.simai import graph_size

    simai = read_simai_workload(path)
    built = simai_to_workload(simai, iterations=2, include_tp=include_tp)
    header = simai.parallelism
    tp, pp = header.get("model_parallel_NPU_group", 1), header.get("pp", 1)
    par = Parallelism(tp=tp, dp=simai.gpus // (tp * pp), pp=pp, ep=header.get("ep", 1), gpus_per_server=8)
    flows, computes = graph_size(simai, par, include_tp, iterations=2)
    assert flows == len(built.flows)
    assert len(built.tasks) - len(built.flows) <= computes <= 1.5 * (len(built.tasks) - len(built.flows))


def test_a_workload_too_large_for_this_machine_is_refused_before_it_is_built(tmp_path):
    """SimAI's 9,216-GPU example was built for 8 minutes and then killed for memory."""
    path = tmp_path / "w.txt"
    path.write_text(GPT7B.read_text().replace("all_gpus: 64", "all_gpus: 1048576"))
    with pytest.raises(ValueError, match=(
            rf"^{path}:1: 1,048,576 GPUs and 1,058 layers make [\d,.]+ M flows and [\d,.]+ M compute tasks in 1 "
            r"iteration, about [\d,]+ GiB as a task graph \(240 B a task at least\); this machine has \d+ GiB$")):
        simai_to_workload(read_simai_workload(path))
