from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wormhole_ns3.models.workloads import (
    WorkloadBuilder,
    all_to_all,
    ideal_schedule,
    ring_allgather,
    ring_allreduce,
    ring_broadcast,
    ring_reducescatter,
    send_recv,
)
from wormhole_ns3.models.workloads.collectives import flow_count

RINGS = {"allreduce": (ring_allreduce, 2), "reducescatter": (ring_reducescatter, 1), "allgather": (ring_allgather, 1)}


def run(collective, group, size, ranks=None):
    """The collective on ``group`` after one compute task per rank; returns (workload, done, prerequisites)."""
    builder = WorkloadBuilder("c", ranks or max(group) + 1)
    prereqs = {r: (builder.add_compute(r, 1.0),) for r in group}
    done = collective(builder, group, size, prereqs, group="g", phase="grad-sync")
    return builder.build(), done, prereqs


def bytes_out(workload):
    out = Counter()
    for flow in workload.flows:
        out[flow.src] += flow.bytes
    return out


def longest_flow_chain(workload):
    """The most flows on one dependency path."""
    depth = []
    for task in workload.tasks:
        below = max((depth[d] for d in task.deps), default=0)
        depth.append(below + (task.kind == "flow"))
    return max(depth)


groups = st.integers(2, 12).flatmap(lambda n: st.permutations(range(n + 3)).map(lambda p: p[:n]))


@given(group=groups, chunk=st.integers(1, 10**7), name=st.sampled_from(sorted(RINGS)))
@settings(max_examples=80, deadline=None)
def test_a_ring_sends_its_share_from_every_rank_in_a_chain_of_its_steps(group, chunk, name):
    collective, rounds = RINGS[name]
    n = len(group)
    workload, done, _ = run(collective, list(group), n * chunk)
    steps = rounds * (n - 1)
    assert len(workload.flows) == n * steps
    assert bytes_out(workload) == {r: steps * chunk for r in group}  # 2(N-1)/N * size for all-reduce
    assert longest_flow_chain(workload) == steps
    assert {f.collective for f in workload.flows} == {name}
    assert sorted({f.step for f in workload.flows}) == list(range(steps))
    successor = {r: group[(i + 1) % n] for i, r in enumerate(group)}
    assert all(f.dst == successor[f.src] for f in workload.flows)
    last = [f.id for f in workload.flows if f.step == steps - 1]
    assert all(set(done[r]) <= set(last) for r in group)


@given(group=groups, size=st.integers(12, 10**9))
@settings(max_examples=60, deadline=None)
def test_ring_allreduce_of_any_size_moves_2_n_minus_1_times_the_message(group, size):
    n = len(group)
    workload, _, _ = run(ring_allreduce, list(group), size)
    assert workload.total_bytes == 2 * (n - 1) * size
    shares = bytes_out(workload).values()
    assert max(shares) - min(shares) <= 2 * (n - 1)  # chunks differ by at most one byte


def test_each_ring_send_waits_for_the_chunk_it_received_and_its_own_previous_send():
    group = [5, 2, 7, 0]
    workload, done, prereqs = run(ring_allreduce, group, 4000)
    send = {(f.src, f.step): f for f in workload.flows}
    for position, rank in enumerate(group):
        previous, following = group[position - 1], group[(position + 1) % 4]
        assert send[(rank, 0)].deps == tuple(sorted(prereqs[rank] + prereqs[following]))
        for step in range(1, 6):
            assert send[(rank, step)].deps == tuple(sorted((send[(rank, step - 1)].id, send[(previous, step - 1)].id)))
        assert done[rank] == (send[(rank, 5)].id, send[(previous, 5)].id)


def test_ring_allreduce_takes_2_n_minus_1_chunk_times_on_an_ideal_network():
    group = list(range(8))
    workload, done, _ = run(ring_allreduce, group, 8 * 125_000_000)  # 1 Gbit chunks
    schedule = ideal_schedule(workload, bandwidth_bps=1e9)
    assert max(schedule.finish) == pytest.approx(1.0 + 14.0)  # compute, then 14 one-second steps


@given(group=groups, share=st.integers(1, 10**6))
@settings(max_examples=60, deadline=None)
def test_all_to_all_sends_one_share_to_every_other_rank_with_no_flow_waiting_on_another(group, share):
    n = len(group)
    workload, done, prereqs = run(all_to_all, list(group), n * share)
    flows = workload.flows
    assert len(flows) == n * (n - 1)
    assert Counter((f.src, f.dst) for f in flows) == {(a, b): 1 for a in group for b in group if a != b}
    assert all(f.bytes == share for f in flows)
    assert all(f.deps == tuple(sorted(prereqs[f.src] + prereqs[f.dst])) for f in flows)
    assert all(len(done[r]) == 2 * (n - 1) for r in group)


@given(group=groups, chunk=st.integers(1, 10**6))
@settings(max_examples=60, deadline=None)
def test_a_broadcast_pipelines_n_chunks_down_the_chain_from_the_first_rank(group, chunk):
    n = len(group)
    workload, done, prereqs = run(ring_broadcast, list(group), n * chunk)
    flows = workload.flows
    assert len(flows) == n * (n - 1) == flow_count("broadcast", n)
    assert Counter((f.src, f.dst) for f in flows) == {(a, b): n for a, b in zip(group, group[1:])}
    assert all(f.bytes == chunk for f in flows) and bytes_out(workload)[group[-1]] == 0
    assert longest_flow_chain(workload) == 2 * n - 2  # n chunks through n-1 hops, pipelined
    first = {f.dst: f for f in flows if f.step == group.index(f.dst) - 1}  # each rank's first receive
    assert all(set(prereqs[rank]) <= set(first[rank].deps) for rank in group[1:])
    assert set(prereqs[group[0]]) <= set(first[group[1]].deps)
    last = {f.src: f.id for f in flows if f.step == n - 1 + group.index(f.src)}
    assert done[group[0]] == (last[group[0]],) and done[group[-1]] == (last[group[-2]],)


def test_flow_count_is_what_each_decomposition_makes():
    for name, collective in {"allreduce": ring_allreduce, "allgather": ring_allgather, "alltoall": all_to_all,
                             "reducescatter": ring_reducescatter, "broadcast": ring_broadcast}.items():
        for n in (1, 2, 5):
            workload, _, _ = run(collective, list(range(n)), 1000)
            assert len(workload.flows) == flow_count(name, n), (name, n)


def test_send_recv_is_one_flow_done_at_both_ends():
    workload, done, prereqs = run(send_recv, [3, 1], 777)
    (flow,) = workload.flows
    assert (flow.src, flow.dst, flow.bytes, flow.collective) == (3, 1, 777, "sendrecv")
    assert flow.deps == tuple(sorted(prereqs[3] + prereqs[1]))
    assert done == {3: (flow.id,), 1: (flow.id,)}


@pytest.mark.parametrize("collective", [ring_allreduce, ring_reducescatter, ring_allgather, all_to_all, ring_broadcast])
def test_a_group_of_one_moves_nothing_and_is_done_when_its_prerequisites_are(collective):
    workload, done, prereqs = run(collective, [2], 10)
    assert workload.flows == [] and done == {2: prereqs[2]}


def test_a_message_smaller_than_the_group_moves_one_byte_per_chunk():
    workload, _, _ = run(ring_allgather, [0, 1, 2, 3], 3)
    assert [f.bytes for f in workload.flows] == [1] * 12
    workload, _, _ = run(all_to_all, [0, 1, 2], 2)
    assert [f.bytes for f in workload.flows] == [1] * 6


@pytest.mark.parametrize(
    "collective, group, size, problem",
    [
        (ring_allreduce, [0, 1, 0], 100, r"allreduce: a rank appears twice in the group \[0, 1, 0\]"),
        (ring_allreduce, [], 100, "allreduce: the group has no ranks"),
        (all_to_all, [0, 1], 0, "alltoall: size must be a positive number of bytes, got 0"),
        (ring_reducescatter, [0, 1], 10.5, "reducescatter: size must be a positive number of bytes, got 10.5"),
        (send_recv, [0, 1, 2], 10, r"sendrecv takes \(sender, receiver\), got 3 ranks"),
        (send_recv, [1, 1], 10, r"sendrecv: a rank appears twice"),
    ],
)
def test_bad_collective_parameters_are_clear_errors(collective, group, size, problem):
    with pytest.raises(ValueError, match=f"^{problem}"):
        collective(WorkloadBuilder("c", 4), group, size)
