"""A workload written as Chakra execution traces, one file per rank: our presets for ASTRA-sim, and back.

The inverse of ``chakra_graph``, task by task in id order:

* a compute task is a ``COMP_NODE`` on its rank (``duration_micros``, and
  ``duration_seconds`` with the exact time it rounds, and ``phase``);
* an iteration's end is a ``BARRIER`` of every rank (process group "0");
* the flows of one collective (consecutive flows with the same collective,
  group, iteration and phase labels, as one call of ``collectives`` makes
  them) are a ``COMM_COLL_NODE`` on each rank of the group; the group's ring
  order is the order its ranks first appear in the flows, its size what
  that decomposition moves;
* any other flow is a ``COMM_SEND_NODE`` on its source and a
  ``COMM_RECV_NODE`` on its destination, tagged with its number among the
  messages between the two;
* each group label with its ranks is a process group, numbered from 1 as
  ASTRA-sim wants them, declared on every rank by a ``process_group:init``
  metadata node (node 0; a task's node is its id + 1).

A node of rank r depends on the nodes of r all of whose results (what a later
node of r waits for, ``chakra_graph.perform``) are among its task's
dependencies. Every operation is replayed through ``perform`` as it is
written and must give back the very tasks it came from, so a workload whose
dependencies cannot be said rank by rank is refused with a ValueError naming
the task, never written wrong. The same workload gives the same bytes.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import fields
from pathlib import Path

from google.protobuf.message import Message

from wormhole_ns3.models.workloads.chakra import PROCESS_GROUPS_NODE, SUFFIX
from wormhole_ns3.models.workloads.chakra_graph import DECOMPOSITIONS, Operation, OpKind, perform
from wormhole_ns3.models.workloads.chakra_schema import COLLECTIVE_TYPES, NODE_TYPES, frame, messages
from wormhole_ns3.models.workloads.collectives import flow_count
from wormhole_ns3.models.workloads.dag import COMPUTE, Task, Workload, WorkloadBuilder

#: The Chakra schema version the traces follow (GlobalMetadata.version).
CHAKRA_VERSION = "0.0.4"
#: The process group of every rank, as ASTRA-sim names it.
WORLD = "0"
#: The comm_type of each decomposition, by its flows' collective label.
_COMM_TYPES = {"allreduce": "ALL_REDUCE", "allgather": "ALL_GATHER", "reducescatter": "REDUCE_SCATTER",
               "alltoall": "ALL_TO_ALL", "broadcast": "BROADCAST"}


def write_chakra_trace(workload: Workload, prefix: Path, gpus_per_server: int, source: str = "") -> list[Path]:
    """``workload`` as ``<prefix>.<rank>.et`` files; returns their paths (rank order)."""
    files = workload_to_chakra(workload, gpus_per_server, source)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    paths = [prefix.parent / f"{prefix.name}.{rank}{SUFFIX}" for rank in range(len(files))]
    for path, data in zip(paths, files):
        path.write_bytes(data)
    return paths


def workload_to_chakra(workload: Workload, gpus_per_server: int, source: str = "") -> list[bytes]:
    """Each rank's trace file, as bytes; ``source`` says in the GlobalMetadata where the workload came from."""
    operations = list(_operations(workload))
    writer = _Writer(workload, _message_ranks(operations))
    for op, first, count in operations:
        writer.write(op, first, count)
    Attribute = messages().AttributeProto
    metadata = messages().GlobalMetadata(version=CHAKRA_VERSION, attr=[
        Attribute(name="source", string_val=source),
        Attribute(name="gpus_per_server", int64_val=gpus_per_server),
    ])
    declaration = writer.declaration()
    return [frame([metadata, declaration, *nodes]) for nodes in writer.nodes]


def _operations(workload: Workload) -> Iterator[tuple[Operation, int, int]]:
    """The workload as operations, each with its first task and its number of tasks."""
    tasks, ends = workload.tasks, set(workload.iteration_ends)
    everyone = tuple(range(workload.ranks))
    position = 0
    while position < len(tasks):
        task = tasks[position]
        if task.id in ends:
            yield Operation(OpKind.BARRIER, everyone, ends_iteration=True), position, 1
            position += 1
        elif task.kind == COMPUTE:
            yield Operation(OpKind.DELAY, (task.src,), duration=task.duration, phase=task.phase), position, 1
            position += 1
        elif task.collective in DECOMPOSITIONS:
            run = _labelled_alike(tasks, position)
            yield from _collectives(workload.name, run)
            position += len(run)
        else:
            yield Operation(OpKind.SEND_RECV, (task.src, task.dst), task.bytes, group=task.group,
                            phase=task.phase), position, 1
            position += 1


def _message_ranks(operations: list[tuple[Operation, int, int]]) -> dict[str, tuple[int, ...]]:
    """The ranks each group label's point-to-point flows run between (a pipeline's stages, say)."""
    by_label: dict[str, set[int]] = defaultdict(set)
    for op, _, _ in operations:
        if op.kind is OpKind.SEND_RECV:
            by_label[op.group].update(op.ranks)
    return {label: tuple(sorted(ranks)) for label, ranks in by_label.items()}


def _labelled_alike(tasks: tuple[Task, ...], position: int) -> tuple[Task, ...]:
    """The flows from ``position`` on with its collective, group, iteration and phase."""
    first = tasks[position]
    end = position
    while end < len(tasks) and tasks[end].kind == first.kind and (
            tasks[end].collective, tasks[end].group, tasks[end].iteration, tasks[end].phase) == (
            first.collective, first.group, first.iteration, first.phase):
        end += 1
    return tasks[position:end]


def _collectives(name: str, run: tuple[Task, ...]) -> Iterator[tuple[Operation, int, int]]:
    """A run of alike flows as collectives of one group: whole decompositions over the ranks they touch."""
    first = run[0]
    n = len({rank for flow in run for rank in (flow.src, flow.dst)})
    per = flow_count(first.collective, n)
    if len(run) % per:
        raise ValueError(f"{name}: tasks {first.id}..{run[-1].id} ({first.collective} of group {first.group!r}) "
                         f"are not whole {first.collective}s of their {n} ranks: not writable as Chakra collectives")
    for start in range(0, len(run), per):
        flows = run[start: start + per]
        ranks = tuple(dict.fromkeys(rank for flow in flows for rank in (flow.src, flow.dst)))
        size = sum(flow.bytes for flow in flows) * n // per  # the buffer: each of its bytes crosses per/n links
        yield (Operation(OpKind.COLLECTIVE, ranks, size, collective=first.collective, group=first.group,
                         phase=first.phase), flows[0].id, per)


class _Writer:
    """Each rank's nodes, written operation by operation while a replay checks that they give the same tasks."""

    def __init__(self, workload: Workload, message_ranks: dict[str, tuple[int, ...]]) -> None:
        self.workload, self.message_ranks = workload, message_ranks
        self.replay = WorkloadBuilder(workload.name, workload.ranks)
        self.nodes: list[list[Message]] = [[] for _ in range(workload.ranks)]
        #: per rank: task id -> the nodes whose results hold it; node id -> its results
        self.holders: list[dict[int, list[int]]] = [defaultdict(list) for _ in range(workload.ranks)]
        self.results: list[dict[int, frozenset[int]]] = [{} for _ in range(workload.ranks)]
        self.groups: dict[tuple[str, tuple[int, ...]], str] = {("", tuple(range(workload.ranks))): WORLD}
        self.messages: Counter[tuple[int, ...]] = Counter()  # (src, dst) -> messages so far

    def write(self, op: Operation, first: int, count: int) -> None:
        tasks = self.workload.tasks[first: first + count]
        waits = self._waits(op, tasks)
        finished = perform(self.replay, op, {rank: results for rank, (_, results) in waits.items()})
        made = self.replay.tasks_from(first)
        if made != tasks:
            ours, theirs = next((ours, theirs) for ours, theirs in zip(tasks, made) if ours != theirs)
            changes = ", ".join(f"{field.name} {getattr(theirs, field.name)!r} instead of {getattr(ours, field.name)!r}"
                                for field in fields(Task) if getattr(theirs, field.name) != getattr(ours, field.name))
            raise ValueError(f"{self.workload.name}: task {ours.id} ({ours.kind} on rank {ours.src}) cannot be said "
                             f"rank by rank in a Chakra trace: it would come back with {changes}")
        node_id = first + 1
        tag = self._tag(op)
        for rank in op.ranks:
            self.nodes[rank].append(self._node(op, rank, node_id, waits[rank][0], tag))
            self.results[rank][node_id] = frozenset(finished[rank])
            for task in finished[rank]:
                self.holders[rank][task].append(node_id)

    def declaration(self) -> Message:
        """The metadata node that declares the process groups, as PyTorch's converter writes it."""
        groups = [{"pg_name": pg_name, "ranks": list(ranks), "pg_desc": label}
                  for (label, ranks), pg_name in self.groups.items()]
        node = messages().Node(id=0, name=PROCESS_GROUPS_NODE, type=NODE_TYPES.index("METADATA_NODE"))
        node.inputs.values = f"['{json.dumps(groups)}']"
        return node

    def _waits(self, op: Operation, tasks: tuple[Task, ...]) -> dict[int, tuple[list[int], tuple[int, ...]]]:
        """Per rank of ``op``: the nodes its node depends on, and what they give it to wait for."""
        if op.kind is not OpKind.COLLECTIVE:
            return {rank: self._cover(rank, tasks[0].deps) for rank in op.ranks}
        first = tasks[0].id
        entering: dict[int, set[int] | None] = dict.fromkeys(op.ranks)
        for flow in tasks:
            outside = {dep for dep in flow.deps if dep < first}
            if outside:  # a flow that waits for its ends' prerequisites: they are in both ends' node
                for rank in (flow.src, flow.dst):
                    known = entering[rank]
                    entering[rank] = outside if known is None else known & outside
        return {rank: self._cover(rank, deps or ()) for rank, deps in entering.items()}

    def _cover(self, rank: int, deps: Iterable[int]) -> tuple[list[int], tuple[int, ...]]:
        """The nodes of ``rank`` whose results are all in ``deps``, and their results together."""
        wanted = set(deps)
        holders, results = self.holders[rank], self.results[rank]
        nodes = sorted({node for task in wanted for node in holders.get(task, ()) if results[node] <= wanted})
        return nodes, tuple(sorted(set().union(*(results[node] for node in nodes))))

    def _tag(self, op: Operation) -> int:
        """A message's number among those from its source to its destination: its comm_tag."""
        if op.kind is not OpKind.SEND_RECV:
            return 0
        self.messages[op.ranks] += 1
        return (self.messages[op.ranks] - 1) % 2**31

    def _node(self, op: Operation, rank: int, node_id: int, deps: list[int], tag: int) -> Message:
        Attribute = messages().AttributeProto
        attrs = [Attribute(name="is_cpu_op", bool_val=False)]
        if op.kind is OpKind.DELAY:
            node_type, name = "COMP_NODE", op.phase or "compute"
            attrs.append(Attribute(name="duration_seconds", double_val=op.duration))
        elif op.kind is OpKind.SEND_RECV:
            src, dst = op.ranks
            node_type, name = ("COMM_SEND_NODE", f"send to {dst}") if rank == src else ("COMM_RECV_NODE",
                                                                                        f"recv from {src}")
            attrs += [Attribute(name="comm_src", int32_val=src), Attribute(name="comm_dst", int32_val=dst),
                      Attribute(name="comm_size", int64_val=op.size), Attribute(name="comm_tag", int32_val=tag)]
            if op.group:
                attrs.append(Attribute(name="pg_name", string_val=self._group(op.group, self.message_ranks[op.group])))
        else:
            comm_type = "BARRIER" if op.kind is OpKind.BARRIER else _COMM_TYPES[op.collective]
            node_type, name = "COMM_COLL_NODE", f"{comm_type.lower()} {op.group}".strip()
            pg_name = WORLD if op.ends_iteration else self._group(op.group, op.ranks)
            attrs += [Attribute(name="comm_type", int64_val=COLLECTIVE_TYPES.index(comm_type)),
                      Attribute(name="comm_size", int64_val=op.size), Attribute(name="pg_name", string_val=pg_name)]
        if op.phase:
            attrs.append(Attribute(name="phase", string_val=op.phase))
        return messages().Node(id=node_id, name=name, type=NODE_TYPES.index(node_type), data_deps=deps,
                               duration_micros=round(op.duration * 1e6), attr=attrs)

    def _group(self, label: str, ranks: tuple[int, ...]) -> str:
        """The pg_name of the group ``label`` of ``ranks`` (a collective's in ring order), numbered as first used."""
        return self.groups.setdefault((label, ranks), str(len(self.groups)))
