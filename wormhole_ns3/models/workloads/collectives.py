"""NCCL-like collectives as flows: which rank sends what to whom, and which send waits for which.

Every function takes the builder, the group's ranks (in ring order), the
message size in bytes and each rank's prerequisites (task ids that must
finish before that rank enters the collective), adds the flows, and returns
for every rank the task ids that a later stage at that rank must wait for
("done"). A group of one rank moves nothing: its done is its prerequisites.

Sizes are the whole buffer, as NCCL counts them: an all-reduce of ``size``
bytes; a reduce-scatter whose input is ``size`` bytes (each rank keeps
size/N); an all-gather whose output is ``size`` bytes (each rank brings
size/N); an all-to-all where each rank's send buffer is ``size`` bytes (size/N
to every rank, its own share staying local); a broadcast of ``size`` bytes
from the group's first rank. size/N chunks differ by at most one byte when N
does not divide the size; a message of fewer than N bytes (SimAI files have
some) is sent as one byte per chunk.

Rendezvous: a rank's first send also waits for the *receiver's*
prerequisites, since NCCL cannot write into a peer that has not entered the
collective yet. Later sends are ordered by the ring itself.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from wormhole_ns3.models.workloads.dag import WorkloadBuilder

Prerequisites = Mapping[int, Iterable[int]]
Done = dict[int, tuple[int, ...]]


def ring_allreduce(
    builder: WorkloadBuilder, ranks: Sequence[int], size: int, prereqs: Prerequisites | None = None, **labels
) -> Done:
    """Ring all-reduce: 2(N-1) steps (N-1 reduce-scatter, N-1 all-gather), one size/N chunk per rank per step.

    At step s the rank at ring position i sends chunk (i - s) mod N to the
    next rank. Its send at step s > 0 waits for the chunk it received at step
    s-1 (the flow from the previous rank) and for its own send of step s-1;
    its send at step 0 waits for its own and the receiver's prerequisites.
    Done at a rank: its last send and the last chunk it received.
    """
    return _ring(builder, "allreduce", ranks, size, 2, prereqs, labels)


def ring_reducescatter(
    builder: WorkloadBuilder, ranks: Sequence[int], size: int, prereqs: Prerequisites | None = None, **labels
) -> Done:
    """Ring reduce-scatter of a ``size``-byte input: N-1 steps, dependencies as in ``ring_allreduce``."""
    return _ring(builder, "reducescatter", ranks, size, 1, prereqs, labels)


def ring_allgather(
    builder: WorkloadBuilder, ranks: Sequence[int], size: int, prereqs: Prerequisites | None = None, **labels
) -> Done:
    """Ring all-gather into a ``size``-byte output: N-1 steps, dependencies as in ``ring_allreduce``."""
    return _ring(builder, "allgather", ranks, size, 1, prereqs, labels)


def all_to_all(
    builder: WorkloadBuilder, ranks: Sequence[int], size: int, prereqs: Prerequisites | None = None, **labels
) -> Done:
    """All-to-all: every rank sends size/N to every other rank, N(N-1) flows released together (step 0).

    The flow from a to b waits for the prerequisites of a and of b only, so
    no flow waits for another. Done at a rank: every flow it sent or received.
    """
    group = _checked_group("alltoall", ranks, size)
    prereqs = prereqs or {}
    if len(group) == 1:
        return _unchanged(group, prereqs)
    shares = split_evenly(max(size, len(group)), len(group))
    touched: dict[int, list[int]] = {rank: [] for rank in group}
    for src in group:
        for index, dst in enumerate(group):
            if dst == src:
                continue
            deps = (*prereqs.get(src, ()), *prereqs.get(dst, ()))
            flow = builder.add_flow(src, dst, shares[index], deps, collective="alltoall", step=0, **labels)
            touched[src].append(flow)
            touched[dst].append(flow)
    return {rank: tuple(flows) for rank, flows in touched.items()}


def ring_broadcast(
    builder: WorkloadBuilder, ranks: Sequence[int], size: int, prereqs: Prerequisites | None = None, **labels
) -> Done:
    """Broadcast from ``ranks[0]``, pipelined down the chain ranks[0] -> ranks[1] -> ... in N size/N chunks.

    The rank at position i forwards chunk c once it has received it and has
    forwarded chunk c-1, as NCCL's ring broadcast does (the last rank sends
    nothing): N(N-1) flows, labelled with their pipeline step c + i. A rank's
    first receive also waits for its own prerequisites (rendezvous). Done at
    a rank: the last chunk it sent and the last it received.
    """
    group = _checked_group("broadcast", ranks, size)
    prereqs = prereqs or {}
    n = len(group)
    if n == 1:
        return _unchanged(group, prereqs)
    last: dict[int, int] = {}  # hop i (group[i] -> group[i + 1]) -> its flow of the latest chunk
    for index, chunk in enumerate(split_evenly(max(size, n), n)):
        for hop in range(n - 1):
            sender, receiver = group[hop], group[hop + 1]
            deps = (last[hop],) if index else tuple(prereqs.get(receiver, ()))
            if hop:
                deps += (last[hop - 1],)  # the chunk, as the sender received it
            elif not index:
                deps += tuple(prereqs.get(sender, ()))
            last[hop] = builder.add_flow(sender, receiver, chunk, deps, collective="broadcast", step=index + hop,
                                         **labels)
    return {rank: tuple(last[hop] for hop in (position - 1, position) if hop in last)
            for position, rank in enumerate(group)}


def send_recv(
    builder: WorkloadBuilder, ranks: Sequence[int], size: int, prereqs: Prerequisites | None = None, **labels
) -> Done:
    """Point-to-point: ranks = (sender, receiver); one flow after both ends' prerequisites; done at both ends."""
    if len(ranks) != 2:
        raise ValueError(f"sendrecv takes (sender, receiver), got {len(ranks)} ranks")
    src, dst = _checked_group("sendrecv", ranks, size)
    prereqs = prereqs or {}
    deps = (*prereqs.get(src, ()), *prereqs.get(dst, ()))
    flow = builder.add_flow(src, dst, size, deps, collective="sendrecv", step=0, **labels)
    return {src: (flow,), dst: (flow,)}


def _ring(
    builder: WorkloadBuilder,
    collective: str,
    ranks: Sequence[int],
    size: int,
    rounds: int,
    prereqs: Prerequisites | None,
    labels: dict,
) -> Done:
    """``rounds`` passes of N-1 steps around the ring (2 for all-reduce, 1 otherwise)."""
    group = _checked_group(collective, ranks, size)
    prereqs = prereqs or {}
    n = len(group)
    if n == 1:
        return _unchanged(group, prereqs)
    chunks = split_evenly(max(size, n), n)
    last_send: dict[int, int] = {}
    for step in range(rounds * (n - 1)):
        sends = {}
        for position, rank in enumerate(group):
            receiver, sender = group[(position + 1) % n], group[position - 1]
            if step == 0:
                deps = (*prereqs.get(rank, ()), *prereqs.get(receiver, ()))
            else:
                deps = (last_send[rank], last_send[sender])
            chunk = chunks[(position - step) % n]
            sends[rank] = builder.add_flow(rank, receiver, chunk, deps, collective=collective, step=step, **labels)
        last_send = sends
    return {rank: (last_send[rank], last_send[group[position - 1]]) for position, rank in enumerate(group)}


def flow_count(collective: str, n: int) -> int:
    """The flows a decomposition makes over a group of ``n`` ranks, known before it is made (graph sizes)."""
    return n * (n - 1) * (2 if collective == "allreduce" else 1)


def _checked_group(collective: str, ranks: Sequence[int], size: int) -> list[int]:
    group = list(ranks)
    if not group:
        raise ValueError(f"{collective}: the group has no ranks")
    if len(set(group)) != len(group):
        raise ValueError(f"{collective}: a rank appears twice in the group {group}")
    if not isinstance(size, int) or size <= 0:
        raise ValueError(f"{collective}: size must be a positive number of bytes, got {size!r}")
    return group


def split_evenly(size: int, parts: int) -> list[int]:
    """``size`` split into ``parts`` integers differing by at most one, larger ones first."""
    base, extra = divmod(size, parts)
    return [base + (1 if index < extra else 0) for index in range(parts)]


def _unchanged(group: list[int], prereqs: Prerequisites) -> Done:
    return {rank: tuple(prereqs.get(rank, ())) for rank in group}
