"""A Chakra trace as a task graph: the ranks' nodes matched into operations, checked, ordered, then built.

Every node becomes one ``Operation``, or shares one with the nodes of other
ranks it must meet:

* a computation (or memory, storage, or a host-side launch of a
  communication: ``is_cpu_op``) node is a delay on its rank;
* a send and the receive that matches it (the k-th send from rank a to rank
  b with a tag meets the k-th such receive) are one flow, which starts once
  both nodes' dependencies are done (``send_recv``);
* the k-th collective of a process group on each of the group's ranks are
  one collective, decomposed into flows as the SimAI reader's are
  (``collectives``: ring all-reduce, all-gather, reduce-scatter, pairwise
  all-to-all, pipelined broadcast); the group's declared ranks are its ring
  order, an undeclared group is the ranks that use it (pg_name "" or "0":
  every rank);
* a barrier of every rank closes an iteration (``end_iteration``); a barrier
  of fewer ranks is a zero-length task they all wait for;
* anything else (metadata) moves nothing and passes its dependencies on.

A node's dependencies (on nodes of its own rank) become, per rank, the
prerequisites of its operation. Operations are built in dependency order,
the one holding the lowest node id first among those ready, so that the
same trace always makes the same graph. Matching, process groups, cycles
and the graph's size are all checked before anything is built.
"""

from __future__ import annotations

import heapq
import os
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from itertools import chain

from wormhole_ns3.models.workloads.chakra import (
    PASSIVE_TYPES,
    ChakraTrace,
    ChakraTraceError,
    Collective,
    PointToPoint,
    RankTrace,
    TraceNode,
)
from wormhole_ns3.models.workloads.collectives import (
    Done,
    all_to_all,
    flow_count,
    ring_allgather,
    ring_allreduce,
    ring_broadcast,
    ring_reducescatter,
    send_recv,
)
from wormhole_ns3.models.workloads.dag import Workload, WorkloadBuilder
from wormhole_ns3.models.workloads.simai import BYTES_PER_TASK

#: GPUs per server when neither the caller (a SimAI topology file) nor the trace says, as for SimAI's files.
DEFAULT_GPUS_PER_SERVER = 8
#: How each collective is decomposed into flows, by the name its flows are labelled with.
DECOMPOSITIONS = {
    "allreduce": ring_allreduce,
    "allgather": ring_allgather,
    "reducescatter": ring_reducescatter,
    "alltoall": all_to_all,
    "broadcast": ring_broadcast,
}
#: Chakra's comm_type -> decomposition (a block reduce-scatter moves what a reduce-scatter does).
DECOMPOSITION_OF = {"ALL_REDUCE": "allreduce", "ALL_GATHER": "allgather", "REDUCE_SCATTER": "reducescatter",
                    "REDUCE_SCATTER_BLOCK": "reducescatter", "ALL_TO_ALL": "alltoall", "BROADCAST": "broadcast"}
#: The cycle steps an error message shows before it cuts the cycle short.
_CYCLE_SHOWN = 8


class OpKind(Enum):
    DELAY = "delay"  #: time on one rank
    SEND_RECV = "send-recv"  #: one flow
    COLLECTIVE = "collective"  #: the flows of a decomposition
    BARRIER = "barrier"  #: a zero-length task every rank of the group waits for
    NOTHING = "nothing"  #: each rank's prerequisites, passed on


@dataclass(frozen=True)
class Operation:
    """What one or several nodes (one per rank) make of the task graph, ``perform`` makes it."""

    kind: OpKind
    ranks: tuple[int, ...]  #: (rank,) of a delay; (src, dst) of a flow; a group in ring order (root first)
    size: int = 0
    duration: float = 0.0
    collective: str = ""  #: a key of DECOMPOSITIONS, for a COLLECTIVE
    group: str = ""  #: the process group's label (its pg_desc, else its pg_name)
    phase: str = ""
    ends_iteration: bool = False  #: a BARRIER of every rank


def perform(builder: WorkloadBuilder, op: Operation, prereqs: Mapping[int, tuple[int, ...]]) -> Done:
    """Add ``op``'s tasks after each rank's ``prereqs``; returns what a later node of each rank waits for."""
    labels = {"group": op.group, "phase": op.phase}
    if op.kind is OpKind.DELAY:
        rank = op.ranks[0]
        return {rank: (builder.add_compute(rank, op.duration, prereqs.get(rank, ()), phase=op.phase),)}
    if op.kind is OpKind.SEND_RECV:
        return send_recv(builder, op.ranks, op.size, prereqs, **labels)
    if op.kind is OpKind.COLLECTIVE:
        return DECOMPOSITIONS[op.collective](builder, op.ranks, op.size, prereqs, **labels)
    if op.kind is OpKind.BARRIER:
        deps = tuple(chain.from_iterable(prereqs.get(rank, ()) for rank in op.ranks))
        if op.ends_iteration:
            task = builder.end_iteration(deps, rank=op.ranks[0])
        else:
            task = builder.add_compute(op.ranks[0], 0.0, deps, collective="barrier", **labels)
        return {rank: (task,) for rank in op.ranks}
    return {rank: tuple(prereqs.get(rank, ())) for rank in op.ranks}


@dataclass(frozen=True)
class GraphSize:
    flows: int
    computes: int


def chakra_to_workload(trace: ChakraTrace, gpus_per_server: int | None = None, include_tp: bool = False,
                       name: str | None = None) -> Workload:
    """The trace as a task graph over its ranks; a trace that cannot run raises ChakraTraceError (one line).

    A communication whose ranks are all in one server (``gpus_per_server``:
    the caller's, else the trace's GlobalMetadata, else 8) moves nothing
    unless ``include_tp``, as the SimAI reader leaves out TP collectives; how
    many and how many bytes goes to the metadata (``skipped_tp``).
    """
    per_server = gpus_per_server or _traced_gpus_per_server(trace) or DEFAULT_GPUS_PER_SERVER
    plan = _Plan(trace, per_server, include_tp)
    _check_fits(trace, plan.size())
    metadata = {
        "source": "chakra",
        "trace": trace.name,
        "nodes": sum(len(rank.nodes) for rank in trace.ranks),
        "process_groups": len(plan.groups),
        "parallelism": {"gpus_per_server": per_server},
        "include_tp": include_tp,
        "skipped_tp": {"collectives": plan.skipped, "bytes": plan.skipped_bytes},
    }
    return plan.build(WorkloadBuilder(name or trace.name, len(trace.ranks), metadata))


def _traced_gpus_per_server(trace: ChakraTrace) -> int | None:
    said = {rank.gpus_per_server for rank in trace.ranks} - {None}
    if len(said) > 1:
        first = next(rank for rank in trace.ranks if rank.gpus_per_server is not None)
        other = next(rank for rank in trace.ranks if rank.gpus_per_server not in (None, first.gpus_per_server))
        raise ChakraTraceError(other.path, f"GlobalMetadata says {other.gpus_per_server} GPUs per server, rank "
                                           f"{first.rank}'s says {first.gpus_per_server}", other.rank)
    return said.pop() if said else None


def _check_fits(trace: ChakraTrace, size: GraphSize) -> None:
    """ChakraTraceError, before anything is built, if the task graph cannot fit in this machine's memory."""
    need = (size.flows + size.computes) * BYTES_PER_TASK
    have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if need > have:
        raise ChakraTraceError(trace.prefix, f"{len(trace.ranks):,} ranks make {size.flows / 1e6:,.1f} M flows and "
                                             f"{size.computes / 1e6:,.1f} M compute tasks, about {need / 2**30:,.0f} "
                                             f"GiB as a task graph ({BYTES_PER_TASK} B a task at least); this "
                                             f"machine has {have / 2**30:,.0f} GiB")


@dataclass(frozen=True)
class _Group:
    ranks: tuple[int, ...]
    label: str


Member = tuple[int, int]  # (rank, index of the node in the rank's trace)


class _Plan:
    """The trace's operations, each with its nodes, and the order to build them in."""

    def __init__(self, trace: ChakraTrace, per_server: int, include_tp: bool) -> None:
        self.trace, self.per_server, self.include_tp = trace, per_server, include_tp
        self.skipped = self.skipped_bytes = 0
        self.ops: list[Operation] = []
        self.members: list[tuple[Member, ...]] = []
        self.op_of: list[list[int]] = [[-1] * len(rank.nodes) for rank in trace.ranks]
        self.index_of = [{node.id: index for index, node in enumerate(rank.nodes)} for rank in trace.ranks]
        self.groups = _process_groups(trace)
        for rank in trace.ranks:
            for index, node in enumerate(rank.nodes):
                if node.comm is None:
                    kind = OpKind.NOTHING if node.type in PASSIVE_TYPES else OpKind.DELAY
                    self._add(Operation(kind, (rank.rank,), duration=node.duration, phase=node.phase),
                              ((rank.rank, index),))
        self._match_point_to_point()
        self._match_collectives()
        #: the build order among ready operations: the lowest node id first (then rank), as the trace numbers them
        self.keys = [min((self._node(member).id, member[0]) for member in members) for members in self.members]
        self.order = self._dependency_order()

    def size(self) -> GraphSize:
        flows = sum(flow_count(op.collective, len(op.ranks)) if op.kind is OpKind.COLLECTIVE else 1
                    for op in self.ops if op.kind in (OpKind.COLLECTIVE, OpKind.SEND_RECV))
        computes = sum(op.kind in (OpKind.DELAY, OpKind.BARRIER) for op in self.ops) + 1
        return GraphSize(flows, computes)

    def build(self, builder: WorkloadBuilder) -> Workload:
        """Each operation in order, after what its nodes depend on; an iteration's end after the last if needed."""
        ranks, index_of = self.trace.ranks, self.index_of
        done: list[list[tuple[int, ...]]] = [[()] * len(rank.nodes) for rank in ranks]
        ended = False
        for op_index in self.order:
            prereqs = {}
            for rank, index in self.members[op_index]:
                waits = (done[rank][index_of[rank][dep]] for dep in ranks[rank].nodes[index].deps)
                prereqs[rank] = tuple(chain.from_iterable(waits))
            op = self.ops[op_index]
            finished = perform(builder, op, prereqs)
            for rank, index in self.members[op_index]:
                done[rank][index] = finished[rank]
            ended = op.ends_iteration
        if not ended:
            waited_for = [{dep for node in rank.nodes for dep in node.deps} for rank in ranks]
            last = (done[r][i] for r, rank in enumerate(ranks) for i, node in enumerate(rank.nodes)
                    if node.id not in waited_for[r])
            builder.end_iteration(chain.from_iterable(last))
        return builder.build()

    def _add(self, op: Operation, members: tuple[Member, ...]) -> None:
        for rank, index in members:
            self.op_of[rank][index] = len(self.ops)
        self.ops.append(op)
        self.members.append(members)

    def _error(self, member: Member, problem: str) -> ChakraTraceError:
        rank, index = member
        trace = self.trace.ranks[rank]
        return ChakraTraceError(trace.path, problem, rank, trace.nodes[index].id)

    def _node(self, member: Member) -> TraceNode:
        return self.trace.ranks[member[0]].nodes[member[1]]

    def _inside_server(self, ranks: tuple[int, ...]) -> bool:
        return len({rank // self.per_server for rank in ranks}) == 1

    def _moving(self, ranks: tuple[int, ...], size: int) -> bool:
        """Whether a communication of ``size`` bytes among ``ranks`` is simulated; counts the ones left out."""
        if size == 0 or len(ranks) < 2:
            return False
        if self._inside_server(ranks) and not self.include_tp:
            self.skipped += 1
            self.skipped_bytes += size
            return False
        return True

    def _match_point_to_point(self) -> None:
        """The k-th send from a to b with a tag and the k-th such receive are one flow."""
        sends: dict[tuple[int, int, int], list[Member]] = defaultdict(list)
        receives: dict[tuple[int, int, int], list[Member]] = defaultdict(list)
        for rank in self.trace.ranks:
            for index, node in enumerate(rank.nodes):
                if isinstance(node.comm, PointToPoint):
                    side = sends if node.type == "COMM_SEND_NODE" else receives
                    side[(node.comm.src, node.comm.dst, node.comm.tag)].append((rank.rank, index))
        for key in sorted(sends.keys() | receives.keys()):
            sent, received = sends.get(key, []), receives.get(key, [])
            for send, receive in zip(sent, received):
                self._pair(send, receive)
            if len(sent) != len(received):
                self._unmatched(key, sent, received)

    def _pair(self, send: Member, receive: Member) -> None:
        out, into = self._node(send).comm, self._node(receive).comm
        assert isinstance(out, PointToPoint) and isinstance(into, PointToPoint)
        if out.size != into.size:
            raise self._error(send, f"sends {out.size:,} bytes to rank {out.dst} (tag {out.tag}), whose matching "
                                    f"receive (node {self._node(receive).id}) is of {into.size:,} bytes")
        ranks = (out.src, out.dst)
        kind = OpKind.SEND_RECV if self._moving(ranks, out.size) else OpKind.NOTHING
        label = self._label(out.pg_name or into.pg_name)
        phase = self._node(send).phase or self._node(receive).phase
        self._add(Operation(kind, ranks, out.size, group=label, phase=phase), (send, receive))

    def _unmatched(self, key: tuple[int, int, int], sent: list[Member], received: list[Member]) -> None:
        src, dst, tag = key
        if len(sent) > len(received):
            node = self._node(sent[len(received)])
            assert isinstance(node.comm, PointToPoint)
            raise self._error(sent[len(received)], f"sends {node.comm.size:,} bytes to rank {dst} (tag {tag}), which "
                                                   f"has no receive to match it ({len(received)} receives from rank "
                                                   f"{src} with tag {tag} for {len(sent)} sends)")
        node = self._node(received[len(sent)])
        assert isinstance(node.comm, PointToPoint)
        raise self._error(received[len(sent)], f"receives {node.comm.size:,} bytes from rank {src} (tag {tag}), which "
                                               f"sends nothing to match it ({len(sent)} sends to rank {dst} with tag "
                                               f"{tag} for {len(received)} receives)")

    def _label(self, pg_name: str) -> str:
        group = self.groups.get(pg_name)
        return group.label if group is not None else pg_name

    def _match_collectives(self) -> None:
        """The k-th collective of a process group on each of its ranks are one collective; they must agree."""
        issued: dict[str, dict[int, list[Member]]] = defaultdict(lambda: defaultdict(list))
        for trace in self.trace.ranks:
            for index, node in enumerate(trace.nodes):
                if isinstance(node.comm, Collective):
                    issued[node.comm.pg_name][trace.rank].append((trace.rank, index))
        for pg_name in sorted(issued):
            group, by_rank = self.groups[pg_name], issued[pg_name]
            for rank, members in by_rank.items():
                if rank not in group.ranks:
                    raise self._error(members[0], f"a collective of process group {self._shown(pg_name)}, which "
                                                  f"does not include rank {rank}")
            counts = {rank: len(by_rank.get(rank, ())) for rank in group.ranks}
            most = max(counts, key=lambda rank: (counts[rank], -rank))
            fewest = min(counts, key=lambda rank: (counts[rank], rank))
            if counts[fewest] != counts[most]:
                raise self._error(by_rank[most][counts[fewest]],
                                  f"collective {counts[fewest] + 1} of process group {self._shown(pg_name)} on this "
                                  f"rank, but rank {fewest} has only {counts[fewest]} there: ranks disagree about "
                                  "the group's collectives")
            for k in range(counts[most]):
                self._collective(pg_name, group, tuple(by_rank[rank][k] for rank in group.ranks))

    def _collective(self, pg_name: str, group: _Group, members: tuple[Member, ...]) -> None:
        first = self._node(members[0]).comm
        assert isinstance(first, Collective)
        for member in members[1:]:
            other = self._node(member).comm
            assert isinstance(other, Collective)
            if (other.type, other.size, other.root) != (first.type, first.size, first.root):
                raise self._error(member, f"{_described(other)} on process group {self._shown(pg_name)}, where rank "
                                          f"{members[0][0]} (node {self._node(members[0]).id}) has "
                                          f"{_described(first)}: ranks disagree about the group's collectives")
        ranks = group.ranks
        if first.root is not None:
            if first.root not in ranks:
                raise self._error(members[0], f"the root of a {first.type}, rank {first.root}, is not in process "
                                              f"group {self._shown(pg_name)}")
            start = ranks.index(first.root)
            ranks = ranks[start:] + ranks[:start]
        phase = self._node(members[0]).phase
        if first.type == "BARRIER":
            op = Operation(OpKind.BARRIER, ranks, group=group.label, phase=phase,
                           ends_iteration=len(ranks) == len(self.trace.ranks))
        elif self._moving(ranks, first.size):
            op = Operation(OpKind.COLLECTIVE, ranks, first.size, collective=DECOMPOSITION_OF[first.type],
                           group=group.label, phase=phase)
        else:
            op = Operation(OpKind.NOTHING, ranks)
        by_rank = dict(zip(group.ranks, members))
        self._add(op, tuple(by_rank[rank] for rank in ranks))

    def _shown(self, pg_name: str) -> str:
        group = self.groups[pg_name]
        label = f" ({group.label!r})" if group.label != pg_name else ""
        return f"{pg_name!r}{label} of ranks {_rank_list(group.ranks)}"

    def _dependency_order(self) -> list[int]:
        """The operations in an order where each comes after those it waits for; a cycle is a ChakraTraceError."""
        ranks = self.trace.ranks
        waits_for: list[set[int]] = [set() for _ in self.ops]
        for op_index, members in enumerate(self.members):
            for rank, index in members:
                ids, ops = self.index_of[rank], self.op_of[rank]
                waits_for[op_index].update(ops[ids[dep]] for dep in ranks[rank].nodes[index].deps)
        waited_by: list[list[int]] = [[] for _ in self.ops]
        for op_index, before in enumerate(waits_for):
            for other in before:
                waited_by[other].append(op_index)
        pending = [len(before) for before in waits_for]
        ready = [(self.keys[op_index], op_index) for op_index, count in enumerate(pending) if count == 0]
        heapq.heapify(ready)
        order: list[int] = []
        while ready:
            _, op_index = heapq.heappop(ready)
            order.append(op_index)
            for later in waited_by[op_index]:
                pending[later] -= 1
                if pending[later] == 0:
                    heapq.heappush(ready, (self.keys[later], later))
        if len(order) != len(self.ops):
            raise self._cycle(waits_for, pending)
        return order

    def _cycle(self, waits_for: list[set[int]], pending: list[int]) -> ChakraTraceError:
        """The error naming one cycle among the operations that could not be ordered."""
        start = min((op for op, count in enumerate(pending) if count), key=self.keys.__getitem__)
        path: list[int] = []
        seen: dict[int, int] = {}
        op = start
        while op not in seen:
            seen[op] = len(path)
            path.append(op)
            op = min((other for other in waits_for[op] if pending[other]), key=self.keys.__getitem__)
        cycle = path[seen[op]:] + [op]
        steps = [self._shown_op(op) for op in cycle]
        shown = " -> ".join(steps if len(steps) <= _CYCLE_SHOWN else steps[:_CYCLE_SHOWN] + ["..."])
        first = min(self.members[cycle[0]], key=lambda member: self._node(member).id)
        return self._error(first, f"dependency cycle: {shown} (each waits for the next: nodes that depend on each "
                                  "other, or ranks issuing their collectives or sends in different orders)")

    def _shown_op(self, op_index: int) -> str:
        """An operation as a cycle shows it: its first two nodes, and how many ranks more."""
        members = self.members[op_index]
        nodes = " & ".join(f"rank {rank} node {self._node((rank, index)).id}" for rank, index in members[:2])
        return nodes + (f" (+{len(members) - 2} ranks)" if len(members) > 2 else "")


def _described(comm: Collective) -> str:
    root = f" from rank {comm.root}" if comm.root is not None else ""
    return f"{comm.type} of {comm.size:,} bytes{root}"


def _rank_list(ranks: tuple[int, ...]) -> str:
    shown = ", ".join(map(str, ranks[:8]))
    return f"[{shown}{', ...' if len(ranks) > 8 else ''}]"


def _process_groups(trace: ChakraTrace) -> dict[str, _Group]:
    """Every process group a rank declares or uses: declarations must agree across ranks."""
    declared: dict[str, tuple[RankTrace, _Group, int]] = {}
    for rank in trace.ranks:
        for pg_name, group in rank.groups.items():
            mine = _Group(group.ranks, pg_name if group.desc is None else group.desc)
            known = declared.get(pg_name)
            if known is None:
                declared[pg_name] = (rank, mine, group.node)
            elif known[1].ranks != mine.ranks:
                raise ChakraTraceError(rank.path, f"declares process group {pg_name!r} as ranks "
                                                  f"{_rank_list(mine.ranks)}, rank {known[0].rank} (node {known[2]}) "
                                                  f"as ranks {_rank_list(known[1].ranks)}", rank.rank, group.node)
    groups = {pg_name: group for pg_name, (_, group, _) in declared.items()}
    users: dict[str, set[int]] = defaultdict(set)
    for rank in trace.ranks:
        for node in rank.nodes:
            if isinstance(node.comm, Collective) and node.comm.pg_name not in groups:
                users[node.comm.pg_name].add(rank.rank)
    everyone = tuple(range(len(trace.ranks)))
    for pg_name, ranks in users.items():
        groups[pg_name] = _Group(everyone if pg_name in ("", "0") else tuple(sorted(ranks)), pg_name)
    return groups
