"""MLCommons Chakra execution traces, read into typed per-rank nodes: what ASTRA-sim's users bring.

A trace is one file per rank, ``<prefix>.<rank>.et`` (gzip-compressed or
not): a ``GlobalMetadata`` message, then ``Node`` messages (``chakra_schema``).
A node has an id unique in its file, a type, data dependencies on nodes of
the same file (what must finish before it starts), control dependencies, a
duration in microseconds and named attributes: ``comm_type``,
``comm_size`` (bytes), ``comm_src``, ``comm_dst``, ``comm_tag`` and
``pg_name`` for communication. Control dependencies are not waited for:
in traces of PyTorch they are the call stack (an operator's kernel names
the operator, which names the kernel: a cycle), and Chakra's converter puts
what must run first into the data dependencies, which are what ASTRA-sim's
feeder resolves. Process groups are declared as PyTorch's
converter writes them: a ``METADATA_NODE`` named ``process_group:init`` whose
``inputs.values`` is ``['<JSON list of {"pg_name", "ranks", "pg_desc"}>']``
(empty ranks: every rank).

Two attributes are this project's own, written by ``chakra_export`` and
optional on reading: ``duration_seconds`` (a double: the exact time that
``duration_micros`` rounds) and ``phase`` (the report label: forward,
backward, grad-sync, ...).

Everything here is about one rank's file at a time; ``chakra_graph`` matches
the ranks' nodes with each other and makes the task graph. Every problem is
a ``ChakraTraceError``: one line naming the file, the rank, the node and
what is wrong.
"""

from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from google.protobuf.message import DecodeError, Message
from google.protobuf.unknown_fields import UnknownFieldSet

from wormhole_ns3.models.workloads.chakra_schema import (
    COLLECTIVE_TYPES,
    INTEGER_VALUES,
    NODE_TYPES,
    StreamError,
    framed,
    messages,
)
from wormhole_ns3.models.workloads.text import WorkloadFileError, shown

SUFFIX = ".et"
#: PyTorch's (and ASTRA-sim's) name of the metadata node that declares process groups.
PROCESS_GROUPS_NODE = "process_group:init"
#: Sane ranges: a node longer than an hour or a message over 1 TiB is a unit mistake (ns as us, bits), not a step.
MAX_DURATION_S = 3600.0
MAX_BYTES = 2**40
#: Nodes that neither take time nor communicate; every other node without communication is a delay.
PASSIVE_TYPES = frozenset({"METADATA_NODE", "INVALID_NODE"})
#: Collectives that become flows (``chakra_graph``), and BARRIER, which synchronizes its group.
SUPPORTED_COLLECTIVES = ("ALL_REDUCE", "ALL_GATHER", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "ALL_TO_ALL",
                         "BROADCAST", "BARRIER")
_GZIP_MAGIC = b"\x1f\x8b"
#: Node fields the schema defines; an unknown field among them is a field of the wrong wire type.
_NODE_FIELDS = range(1, 11)


class ChakraTraceError(WorkloadFileError):
    """A trace that cannot be run, said in one line: ``<file>: rank R, node N: <problem>``."""

    def __init__(self, path: Path, problem: str, rank: int | None = None, node: int | None = None) -> None:
        where = "".join((f"rank {rank}" if rank is not None else "",
                         ", " if rank is not None and node is not None else "",
                         f"node {node}" if node is not None else ""))
        super().__init__(path, None, f"{where}: {problem}" if where else problem)
        self.rank, self.node = rank, node


@dataclass(frozen=True, slots=True)
class PointToPoint:
    """A send (on ``src``'s trace) or a receive (on ``dst``'s) of ``size`` bytes; ``tag`` pairs them up."""

    src: int
    dst: int
    size: int
    tag: int
    pg_name: str


@dataclass(frozen=True, slots=True)
class Collective:
    """A collective of the process group ``pg_name`` ("" or "0" with no declaration: every rank)."""

    type: str  #: a name of ``COLLECTIVE_TYPES``, e.g. "ALL_REDUCE"
    size: int
    pg_name: str
    root: int | None  #: comm_src, a broadcast's root rank, if the node names one


@dataclass(frozen=True, slots=True)
class TraceNode:
    """One node of a rank, as the task graph needs it."""

    id: int
    type: str  #: a name of ``NODE_TYPES``
    name: str
    deps: tuple[int, ...]  #: data dependencies: ids of nodes of the same rank that must finish first
    duration: float  #: seconds
    phase: str
    comm: PointToPoint | Collective | None = None  #: None: a delay of ``duration`` (unless PASSIVE_TYPES)


@dataclass(frozen=True)
class ProcessGroup:
    """A process group as one rank declares it; ``node`` is the declaring node, for messages."""

    ranks: tuple[int, ...]  #: in ring order
    desc: str | None  #: its pg_desc, if the declaration has one: what the task graph labels its flows with
    node: int


@dataclass(frozen=True)
class RankTrace:
    rank: int
    path: Path
    nodes: tuple[TraceNode, ...]  #: in file order
    groups: Mapping[str, ProcessGroup]  #: the process groups this rank's file declares, by pg_name
    gpus_per_server: int | None  #: what the file's GlobalMetadata says, if it says


@dataclass(frozen=True)
class ChakraTrace:
    """Every rank's trace; ``ranks[r]`` is rank r's."""

    prefix: Path
    ranks: tuple[RankTrace, ...]

    @property
    def name(self) -> str:
        return self.prefix.name


def read_chakra_trace(dir_or_prefix: str | Path) -> ChakraTrace:
    """The traces of a folder (one prefix in it) or of a prefix: ``<prefix>.<rank>.et`` for ranks 0..N-1."""
    prefix, files = trace_files(Path(dir_or_prefix))
    return ChakraTrace(prefix, tuple(read_rank(path, rank, len(files)) for rank, path in enumerate(files)))


def trace_files(path: Path) -> tuple[Path, list[Path]]:
    """The prefix and the files of ranks 0..N-1; a ChakraTraceError if there are none or a rank is missing."""
    if path.is_dir():
        found = _rank_files(path, None)
        prefixes = sorted({prefix for prefix, _ in found})
        if not prefixes:
            raise ChakraTraceError(path, f"no Chakra traces (<prefix>.<rank>{SUFFIX} files) in this folder")
        if len(prefixes) > 1:
            raise ChakraTraceError(path, f"traces of {len(prefixes)} prefixes ({', '.join(map(shown, prefixes[:3]))}"
                                         f"{', ...' if len(prefixes) > 3 else ''}): give one as {path}/PREFIX")
        prefix = path / prefixes[0]
    else:
        prefix = path
        found = _rank_files(path.parent, path.name) if path.parent.is_dir() else []
        if not found:
            raise ChakraTraceError(path, f"no such folder, and no Chakra traces {path.name}.<rank>{SUFFIX} beside it")
    ranks: dict[int, Path] = {}
    for _, file in found:
        rank = int(file.name[len(prefix.name) + 1: -len(SUFFIX)])
        if rank in ranks:
            raise ChakraTraceError(file, f"rank {rank} has two traces: {ranks[rank].name} and {file.name}")
        ranks[rank] = file
    missing = next(rank for rank in range(len(ranks) + 1) if rank not in ranks)
    if missing < len(ranks):
        raise ChakraTraceError(prefix.parent / f"{prefix.name}.{missing}{SUFFIX}",
                               f"missing rank {missing}: there are traces of {len(ranks)} ranks up to rank "
                               f"{max(ranks)}, and ranks are numbered from 0")
    return prefix, [ranks[rank] for rank in range(len(ranks))]


def _rank_files(folder: Path, prefix: str | None) -> list[tuple[str, Path]]:
    """(prefix, file) of the trace files in ``folder``, of ``prefix`` only when it is given."""
    pattern = re.compile(rf"({re.escape(prefix) if prefix is not None else '.+'})\.([0-9]{{1,9}}){re.escape(SUFFIX)}")
    try:
        names = sorted(entry.name for entry in folder.iterdir() if entry.is_file())
    except OSError as error:
        raise ChakraTraceError(folder, error.strerror or str(error)) from None
    return [(match.group(1), folder / name) for name in names if (match := pattern.fullmatch(name))]


def read_rank(path: Path, rank: int, ranks: int) -> RankTrace:
    """Rank ``rank``'s file of a trace of ``ranks`` ranks, as typed nodes."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ChakraTraceError(path, error.strerror or str(error), rank) from None
    stream = _stream(path, rank, data)
    try:
        (_, head), *bodies = framed(stream)
    except StreamError as error:
        raise ChakraTraceError(path, f"not a Chakra trace (length-prefixed protobuf messages): {error}", rank) from None
    metadata = _parse(messages().GlobalMetadata, head)
    if metadata is None or len(UnknownFieldSet(metadata)):
        raise ChakraTraceError(path, "not a Chakra trace: its first message is not a GlobalMetadata", rank)
    reader = _RankReader(path, rank, ranks)
    nodes = tuple(reader.node(index, offset, body) for index, (offset, body) in enumerate(bodies, start=1))
    reader.check_dependencies(nodes)
    return RankTrace(rank, path, nodes, reader.groups, _gpus_per_server(path, rank, metadata))


def _stream(path: Path, rank: int, data: bytes) -> bytes:
    """The file's bytes, decompressed if gzip'd (Chakra's tools read both)."""
    if data.startswith(_GZIP_MAGIC):
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as error:
            raise ChakraTraceError(path, f"not a Chakra trace: a broken gzip file ({error})", rank) from None
    if not data:
        raise ChakraTraceError(path, "not a Chakra trace: the file is empty", rank)
    return data


def _parse(kind: type[Message], body: bytes) -> Message | None:
    message = kind()
    try:
        message.ParseFromString(body)
    except DecodeError:
        return None
    return message


def _gpus_per_server(path: Path, rank: int, metadata: Message) -> int | None:
    for attr in metadata.attr:
        if attr.name == "gpus_per_server":
            value = _integer_value(attr)
            if value is None or not 1 <= value <= 2**16:
                raise ChakraTraceError(path, "GlobalMetadata: gpus_per_server must be an integer within 1..65536",
                                       rank)
            return value
    return None


def _integer_value(attr: Message) -> int | None:
    kind = attr.WhichOneof("value")
    return getattr(attr, kind) if kind in INTEGER_VALUES else None


class _RankReader:
    """Turns one rank's Node messages into TraceNodes, collecting its process-group declarations."""

    def __init__(self, path: Path, rank: int, ranks: int) -> None:
        self.path, self.rank, self.ranks = path, rank, ranks
        self.groups: dict[str, ProcessGroup] = {}

    def error(self, problem: str, node: int | None = None) -> ChakraTraceError:
        return ChakraTraceError(self.path, problem, self.rank, node)

    def node(self, index: int, offset: int, body: bytes) -> TraceNode:
        message = _parse(messages().Node, body)
        if message is None or any(field.field_number in _NODE_FIELDS for field in UnknownFieldSet(message)):
            raise self.error(f"message {index} (byte {offset}) is not a Chakra Node")
        if message.type >= len(NODE_TYPES):
            raise self.error(f"node type {message.type} is not one of Chakra's ({', '.join(NODE_TYPES)})", message.id)
        attrs = {attr.name: attr for attr in reversed(message.attr)}  # the first of a name counts
        type_ = NODE_TYPES[message.type]
        comm: PointToPoint | Collective | None = None
        if type_.startswith("COMM_") and self._flag(message, attrs, "is_cpu_op"):
            pass  # PyTorch's host-side launch of a communication: CPU time, the GPU-side node communicates
        elif type_ == "COMM_SEND_NODE":
            comm = self._point_to_point(message, attrs, sending=True)
        elif type_ == "COMM_RECV_NODE":
            comm = self._point_to_point(message, attrs, sending=False)
        elif type_ == "COMM_COLL_NODE":
            comm = self._collective(message, attrs)
        elif type_ == "METADATA_NODE" and PROCESS_GROUPS_NODE in message.name:
            self._declare_groups(message)
        return TraceNode(
            id=message.id, type=type_, name=message.name,
            deps=tuple(sorted(set(message.data_deps))),
            duration=self._duration(message, attrs), phase=self._text(message, attrs, "phase"), comm=comm,
        )

    def check_dependencies(self, nodes: tuple[TraceNode, ...]) -> None:
        """Every node id once, and every dependency a node of this file other than itself."""
        seen: set[int] = set()
        for node in nodes:
            if node.id in seen:
                raise self.error("a second node with this id (ids must be unique in a rank's trace)", node.id)
            seen.add(node.id)
        for node in nodes:
            for dep in node.deps:
                if dep == node.id:
                    raise self.error("dependency cycle: the node depends on itself", node.id)
                if dep not in seen:
                    raise self.error(f"depends on node {dep}, which this rank's trace does not have", node.id)

    def _duration(self, message: Message, attrs: dict[str, Message]) -> float:
        micros = message.duration_micros
        exact = attrs.get("duration_seconds")
        if exact is None:
            seconds = micros / 1e6
        elif exact.WhichOneof("value") != "double_val" or not math.isfinite(exact.double_val):
            raise self.error("duration_seconds must be a finite double attribute", message.id)
        elif abs(exact.double_val * 1e6 - micros) > 1:
            raise self.error(f"duration_seconds {exact.double_val!r} and duration_micros {micros} disagree",
                             message.id)
        else:
            seconds = exact.double_val
        if not 0 <= seconds <= MAX_DURATION_S:
            raise self.error(f"duration_micros {micros:,} is {micros / 3.6e9:,.1f} hours: Chakra durations are "
                             "microseconds (is it in nanoseconds?)" if seconds > 0 else
                             f"duration_seconds {seconds!r} is negative", message.id)
        return seconds

    def _point_to_point(self, message: Message, attrs: dict[str, Message], sending: bool) -> PointToPoint:
        peer_name, own_name = ("comm_dst", "comm_src") if sending else ("comm_src", "comm_dst")
        peer = self._rank(message, attrs, peer_name, required=True)
        own = self._rank(message, attrs, own_name, required=False)
        if own is not None and own != self.rank:
            raise self.error(f"a {'send' if sending else 'receive'} on rank {self.rank}'s trace says {own_name} "
                             f"{own}: a rank's trace holds its own sends and receives", message.id)
        assert peer is not None
        if peer == self.rank:
            raise self.error(f"{'sends to' if sending else 'receives from'} its own rank", message.id)
        src, dst = (self.rank, peer) if sending else (peer, self.rank)
        tag = self._integer(message, attrs, "comm_tag") or 0
        return PointToPoint(src, dst, self._size(message, attrs, required=True), tag,
                            self._text(message, attrs, "pg_name"))

    def _collective(self, message: Message, attrs: dict[str, Message]) -> Collective:
        number = self._integer(message, attrs, "comm_type")
        if number is None:
            raise self.error("a collective without a comm_type attribute", message.id)
        if not 0 <= number < len(COLLECTIVE_TYPES):
            raise self.error(f"comm_type {number} is not a Chakra collective (0..{len(COLLECTIVE_TYPES) - 1})",
                             message.id)
        type_ = COLLECTIVE_TYPES[number]
        if type_ not in SUPPORTED_COLLECTIVES:
            raise self.error(f"collective {type_} is not supported (supported: {', '.join(SUPPORTED_COLLECTIVES)})",
                             message.id)
        size = self._size(message, attrs, required=type_ != "BARRIER")
        root = self._rank(message, attrs, "comm_src", required=False)
        return Collective(type_, size, self._text(message, attrs, "pg_name"), root)

    def _flag(self, message: Message, attrs: dict[str, Message], name: str) -> bool:
        attr = attrs.get(name)
        if attr is None:
            return False
        if attr.WhichOneof("value") != "bool_val":
            raise self.error(f"{name} must be a bool attribute, it is {attr.WhichOneof('value') or 'empty'}",
                             message.id)
        return attr.bool_val

    def _integer(self, message: Message, attrs: dict[str, Message], name: str) -> int | None:
        attr = attrs.get(name)
        if attr is None:
            return None
        value = _integer_value(attr)
        if value is None:
            raise self.error(f"{name} must be an integer attribute, it is {attr.WhichOneof('value') or 'empty'}",
                             message.id)
        return value

    def _size(self, message: Message, attrs: dict[str, Message], required: bool) -> int:
        size = self._integer(message, attrs, "comm_size")
        if size is None:
            if required:
                raise self.error("a communication without a comm_size attribute", message.id)
            return 0
        if not 0 <= size <= MAX_BYTES:
            raise self.error(f"comm_size {size:,} is out of range: it is bytes, 0 to {MAX_BYTES:,} (1 TiB)",
                             message.id)
        return size

    def _rank(self, message: Message, attrs: dict[str, Message], name: str, required: bool) -> int | None:
        rank = self._integer(message, attrs, name)
        if rank is None:
            if required:
                raise self.error(f"a {NODE_TYPES[message.type]} without a {name} attribute", message.id)
            return None
        if not 0 <= rank < self.ranks:
            raise self.error(f"{name} {rank} names a rank with no trace (the traces are of ranks 0..{self.ranks - 1})",
                             message.id)
        return rank

    def _text(self, message: Message, attrs: dict[str, Message], name: str) -> str:
        attr = attrs.get(name)
        if attr is None:
            return ""
        if attr.WhichOneof("value") != "string_val":
            raise self.error(f"{name} must be a string attribute, it is {attr.WhichOneof('value') or 'empty'}",
                             message.id)
        return attr.string_val

    def _declare_groups(self, message: Message) -> None:
        """The process groups of a ``process_group:init`` node: ``['[{"pg_name": ..., "ranks": [...]}]']``."""
        text = message.inputs.values.strip()
        if text.startswith("['") and text.endswith("']"):
            text = text[2:-2]  # PyTorch's converter writes the JSON inside a Python list's text
        try:
            declared = json.loads(text)
        except (ValueError, RecursionError):
            declared = None
        if not isinstance(declared, list):
            raise self.error(f"{PROCESS_GROUPS_NODE}: inputs.values is not a list of process groups: "
                             f"{shown(message.inputs.values)}", message.id)
        for entry in declared:
            name, ranks = self._group_entry(message, entry)
            desc = entry.get("pg_desc")
            group = ProcessGroup(ranks or tuple(range(self.ranks)), None if desc is None else str(desc), message.id)
            known = self.groups.get(name)
            if known is not None and known.ranks != group.ranks:
                raise self.error(f"declares process group {name!r} twice, as ranks {list(known.ranks)} (node "
                                 f"{known.node}) and {list(group.ranks)}", message.id)
            self.groups[name] = group

    def _group_entry(self, message: Message, entry: object) -> tuple[str, tuple[int, ...]]:
        if not (isinstance(entry, dict) and isinstance(entry.get("pg_name"), (str, int))
                and isinstance(entry.get("ranks"), list)
                and all(isinstance(r, int) and not isinstance(r, bool) for r in entry["ranks"])):
            raise self.error(f"{PROCESS_GROUPS_NODE}: a process group is {{\"pg_name\": ..., \"ranks\": [...]}}, "
                             f"got {shown(json.dumps(entry))}", message.id)
        name, ranks = str(entry["pg_name"]), tuple(entry["ranks"])
        outside = [r for r in ranks if not 0 <= r < self.ranks]
        if outside:
            raise self.error(f"process group {name!r} has rank {outside[0]}, which has no trace (the traces are of "
                             f"ranks 0..{self.ranks - 1})", message.id)
        if len(set(ranks)) != len(ranks):
            raise self.error(f"process group {name!r} names a rank twice: {list(ranks)}", message.id)
        return name, ranks
