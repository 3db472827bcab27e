"""Chakra traces as other tools write them (protoc's classes of chakra.proto): read, checked, made a task graph.

The trace is ``chakra_protoc.ranks`` (4 ranks, 2 GPUs per server: compute,
DP all-reduces, sends across servers, an all-to-all, the iteration's end),
or that trace with a node replaced.
"""

import gzip

import pytest

from wormhole_ns3.models.workloads import ChakraTraceError, chakra_to_workload, read_chakra_trace

from chakra_protoc import MB, attr, coll, comp, node, process_groups, ranks, recv, send, write_trace

ALLREDUCE_FLOWS, SEND_FLOWS, ALLTOALL_FLOWS = 2 * (2 * 2 * 1), 2, 4 * 3


def read(prefix, **options):
    return chakra_to_workload(read_chakra_trace(prefix), **options)


def test_a_trace_becomes_the_flows_and_delays_of_its_nodes(tmp_path):
    workload = read(write_trace(tmp_path / "w", ranks(), gpus_per_server=2))
    flows = workload.flows
    assert workload.name == "w" and workload.ranks == 4 and workload.iterations == 1
    assert len(flows) == ALLREDUCE_FLOWS + SEND_FLOWS + ALLTOALL_FLOWS
    assert sorted(f.bytes for f in flows if f.collective == "allreduce") == [2 * MB] * ALLREDUCE_FLOWS
    assert {(f.src, f.dst, f.group) for f in flows if f.collective == "allreduce"} == {
        (0, 2, "1"), (2, 0, "1"), (1, 3, "2"), (3, 1, "2")}
    sends = [f for f in flows if f.collective == "sendrecv"]
    assert [(f.src, f.dst, f.bytes) for f in sends] == [(0, 2, MB), (1, 3, MB)]
    assert sorted(f.bytes for f in flows if f.collective == "alltoall") == [MB // 2] * ALLTOALL_FLOWS
    computes = [t for t in workload.tasks if t.kind == "compute" and t.phase != "iteration-end"]
    assert [(t.src, t.duration) for t in computes] == [(r, 100e-6) for r in range(4)]
    assert workload.metadata["parallelism"] == {"gpus_per_server": 2}
    assert workload.metadata["skipped_tp"] == {"collectives": 0, "bytes": 0}


def test_dependencies_are_per_rank_and_a_message_waits_for_both_ends(tmp_path):
    workload = read(write_trace(tmp_path / "w", ranks(), gpus_per_server=2))
    tasks = workload.tasks
    ring = {(f.src, f.step): f.id for f in workload.flows if f.group == "1"}
    compute = {t.src: t.id for t in tasks if t.kind == "compute" and t.phase != "iteration-end"}
    assert tasks[ring[(0, 0)]].deps == (compute[0], compute[2])  # rendezvous: both ends' computes
    first_send = next(f for f in workload.flows if f.collective == "sendrecv")
    assert first_send.deps == (ring[(0, 1)], ring[(2, 1)])  # rank 0's all-reduce done: its last send and receive
    (end,) = workload.iteration_ends
    assert tasks[end].src == 0 and len(tasks[end].deps) == ALLTOALL_FLOWS  # the barrier: every all-to-all flow


def test_communication_inside_a_server_is_left_out_as_simai_s_tp_unless_nvlink_keeps_it(tmp_path):
    prefix = write_trace(tmp_path / "w", ranks())  # the trace says no GPUs per server: 8, all four in one
    skipped = read(prefix)
    assert skipped.flows == [] and skipped.metadata["parallelism"] == {"gpus_per_server": 8}
    assert skipped.metadata["skipped_tp"] == {"collectives": 5, "bytes": 2 * 4 * MB + 2 * MB + 2 * MB}
    assert len(read(prefix, include_tp=True).flows) == ALLREDUCE_FLOWS + SEND_FLOWS + ALLTOALL_FLOWS
    assert len(read(prefix, gpus_per_server=1).flows) == ALLREDUCE_FLOWS + SEND_FLOWS + ALLTOALL_FLOWS


def test_a_folder_of_one_trace_gzip_files_and_pytorch_s_host_side_nodes_read_too(tmp_path):
    traces = ranks()
    for rank in range(4):  # PyTorch's launch of the all-reduce on the host: CPU time, no communication
        launch = node(6, "COMM_COLL_NODE", deps=[1], micros=7, attrs=[attr("is_cpu_op", bool_val=True)])
        traces[rank].insert(2, launch)
    prefix = write_trace(tmp_path / "w", traces, gpus_per_server=2)
    for rank in range(4):
        path = tmp_path / f"w.{rank}.et"
        path.write_bytes(gzip.compress(path.read_bytes(), mtime=0))
    workload = read(tmp_path)
    assert workload.name == "w" and len(workload.flows) == ALLREDUCE_FLOWS + SEND_FLOWS + ALLTOALL_FLOWS
    assert sorted(t.duration for t in workload.tasks if t.kind == "compute")[-8:] == [7e-6] * 4 + [100e-6] * 4
    assert read(prefix).tasks == workload.tasks


def test_a_broadcast_starts_at_its_root_and_a_partial_barrier_is_a_task_its_group_waits_for(tmp_path):
    traces = [[comp(1, 10), coll(2, "BROADCAST", 3 * MB, "", deps=[1], root=2), coll(3, "BARRIER", 0, "5", [2])]
              for _ in range(3)]
    traces[0][2] = comp(3, 10, deps=[2])
    traces[0].insert(0, process_groups(0, {"5": [1, 2]}))
    workload = read(write_trace(tmp_path / "b", traces, gpus_per_server=1))
    assert [(f.src, f.dst) for f in workload.flows if f.step == 0] == [(2, 0)]
    assert {(f.src, f.dst) for f in workload.flows if f.step == 1} == {(2, 0), (0, 1)}  # pipelined: 2 -> 0 -> 1
    barrier = next(t for t in workload.tasks if t.collective == "barrier")
    assert (barrier.src, barrier.group, barrier.duration) == (1, "5", 0.0)
    assert workload.iterations == 1 and barrier.id in workload.tasks[workload.iteration_ends[0]].deps


def replaced(rank: int, position: int, new):
    traces = ranks()
    traces[rank][position] = new
    return traces


@pytest.mark.parametrize("traces, rank, problem", [
    (replaced(1, 1, comp(1, 100, deps=[2])), 1,
     "rank 1, node 1: dependency cycle: rank 1 node 1 -> rank 1 node 2 & rank 3 node 2 -> rank 1 node 1 (each "
     "waits for the next: nodes that depend on each other, or ranks issuing their collectives or sends in "
     "different orders)"),
    (replaced(2, 1, comp(1, 100, deps=[4])), 2,
     "rank 2, node 1: dependency cycle: rank 2 node 1 -> rank 0 node 4 & rank 1 node 4 (+2 ranks) -> rank 0 node 3 "
     "& rank 2 node 3 -> rank 0 node 2 & rank 2 node 2 -> rank 2 node 1 (each waits for the next: nodes that depend "
     "on each other, or ranks issuing their collectives or sends in different orders)"),
    (replaced(3, 3, comp(3, 1)), 1,
     "rank 1, node 3: sends 1,000,000 bytes to rank 3 (tag 0), which has no receive to match it (0 receives from "
     "rank 1 with tag 0 for 1 sends)"),
    (replaced(3, 3, recv(3, 1, 3, MB, tag=9)), 1,
     "rank 1, node 3: sends 1,000,000 bytes to rank 3 (tag 0), which has no receive to match it (0 receives from "
     "rank 1 with tag 0 for 1 sends)"),
    (replaced(2, 3, recv(3, 0, 2, 2 * MB)), 0,
     "rank 0, node 3: sends 1,000,000 bytes to rank 2 (tag 0), whose matching receive (node 3) is of 2,000,000 "
     "bytes"),
    (replaced(2, 0, process_groups(0, {"1": [0, 2, 3], "2": [1, 3]})), 2,
     "rank 2, node 0: declares process group '1' as ranks [0, 2, 3], rank 0 (node 0) as ranks [0, 2]"),
    (replaced(3, 2, comp(2, 1, deps=[1])), 1,
     "rank 1, node 2: collective 1 of process group '2' of ranks [1, 3] on this rank, but rank 3 has only 0 there: "
     "ranks disagree about the group's collectives"),
    (replaced(2, 2, coll(2, "ALL_REDUCE", 3 * MB, "1", deps=[1])), 2,
     "rank 2, node 2: ALL_REDUCE of 3,000,000 bytes on process group '1' of ranks [0, 2], where rank 0 (node 2) has "
     "ALL_REDUCE of 4,000,000 bytes: ranks disagree about the group's collectives"),
    (replaced(1, 2, coll(2, "ALL_REDUCE", 4 * MB, "1", deps=[1])), 1,
     "rank 1, node 2: a collective of process group '1' of ranks [0, 2], which does not include rank 1"),
    (replaced(0, 1, comp(1, 5_000_000_000)), 0,
     "rank 0, node 1: duration_micros 5,000,000,000 is 1.4 hours: Chakra durations are microseconds (is it in "
     "nanoseconds?)"),
    (replaced(0, 2, coll(2, "ALL_REDUCE", -1, "1", deps=[1])), 0,
     "rank 0, node 2: comm_size -1 is out of range: it is bytes, 0 to 1,099,511,627,776 (1 TiB)"),
    (replaced(0, 2, coll(2, "ALL_REDUCE", 2**43, "1", deps=[1])), 0,
     "rank 0, node 2: comm_size 8,796,093,022,208 is out of range: it is bytes, 0 to 1,099,511,627,776 (1 TiB)"),
    (replaced(0, 2, node(2, "COMM_COLL_NODE", [1], attrs=[attr("comm_type", int64_val=0),
                                                          attr("comm_size", double_val=4e6)])), 0,
     "rank 0, node 2: comm_size must be an integer attribute, it is double_val"),
    (replaced(0, 2, coll(2, "REDUCE", 4 * MB, "1", deps=[1])), 0,
     "rank 0, node 2: collective REDUCE is not supported (supported: ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, "
     "REDUCE_SCATTER_BLOCK, ALL_TO_ALL, BROADCAST, BARRIER)"),
    (replaced(0, 3, send(3, 0, 4, MB, deps=[2])), 0,
     "rank 0, node 3: comm_dst 4 names a rank with no trace (the traces are of ranks 0..3)"),
    (replaced(0, 3, send(3, 0, 0, MB, deps=[2])), 0, "rank 0, node 3: sends to its own rank"),
    (replaced(0, 4, coll(4, "ALL_TO_ALL", 2 * MB, "7", deps=[9])), 0,
     "rank 0, node 4: depends on node 9, which this rank's trace does not have"),
    (replaced(0, 4, coll(3, "ALL_TO_ALL", 2 * MB, "7", deps=[2])), 0,
     "rank 0, node 3: a second node with this id (ids must be unique in a rank's trace)"),
    (replaced(0, 1, comp(1, 100, deps=[1])), 0, "rank 0, node 1: dependency cycle: the node depends on itself"),
    (replaced(0, 0, process_groups(0, {"1": [0, 9]})), 0,
     "rank 0, node 0: process group '1' has rank 9, which has no trace (the traces are of ranks 0..3)"),
])
def test_a_trace_that_cannot_run_is_one_line_naming_rank_node_and_problem(tmp_path, traces, rank, problem):
    prefix = write_trace(tmp_path / "w", traces, gpus_per_server=2)
    with pytest.raises(ChakraTraceError) as error:
        read(prefix)
    assert str(error.value) == f"{tmp_path}/w.{rank}.et: {problem}"


@pytest.mark.parametrize("content, problem", [
    (b"", "not a Chakra trace: the file is empty"),
    (b"hello, world\n", "not a Chakra trace (length-prefixed protobuf messages): at byte 0: a message of 104 bytes, "
                        "but 12 bytes are left"),
    (b"\x03\x0a\x01\x80", "not a Chakra trace: its first message is not a GlobalMetadata"),
    (b"\x02\x28\x01", "not a Chakra trace: its first message is not a GlobalMetadata"),
    (b"\x00\x03\x0a\x01\x80", "message 1 (byte 1) is not a Chakra Node"),
    (b"\x00\x02\x18\x2a", "node type 42 is not one of Chakra's (INVALID_NODE, METADATA_NODE, MEM_LOAD_NODE, "
                          "MEM_STORE_NODE, COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE, COMM_COLL_NODE, STORAGE_NODE, "
                          "BATCH_NODE, CHECKPOINT_NODE)"),
    (b"\x1f\x8b\x08\x00garbage", "not a Chakra trace: a broken gzip file"),
])
def test_a_file_that_is_not_a_chakra_trace_says_so(tmp_path, content, problem):
    write_trace(tmp_path / "w", ranks(), gpus_per_server=2)
    (tmp_path / "w.1.et").write_bytes(content)
    with pytest.raises(ChakraTraceError) as error:
        read(tmp_path / "w")
    assert str(error.value).startswith(f"{tmp_path}/w.1.et: rank 1")
    assert problem in str(error.value) and "\n" not in str(error.value)


def test_missing_ranks_and_ambiguous_folders_are_one_line(tmp_path):
    write_trace(tmp_path / "w", ranks(), gpus_per_server=2)
    (tmp_path / "w.1.et").unlink()
    with pytest.raises(ChakraTraceError, match=r"/w\.1\.et: missing rank 1: there are traces of 3 ranks up to rank 3, "
                                               r"and ranks are numbered from 0$"):
        read(tmp_path / "w")
    write_trace(tmp_path / "v", ranks()[:2])
    with pytest.raises(ChakraTraceError, match=rf"^{tmp_path}: traces of 2 prefixes \('v', 'w'\): give one as "
                                               rf"{tmp_path}/PREFIX$"):
        read(tmp_path)
    with pytest.raises(ChakraTraceError, match=r"/u: no such folder, and no Chakra traces u\.<rank>\.et beside it$"):
        read(tmp_path / "u")
