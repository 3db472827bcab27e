"""Chakra traces written the independent way: the classes protoc makes of chakra.proto, length prefixes written here.

Nothing here uses the product's schema module or its writer: protoc (from
grpcio-tools) compiles ``chakra.proto`` into a descriptor set, the protobuf
runtime makes message classes of it, and ``write_trace`` frames them with
varints of its own. What the product reads from these files is therefore
what the .proto says, as any other Chakra tool would write it.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import SimpleNamespace

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from grpc_tools import protoc

from conftest import REPO

PROTO = REPO / "wormhole_ns3" / "models" / "workloads" / "chakra.proto"
PACKAGE = "wormhole.chakra"
MB = 1_000_000


@functools.cache
def compiled_proto() -> descriptor_pb2.FileDescriptorProto:
    """``chakra.proto`` as protoc reads it."""
    with tempfile.TemporaryDirectory(prefix="wormhole-chakra-") as folder:
        out = Path(folder) / "chakra.desc"
        assert protoc.main(["protoc", f"-I{PROTO.parent}", f"--descriptor_set_out={out}", PROTO.name]) == 0
        (file,) = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file
    return file


@functools.cache
def schema() -> SimpleNamespace:
    """The message classes and enum numbers of the compiled .proto."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(compiled_proto())

    def enum(name: str) -> dict[str, int]:
        return {value.name: value.number for value in pool.FindEnumTypeByName(f"{PACKAGE}.{name}").values}

    classes = {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))
               for name in ("GlobalMetadata", "Node", "AttributeProto")}
    return SimpleNamespace(**classes, node_type=enum("NodeType"), comm_type=enum("CollectiveCommType"))


def attr(name: str, **value):
    return schema().AttributeProto(name=name, **value)


def node(id: int, type_: str, deps: Iterable[int] = (), micros: int = 0, attrs: Sequence = (), name: str = ""):
    return schema().Node(id=id, name=name or type_.lower(), type=schema().node_type[type_], data_deps=list(deps),
                         duration_micros=micros, attr=list(attrs))


def comp(id: int, micros: int, deps: Iterable[int] = ()):
    return node(id, "COMP_NODE", deps, micros, [attr("is_cpu_op", bool_val=False)])


def send(id: int, src: int, dst: int, size: int, deps: Iterable[int] = (), tag: int = 0):
    return node(id, "COMM_SEND_NODE", deps, attrs=[attr("comm_src", int32_val=src), attr("comm_dst", int32_val=dst),
                                                   attr("comm_size", int64_val=size), attr("comm_tag", int32_val=tag)])


def recv(id: int, src: int, dst: int, size: int, deps: Iterable[int] = (), tag: int = 0):
    return node(id, "COMM_RECV_NODE", deps, attrs=[attr("comm_src", int32_val=src), attr("comm_dst", int32_val=dst),
                                                   attr("comm_size", int64_val=size), attr("comm_tag", int32_val=tag)])


def coll(id: int, comm_type: str, size: int, pg: str = "", deps: Iterable[int] = (), root: int | None = None):
    attrs = [attr("comm_type", int64_val=schema().comm_type[comm_type]), attr("comm_size", int64_val=size)]
    if pg:
        attrs.append(attr("pg_name", string_val=pg))
    if root is not None:
        attrs.append(attr("comm_src", int32_val=root))
    return node(id, "COMM_COLL_NODE", deps, attrs=attrs)


def process_groups(id: int, groups: dict[str, list[int]]):
    """PyTorch's declaration of process groups: JSON inside a Python list's text, as its converter writes it."""
    entries = ", ".join(f'{{"pg_name": "{name}", "ranks": {ranks}}}' for name, ranks in groups.items())
    declared = node(id, "METADATA_NODE", name="## process_group:init ##")
    declared.inputs.values = f"['[{entries}]']"
    return declared


def varint(value: int) -> bytes:
    out = b""
    while True:
        low, value = value & 0x7F, value >> 7
        out += bytes([low | (0x80 if value else 0)])
        if not value:
            return out


def length_prefixed(messages: Iterable) -> bytes:
    return b"".join(varint(len(body)) + body for body in (message.SerializeToString() for message in messages))


def write_trace(prefix: Path, ranks: Sequence[Sequence], gpus_per_server: int | None = None) -> Path:
    """``ranks[r]``'s nodes as ``<prefix>.<r>.et``, each after a GlobalMetadata; returns the prefix."""
    metadata = schema().GlobalMetadata(version="0.0.4")
    if gpus_per_server is not None:
        metadata.attr.append(attr("gpus_per_server", int64_val=gpus_per_server))
    for rank, nodes in enumerate(ranks):
        (prefix.parent / f"{prefix.name}.{rank}.et").write_bytes(length_prefixed([metadata, *nodes]))
    return prefix


def ranks():
    """A valid trace, each rank's nodes in file order: 4 ranks, 2 GPUs per server.

    Every rank computes 100 us, then all-reduces 4 MB with its DP peer
    (process groups "1" = ranks 0, 2 and "2" = ranks 1, 3, declared as PyTorch
    does); ranks 0 and 1 then send 1 MB to ranks 2 and 3; all four all-to-all
    2 MB (group "7", declared nowhere: the ranks that use it); a barrier of
    every rank ends the iteration.
    """
    traces = []
    for rank in range(4):
        nodes = [process_groups(0, {"1": [0, 2], "2": [1, 3]}), comp(1, 100),
                 coll(2, "ALL_REDUCE", 4 * MB, "1" if rank % 2 == 0 else "2", deps=[1])]
        nodes.append(send(3, rank, rank + 2, MB, deps=[2]) if rank < 2 else recv(3, rank - 2, rank, MB))
        nodes += [coll(4, "ALL_TO_ALL", 2 * MB, "7", deps=[3]), coll(5, "BARRIER", 0, "0", deps=[4])]
        traces.append(nodes)
    return traces
