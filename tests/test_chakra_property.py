"""Property tests of the Chakra reader: any trace either becomes a task graph or one ``<file>: rank R, node N:`` line.

Arbitrary bytes as a rank's file, valid traces with bytes flipped, cut or
inserted, and traces made of random nodes (any type, id, dependencies,
duration, attributes of any kind and value, process-group declarations of
any text), written with protoc's classes of chakra.proto, must never escape
as a bare Python exception.
"""

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wormhole_ns3.models.workloads import ChakraTraceError, chakra_to_workload, read_chakra_trace

from chakra_protoc import attr, node, ranks, schema, write_trace

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
COMM_ATTRIBUTES = ("comm_type", "comm_size", "comm_src", "comm_dst", "comm_tag", "pg_name", "is_cpu_op", "phase",
                   "duration_seconds")
#: Values of every kind an attribute can hold, at the edges of their ranges.
VALUES = st.one_of(
    st.builds(dict, int32_val=st.integers(-(2**31), 2**31 - 1)),
    st.builds(dict, int64_val=st.integers(-(2**63), 2**63 - 1) | st.integers(-2, 12)),
    st.builds(dict, uint64_val=st.integers(0, 2**64 - 1)),
    st.builds(dict, double_val=st.floats(allow_nan=True, allow_infinity=True)),
    st.builds(dict, string_val=st.text(max_size=6) | st.sampled_from(["0", "1", "2", "", "\n"])),
    st.builds(dict, bool_val=st.booleans()),
)
DECLARATIONS = st.one_of(
    st.text(max_size=30),
    st.lists(st.fixed_dictionaries({"pg_name": st.sampled_from(["0", "1", "2", 3]),
                                    "ranks": st.lists(st.integers(-1, 5), max_size=4)}), max_size=3).map(
        lambda groups: "['" + str(groups).replace("'", '"') + "']"),
)


@st.composite
def random_node(draw):
    type_ = draw(st.integers(0, 12))
    attrs = [attr(name, **draw(VALUES)) for name in draw(st.lists(st.sampled_from(COMM_ATTRIBUTES), max_size=6))]
    made = schema().Node(id=draw(st.integers(0, 6)), type=type_, data_deps=draw(st.lists(st.integers(0, 6),
                                                                                          max_size=3)),
                         ctrl_deps=draw(st.lists(st.integers(0, 9), max_size=2)),
                         duration_micros=draw(st.integers(0, 2**64 - 1) | st.integers(0, 200)), attr=attrs)
    if type_ == schema().node_type["METADATA_NODE"] and draw(st.booleans()):
        made.name = "process_group:init"
        made.inputs.values = draw(DECLARATIONS)
    return made


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory(prefix="wormhole-chakra-") as name:
        yield Path(name)


def check_trace(folder: Path) -> None:
    """The trace ``folder/w`` builds, or its error is one line naming one of its files (or the prefix)."""
    try:
        chakra_to_workload(read_chakra_trace(folder / "w"))
    except ChakraTraceError as error:
        message = str(error)
        assert re.match(rf"{re.escape(str(folder))}/w(\.\d+\.et)?: \S", message), message
        assert "\n" not in message and "\r" not in message, message


def fresh(folder: Path) -> None:
    for path in folder.glob("w.*.et"):
        path.unlink()


def test_the_valid_trace_builds(folder):
    fresh(folder)
    write_trace(folder / "w", ranks(), gpus_per_server=2)
    assert len(chakra_to_workload(read_chakra_trace(folder / "w")).flows) == 22


@SETTINGS
@given(content=st.binary(max_size=300), rank=st.integers(0, 3))
def test_arbitrary_bytes_as_a_rank_s_file_build_or_give_one_line(folder, content, rank):
    fresh(folder)
    write_trace(folder / "w", ranks(), gpus_per_server=2)
    (folder / f"w.{rank}.et").write_bytes(content)
    check_trace(folder)


@SETTINGS
@given(data=st.data(), rank=st.integers(0, 3))
def test_a_valid_trace_with_bytes_flipped_cut_or_inserted_builds_or_gives_one_line(folder, data, rank):
    fresh(folder)
    write_trace(folder / "w", ranks(), gpus_per_server=2)
    path = folder / f"w.{rank}.et"
    content = bytearray(path.read_bytes())
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(content)))
        edit = data.draw(st.sampled_from(["flip", "cut", "insert"]))
        if edit == "flip" and at < len(content):
            content[at] ^= data.draw(st.integers(1, 255))
        elif edit == "cut":
            del content[at: at + data.draw(st.integers(1, 8))]
        else:
            content[at:at] = data.draw(st.binary(min_size=1, max_size=4))
    path.write_bytes(bytes(content))
    check_trace(folder)


@SETTINGS
@given(traces=st.lists(st.lists(random_node(), max_size=6), min_size=1, max_size=4))
def test_traces_of_random_nodes_build_or_give_one_line(folder, traces):
    fresh(folder)
    write_trace(folder / "w", traces)
    check_trace(folder)


@SETTINGS
@given(nodes=st.lists(st.sampled_from([
    node(1, "COMP_NODE", micros=5), node(2, "COMM_COLL_NODE", [1], attrs=[
        attr("comm_type", int64_val=0), attr("comm_size", int64_val=1000)]),
    node(3, "COMM_SEND_NODE", [2], attrs=[attr("comm_dst", int32_val=1), attr("comm_size", int64_val=10)]),
    node(3, "COMM_RECV_NODE", [2], attrs=[attr("comm_src", int32_val=0), attr("comm_size", int64_val=10)]),
    node(4, "COMM_COLL_NODE", [3], attrs=[attr("comm_type", int64_val=9)]),
]), max_size=8), split=st.integers(0, 8))
def test_well_formed_nodes_in_any_order_and_number_build_or_give_one_line(folder, nodes, split):
    """Matching and ordering: sends without receives, collectives some ranks lack, cycles across ranks."""
    fresh(folder)
    write_trace(folder / "w", [nodes[:split], nodes[split:]], gpus_per_server=1)
    check_trace(folder)


def test_the_random_node_strategy_reaches_every_kind_of_problem(folder):
    """Not a test of the reader: the fuzzing above is worth something only if its traces go wrong in many ways."""
    seen: set[str] = set()

    @settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(traces=st.lists(st.lists(random_node(), max_size=6), min_size=1, max_size=4))
    def collect(traces):
        fresh(folder)
        write_trace(folder / "w", traces)
        try:
            chakra_to_workload(read_chakra_trace(folder / "w"))
            seen.add("built")
        except ChakraTraceError as error:
            seen.add(re.sub(r"[0-9,]+|'[^']*'", "#", str(error).split(": ", 2)[-1])[:25])

    collect()
    assert "built" in seen and len(seen) >= 10, seen
