"""The schema the reader builds at run time is chakra.proto as protoc reads it, and trace files frame it alike."""

import pytest

from wormhole_ns3.models.workloads.chakra_schema import StreamError, file_descriptor, frame, framed, messages, varint

from chakra_protoc import compiled_proto, length_prefixed, schema


def test_the_runtime_descriptors_are_what_protoc_makes_of_chakra_proto():
    assert file_descriptor() == compiled_proto()


def test_a_node_written_by_protocs_classes_reads_back_field_for_field():
    written = schema().Node(id=7, name="allreduce", type=schema().node_type["COMM_COLL_NODE"], data_deps=[3, 5],
                            duration_micros=12, attr=[schema().AttributeProto(name="comm_size", uint64_val=2**40)])
    read = messages().Node.FromString(written.SerializeToString())
    assert (read.id, read.name, read.type, read.duration_micros) == (7, "allreduce", 7, 12)
    assert list(read.data_deps) == [3, 5]
    assert read.attr[0].WhichOneof("value") == "uint64_val" and read.attr[0].uint64_val == 2**40


@pytest.mark.parametrize("value", [1, 127, 128, 300, 2**32, 2**64 - 1])
def test_varints_are_protobufs(value):
    assert messages().Node(id=value).SerializeToString() == b"\x08" + varint(value)


def test_a_stream_is_framed_and_unframed_message_by_message():
    nodes = [messages().Node(id=i, name="x" * (100 * i)) for i in range(4)]
    data = frame(nodes)
    assert data == length_prefixed(nodes)
    assert [messages().Node.FromString(body).id for _, body in framed(data)] == [0, 1, 2, 3]
    sizes = [len(node.SerializeToString()) for node in nodes]
    assert [offset for offset, _ in framed(data)] == [0, 1, 1 + 1 + sizes[1], 1 + 1 + sizes[1] + 2 + sizes[2]]


@pytest.mark.parametrize("data, problem", [
    (b"\x05abc", "at byte 0: a message of 5 bytes, but 3 bytes are left"),
    (b"\x00\x80", "at byte 1: a message length that does not end"),
    (b"\xff" * 11, "at byte 0: a message length that does not end"),
])
def test_a_broken_stream_says_where_it_breaks(data, problem):
    with pytest.raises(StreamError, match=f"^{problem}$"):
        list(framed(data))
