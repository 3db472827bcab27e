"""Presets written as Chakra traces read back as the very same task graph; the files are what Chakra tools expect."""

import json

import pytest

from wormhole_ns3.models.workloads import (
    WorkloadBuilder,
    chakra_to_workload,
    list_presets,
    preset_workload,
    read_chakra_trace,
    read_simai_workload,
    send_recv,
    simai_to_workload,
    write_chakra_trace,
)
from wormhole_ns3.models.workloads.chakra_export import workload_to_chakra
from wormhole_ns3.models.workloads.chakra_schema import framed

from chakra_protoc import schema
from conftest import REPO

#: Presets whose round trip takes minutes (266 k tasks) run in the long tier (-m long).
LARGE = {"moe-8x7b-64g"}


def round_trip(workload, folder, include_tp=False):
    per_server = workload.metadata.get("parallelism", {}).get("gpus_per_server", 8)
    paths = write_chakra_trace(workload, folder / workload.name, per_server, source="test")
    return paths, chakra_to_workload(read_chakra_trace(folder), include_tp=include_tp)


@pytest.mark.parametrize("preset", [
    pytest.param(name, marks=[pytest.mark.long] if name in LARGE else []) for name in list_presets()])
def test_every_preset_reads_back_as_the_same_flows_sizes_and_dependencies(preset, tmp_path):
    workload = preset_workload(preset)
    paths, back = round_trip(workload, tmp_path)
    assert len(paths) == workload.ranks
    assert back.tasks == workload.tasks  # every flow and compute task: ends, bytes, duration, dependencies, labels
    assert back.iteration_ends == workload.iteration_ends and back.name == preset
    assert back.metadata["parallelism"]["gpus_per_server"] == workload.metadata["parallelism"]["gpus_per_server"]
    assert back.metadata["skipped_tp"] == {"collectives": 0, "bytes": 0}


def test_a_simai_workload_with_its_tp_collectives_reads_back_the_same_too(tmp_path):
    workload = simai_to_workload(read_simai_workload(REPO / "tests" / "data" / "simai_workload_ep_test.txt"),
                                 iterations=2, include_tp=True)
    _, back = round_trip(workload, tmp_path, include_tp=True)
    assert back.tasks == workload.tasks and back.iteration_ends == workload.iteration_ends
    skipped = chakra_to_workload(read_chakra_trace(tmp_path))  # TP inside a server, left out as SimAI's reader does
    assert len(skipped.flows) == len(simai_to_workload(read_simai_workload(
        REPO / "tests" / "data" / "simai_workload_ep_test.txt"), iterations=2).flows)


def test_the_same_workload_gives_the_same_bytes():
    workload = preset_workload("moe-small")
    assert workload_to_chakra(workload, 2, "x") == workload_to_chakra(preset_workload("moe-small"), 2, "x")


def test_gpt_small_s_traces_are_its_collectives_messages_and_iteration_ends(tmp_path):
    """What ASTRA-sim reads: typed attributes, integer process-group names declared in PyTorch's metadata node."""
    workload = preset_workload("gpt-small")
    paths, _ = round_trip(workload, tmp_path)
    nodes = [schema().Node.FromString(body) for _, body in list(framed(paths[0].read_bytes()))[1:]]
    kinds = {name: number for name, number in schema().node_type.items()}
    declaration, *rest = nodes
    assert (declaration.id, declaration.type, declaration.name) == (0, kinds["METADATA_NODE"], "process_group:init")
    text = declaration.inputs.values
    groups = {group["pg_name"]: group for group in json.loads(text[2:-2])}  # as ASTRA-sim reads it
    assert groups["0"]["ranks"] == list(range(16)) and all(name.isdigit() for name in groups)
    collectives = [n for n in rest if n.type == kinds["COMM_COLL_NODE"]]
    attrs = [{a.name: getattr(a, a.WhichOneof("value")) for a in n.attr} for n in collectives]
    allreduces = [a for a in attrs if a["comm_type"] == schema().comm_type["ALL_REDUCE"]]
    dense_bytes = workload.metadata["sizes"]["dense_grad_bytes"][0]  # rank 0 is on stage 0
    assert [a["comm_size"] for a in allreduces] == [dense_bytes] * workload.iterations
    assert groups[allreduces[0]["pg_name"]] == {"pg_name": allreduces[0]["pg_name"], "ranks": [0, 2, 4, 6],
                                                "pg_desc": "dp/pp0/tp0"}
    assert sum(a["comm_type"] == schema().comm_type["BARRIER"] for a in attrs) == workload.iterations
    sends = [n for n in rest if n.type == kinds["COMM_SEND_NODE"]]
    assert len(sends) == sum(f.src == 0 and f.collective == "sendrecv" for f in workload.flows)
    computes = [n for n in rest if n.type == kinds["COMP_NODE"]]
    assert [n.duration_micros for n in computes] == [round(t.duration * 1e6) for t in workload.tasks
                                                     if t.kind == "compute" and t.src == 0
                                                     and t.phase != "iteration-end"]


def test_a_workload_whose_dependencies_cross_ranks_outside_communication_is_refused():
    builder = WorkloadBuilder("crossed", 2)
    first = builder.add_compute(0, 1.0)
    send_recv(builder, (0, 1), 100, {0: (first,)})
    builder.add_compute(1, 1.0, (first,))  # rank 1 waits for rank 0's compute, not for the message
    builder.end_iteration([2])
    with pytest.raises(ValueError) as error:
        workload_to_chakra(builder.build(), 8)
    assert str(error.value) == ("crossed: task 2 (compute on rank 1) cannot be said rank by rank in a Chakra trace: "
                                "it would come back with deps () instead of (0,)")
