"""Chakra's execution-trace messages, built at run time, and the length-prefixed stream they are stored in.

The messages are those of ``chakra.proto`` beside this file (wire-compatible
with MLCommons Chakra's schema), described here in Python so that reading a
trace needs only the ``protobuf`` runtime, not protoc or generated code
tied to one protobuf release. ``tests/test_chakra_schema.py`` compiles the
.proto and checks that it says the same as ``file_descriptor()``.

A trace file is a stream of messages, each preceded by its length as a
varint: ``GlobalMetadata`` first, then ``Node`` messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.message import Message

PACKAGE = "wormhole.chakra"

_F = descriptor_pb2.FieldDescriptorProto
#: The scalar types of AttributeProto, in field-number order (3, 5, 7, ...): each has a list form after it.
_SCALARS = (
    ("double", _F.TYPE_DOUBLE), ("float", _F.TYPE_FLOAT), ("int32", _F.TYPE_INT32), ("int64", _F.TYPE_INT64),
    ("uint32", _F.TYPE_UINT32), ("uint64", _F.TYPE_UINT64), ("sint32", _F.TYPE_SINT32), ("sint64", _F.TYPE_SINT64),
    ("fixed32", _F.TYPE_FIXED32), ("fixed64", _F.TYPE_FIXED64), ("sfixed32", _F.TYPE_SFIXED32),
    ("sfixed64", _F.TYPE_SFIXED64), ("bool", _F.TYPE_BOOL), ("string", _F.TYPE_STRING), ("bytes", _F.TYPE_BYTES),
)
NODE_TYPES = ("INVALID_NODE", "METADATA_NODE", "MEM_LOAD_NODE", "MEM_STORE_NODE", "COMP_NODE", "COMM_SEND_NODE",
              "COMM_RECV_NODE", "COMM_COLL_NODE", "STORAGE_NODE", "BATCH_NODE", "CHECKPOINT_NODE")
COLLECTIVE_TYPES = ("ALL_REDUCE", "REDUCE", "ALL_GATHER", "GATHER", "SCATTER", "BROADCAST", "ALL_TO_ALL",
                    "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER")
#: The oneof value fields of AttributeProto that hold one integer (comm_size may be any of them).
INTEGER_VALUES = tuple(f"{name}_val" for name, _ in _SCALARS
                       if name not in ("double", "float", "bool", "string", "bytes"))


def _list_name(scalar: str) -> str:
    return {"uint32": "Uint32", "uint64": "Uint64", "sint32": "Sint32", "sint64": "Sint64",
            "sfixed32": "Sfixed32", "sfixed64": "Sfixed64"}.get(scalar, scalar.capitalize()) + "List"


def _field(name: str, number: int, type_: int, type_name: str = "", repeated: bool = False,
           oneof: int | None = None) -> descriptor_pb2.FieldDescriptorProto:
    field = _F(name=name, number=number, type=type_, json_name=_json_name(name),
               label=_F.LABEL_REPEATED if repeated else _F.LABEL_OPTIONAL)
    if type_name:
        field.type_name = f".{PACKAGE}.{type_name}"
    if oneof is not None:
        field.oneof_index = oneof
    return field


def _json_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """``chakra.proto`` as a descriptor: what protoc would make of it."""
    proto = descriptor_pb2.FileDescriptorProto(name="chakra.proto", package=PACKAGE, syntax="proto3")
    attribute = proto.message_type.add(name="AttributeProto")
    attribute.field.extend([_field("name", 1, _F.TYPE_STRING), _field("doc_string", 2, _F.TYPE_STRING)])
    attribute.oneof_decl.add(name="value")
    for index, (scalar, type_) in enumerate(_SCALARS):
        number = 3 + 2 * index
        attribute.field.append(_field(f"{scalar}_val", number, type_, oneof=0))
        attribute.field.append(_field(f"{scalar}_list", number + 1, _F.TYPE_MESSAGE, _list_name(scalar), oneof=0))
    for scalar, type_ in _SCALARS:
        proto.message_type.add(name=_list_name(scalar)).field.append(_field("values", 1, type_, repeated=True))
    metadata = proto.message_type.add(name="GlobalMetadata")
    metadata.field.extend([_field("version", 1, _F.TYPE_STRING),
                           _field("attr", 2, _F.TYPE_MESSAGE, "AttributeProto", repeated=True)])
    for name, values in (("NodeType", NODE_TYPES), ("CollectiveCommType", COLLECTIVE_TYPES)):
        enum = proto.enum_type.add(name=name)
        for number, value in enumerate(values):
            enum.value.add(name=value, number=number)
    io = proto.message_type.add(name="IOInfo")
    io.field.extend(_field(name, number, _F.TYPE_STRING)
                    for number, name in enumerate(("values", "shapes", "types"), start=1))
    node = proto.message_type.add(name="Node")
    node.field.extend([
        _field("id", 1, _F.TYPE_UINT64), _field("name", 2, _F.TYPE_STRING),
        _field("type", 3, _F.TYPE_ENUM, "NodeType"),
        _field("ctrl_deps", 4, _F.TYPE_UINT64, repeated=True), _field("data_deps", 5, _F.TYPE_UINT64, repeated=True),
        _field("start_time_micros", 6, _F.TYPE_UINT64), _field("duration_micros", 7, _F.TYPE_UINT64),
        _field("inputs", 8, _F.TYPE_MESSAGE, "IOInfo"), _field("outputs", 9, _F.TYPE_MESSAGE, "IOInfo"),
        _field("attr", 10, _F.TYPE_MESSAGE, "AttributeProto", repeated=True),
    ])
    return proto


@dataclass(frozen=True)
class Messages:
    """The message classes of the schema."""

    GlobalMetadata: type[Message]
    Node: type[Message]
    AttributeProto: type[Message]


@cache
def messages() -> Messages:
    """The schema's message classes, from a pool of their own (no clash with a Chakra install's)."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_descriptor())

    def message(name: str) -> type[Message]:
        return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PACKAGE}.{name}"))

    return Messages(message("GlobalMetadata"), message("Node"), message("AttributeProto"))


class StreamError(ValueError):
    """The bytes are not a stream of length-prefixed messages; ``offset`` is where it breaks."""

    def __init__(self, offset: int, problem: str) -> None:
        super().__init__(f"at byte {offset}: {problem}")
        self.offset = offset


#: A varint of a message length has at most this many bytes (64 bits, 7 a byte).
_VARINT_BYTES = 10


def framed(data: bytes) -> Iterator[tuple[int, bytes]]:
    """Each message of a length-prefixed stream, with the offset of its length prefix."""
    offset, end = 0, len(data)
    while offset < end:
        length, shift, position = 0, 0, offset
        while True:
            if position == end or position - offset == _VARINT_BYTES:
                raise StreamError(offset, "a message length that does not end")
            byte = data[position]
            length |= (byte & 0x7F) << shift
            shift += 7
            position += 1
            if byte < 0x80:
                break
        if length > end - position:
            raise StreamError(offset, f"a message of {length:,} bytes, but {end - position:,} bytes are left")
        yield offset, data[position: position + length]
        offset = position + length


def frame(messages_: Iterable[Message]) -> bytes:
    """The messages as a length-prefixed stream, each serialized deterministically (same message, same bytes)."""
    parts = []
    for message in messages_:
        body = message.SerializeToString(deterministic=True)
        parts.append(varint(len(body)) + body)
    return b"".join(parts)


def varint(value: int) -> bytes:
    """``value`` (>= 0) as a protobuf varint."""
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
