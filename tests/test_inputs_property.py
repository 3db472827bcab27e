"""Property tests of the input readers: any bytes either parse or give the product's one-line ``file:line:`` error.

Arbitrary bytes, and valid files mutated the way real files go wrong (a
field replaced by '²', 5,000 digits, NaN, a negative size; bytes that are
not UTF-8; a line dropped, repeated or cut), must never escape as a bare
Python exception (UnicodeDecodeError, ValueError, IndexError ...).
"""

import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wormhole_ns3.models.workloads import WorkloadFileError, read_flows, read_simai_workload, read_topology

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DATA = Path(__file__).parent / "data"

TOPOLOGY = b"4 1 3\n3\n0 3 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 3 400Gbps 1us 0\n"
FLOWS = b"2\n0 1 3 100 200000000 2\n1 2 3 101 1000 2.5\n"
SIMAI = (DATA / "simai_workload_ep_test.txt").read_bytes()

#: Fields that are wrong in the ways files really are: not ASCII digits, too long, not finite, negative, huge.
BAD_FIELDS = [
    b"\xc2\xb2", b"9" * 5000, b"-" + b"9" * 5000, b"nan", b"inf", b"1e999", b"-1", b"-0", b"0", b"1e-999",
    b"\xff", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"1_000", b"0x10", b"\xd9\xa1\xd9\xa2", b"#", b"100Gbps",
    b"1..2ms", b"1e400Gbps", b"99999999999999999999", b"", b"\x00", b"\r", b"\x0b", b"\xe2\x80\xa8",
]


@st.composite
def mutated(draw, valid: bytes) -> bytes:
    """``valid`` after a few edits: fields replaced, bytes inserted or deleted, lines dropped or repeated."""
    lines = valid.split(b"\n")
    for _ in range(draw(st.integers(1, 4))):
        index = draw(st.integers(0, len(lines) - 1))
        fields = lines[index].split()
        edit = draw(st.sampled_from(["field", "insert", "delete", "drop", "repeat"]))
        if edit == "field" and fields:
            position = draw(st.integers(0, len(fields) - 1))
            fields[position] = draw(st.sampled_from(BAD_FIELDS) | st.binary(max_size=8))
            lines[index] = b" ".join(fields)
        elif edit == "insert":
            cut = draw(st.integers(0, len(lines[index])))
            lines[index] = lines[index][:cut] + draw(st.binary(min_size=1, max_size=4)) + lines[index][cut:]
        elif edit == "delete" and lines[index]:
            cut = draw(st.integers(0, len(lines[index]) - 1))
            lines[index] = lines[index][:cut] + lines[index][cut + draw(st.integers(1, 4)):]
        elif edit == "drop" and len(lines) > 1:
            del lines[index]
        elif edit == "repeat":
            lines.insert(index, lines[index])
    return b"\n".join(lines)


@pytest.fixture(scope="module")
def folder():
    with tempfile.TemporaryDirectory(prefix="wormhole-inputs-") as name:
        yield Path(name)


def check_reader(reader, path: Path, content: bytes) -> None:
    """``reader(path)`` returns, or raises WorkloadFileError whose message is ``<path>:<line>: ...`` on one line."""
    path.write_bytes(content)
    try:
        reader(path)
    except WorkloadFileError as error:
        message = str(error)
        assert message.startswith(f"{path}:"), message
        assert re.match(r"\d+: \S", message[len(f"{path}:"):]), message
        assert "\n" not in message and "\r" not in message, message


def read_flows_on_topology(path: Path):
    return read_flows(path, read_topology_cached())


_topology = []


def read_topology_cached():
    if not _topology:
        with tempfile.TemporaryDirectory() as name:
            (Path(name) / "topology.txt").write_bytes(TOPOLOGY)
            _topology.append(read_topology(Path(name) / "topology.txt"))
    return _topology[0]


READERS = {"simai": read_simai_workload, "topology": read_topology, "flows": read_flows,
           "flows-on-topology": read_flows_on_topology}
VALID = {"simai": SIMAI, "topology": TOPOLOGY, "flows": FLOWS, "flows-on-topology": FLOWS}


@pytest.mark.parametrize("name", READERS)
def test_the_valid_files_parse(folder, name):
    (folder / name).write_bytes(VALID[name])
    READERS[name](folder / name)


@pytest.mark.parametrize("name", READERS)
@SETTINGS
@given(content=st.binary(max_size=300))
def test_arbitrary_bytes_parse_or_give_a_one_line_file_error(folder, name, content):
    check_reader(READERS[name], folder / name, content)


@pytest.mark.parametrize("name", READERS)
@SETTINGS
@given(data=st.data())
def test_mutated_valid_files_parse_or_give_a_one_line_file_error(folder, name, data):
    check_reader(READERS[name], folder / name, data.draw(mutated(VALID[name])))


@pytest.mark.parametrize("name", READERS)
@pytest.mark.parametrize("bad", BAD_FIELDS, ids=range(len(BAD_FIELDS)))
def test_every_field_replaced_by_a_bad_one_gives_a_one_line_file_error_or_parses(folder, name, bad):
    """Exhaustive over fields (the property tests sample them): each field of the valid file, replaced."""
    lines = VALID[name].split(b"\n")[:6]  # the headers and the first layers are every kind of field
    for index, line in enumerate(lines):
        for position in range(len(line.split())):
            fields = line.split()
            fields[position] = bad
            edited = [*lines[:index], b" ".join(fields), *lines[index + 1:]]
            check_reader(READERS[name], folder / name, b"\n".join(edited) + b"\n")
