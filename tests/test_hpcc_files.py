
import pytest

from wormhole_ns3.models.workloads import (
    WorkloadBuilder,
    WorkloadFileError,
    fct_dport,
    hpcc_flows_to_workload,
    read_flows,
    read_topology,
    write_fct,
)
from wormhole_ns3.models.workloads.topology import HpccTopology

TOPOLOGY = """\
4 1 3
3
0 3 100Gbps 0.001ms 0
1 3 100Gbps 0.001ms 0
2 3 400Gbps 1us 0
"""


@pytest.fixture
def topology_file(tmp_path):
    path = tmp_path / "topology.txt"
    path.write_text(TOPOLOGY)
    return path


def test_topology_is_read_with_units(topology_file):
    topo = read_topology(topology_file)
    assert topo.nodes == 4 and topo.switches == {3} and topo.hosts == [0, 1, 2]
    assert topo.links[0].rate_bps == 100e9
    assert topo.links[0].delay_s == pytest.approx(1e-6)
    assert topo.links[2].rate_bps == 400e9


def test_flows_are_read_and_checked_against_the_topology(tmp_path, topology_file):
    flows = tmp_path / "flow.txt"
    flows.write_text("2\n0 1 3 100 200000000 2\n1 2 3 101 1000 2.5\n")
    read = read_flows(flows, read_topology(topology_file))
    assert [(f.src, f.dst, f.dport, f.size, f.start_s) for f in read] == [
        (0, 1, 100, 200000000, 2.0),
        (1, 2, 101, 1000, 2.5),
    ]


@pytest.mark.parametrize(
    "text, line, problem",
    [
        ("2\n0 1 3 100 1000 2\n", 2, "first line says 2 flows, file has 1"),
        ("1\n0 1 3 100 big 2\n", 2, "size must be an integer, got 'big'"),
        ("1\n0 3 3 100 1000 2\n", 2, "node 3 is not a host of the topology"),
        ("1\n0 1 3 100 1000\n", 2, "a flow is 'src dst priority dport size start'"),
    ],
)
def test_a_malformed_flow_file_names_file_line_and_problem(tmp_path, topology_file, text, line, problem):
    flows = tmp_path / "flow.txt"
    flows.write_text(text)
    with pytest.raises(WorkloadFileError) as error:
        read_flows(flows, read_topology(topology_file))
    assert str(error.value) == f"{flows}:{line}: {problem}"


def test_a_malformed_topology_names_the_bad_line(tmp_path):
    path = tmp_path / "topology.txt"
    path.write_text("4 1 1\n3\n0 3 fast 0.001ms 0\n")
    with pytest.raises(WorkloadFileError, match=r"topology.txt:3: not a data rate: 'fast'"):
        read_topology(path)


def test_fct_file_is_written_the_way_hpcc_analysis_reads_it(tmp_path):
    rows = [
        {"src": "10.0.0.1", "dst": "10.0.1.1", "sport": 49153, "dport": 100, "bytes": 1000,
         "start": 2.0, "fct": 0.000012345},
        {"src": "10.0.0.2", "dst": "10.0.1.1", "sport": 49154, "dport": 101, "bytes": 5,
         "start": 2.0, "fct": None},
    ]
    write_fct(rows, tmp_path / "fct.txt")
    assert (tmp_path / "fct.txt").read_text() == "0a000001 0a000101 49153 100 1000 2000000000 12345 0\n"


def test_fct_dports_are_the_ones_hpccs_analysis_selects_flows_by(tmp_path):
    """fct_analysis.py keeps the lines whose 4th column is 100 (-t 0) or 200 (-t 1): a fabric port matches neither."""
    path = tmp_path / "flow.txt"
    path.write_text("2\n0 1 3 100 1000 2\n1 0 3 200 1000 2\n")
    hpcc = hpcc_flows_to_workload(read_flows(path))
    assert [fct_dport(hpcc.metadata, flow.id) for flow in hpcc.flows] == [100, 200]
    builder = WorkloadBuilder("preset", ranks=2)
    flows = [builder.add_flow(0, 1, 1000), builder.add_flow(1, 0, 1000)]
    builder.end_iteration(flows)
    preset = builder.build()
    assert [fct_dport(preset.metadata, flow.id) for flow in preset.flows] == [100, 100]


@pytest.mark.parametrize(
    "content, line, problem",
    [
        (b"1\n0 1 3 100 1000 \xff2\n", 2, "not UTF-8 text (byte 0xff)"),
        ("1\n0 1 3 100 1000\u00b2 2\n".encode(), 2, "size must be an integer, got '1000²'"),
        (b"1\n0 1 3 100 " + b"9" * 5000 + b" 2\n", 2,
         f"size must be an integer, got {'9' * 40!r}... (5000 characters)"),
        (b"1\n0 1 3 100 1000 nan\n", 2, "start must be seconds, got 'nan'"),
        (b"1\n0 1 3 100 1000 1e999\n", 2, "start must be seconds, got '1e999'"),
        (b"1\n0 1 3 100 -5 2\n", 2, "size must be positive and start not negative"),
        (b"1\n0 1 3 70000 1000 2\n", 2, "dport must be at most 65535, got 70000"),
        (b"-1\n", 1, "the flow count must not be negative, got -1"),
    ],
)
def test_bad_numbers_and_bytes_in_a_flow_file_are_file_errors(tmp_path, content, line, problem):
    flows = tmp_path / "flow.txt"
    flows.write_bytes(content)
    with pytest.raises(WorkloadFileError) as error:
        read_flows(flows)
    assert str(error.value) == f"{flows}:{line}: {problem}"


@pytest.mark.parametrize(
    "content, line, problem",
    [
        (b"4 1 3\n3\n0 3 100Gbps 0.001ms 0\r\n1 3 1\xc300Gbps 0.001ms 0\n", 4, "not UTF-8 text (byte 0xc3)"),
        (b"-4 1 0\n3\n", 1, "N must not be negative, got -4"),
        (b"4 1 0\n7\n", 2, "node 7 outside 0..3"),
        (b"4 1 1\n3\n0 3 1e999Gbps 0.001ms 0\n", 3, "not a data rate: '1e999Gbps' (expected e.g. 100Gbps)"),
        (b"4 1 1\n3\n0 3 100Gbps 1..2ms 0\n", 3, "not a time: '1..2ms' (expected e.g. 0.001ms)"),
        (b"4 1 1\n3\n0 3 100Gbps 1ms nan\n", 3, "error_rate must be a number, got 'nan'"),
        ("4 1 1\n\u00b3\n".encode(), 2, "a switch id must be an integer, got '³'"),
    ],
)
def test_bad_numbers_and_bytes_in_a_topology_are_file_errors(tmp_path, content, line, problem):
    path = tmp_path / "topology.txt"
    path.write_bytes(content)
    with pytest.raises(WorkloadFileError) as error:
        read_topology(path)
    assert str(error.value) == f"{path}:{line}: {problem}"


def test_a_utf8_file_with_a_byte_order_mark_reads_as_without(tmp_path, topology_file):
    marked = tmp_path / "marked.txt"
    marked.write_bytes(b"\xef\xbb\xbf" + topology_file.read_bytes())
    assert read_topology(marked) == read_topology(topology_file)


class _NoHostList(HpccTopology):
    @property
    def hosts(self) -> list[int]:
        raise AssertionError("the reader listed every host of the topology")


def test_flows_are_checked_against_a_huge_topology_without_listing_its_hosts(tmp_path):
    """10^7 declared nodes and 100 flows: each flow's ends are checked in O(1) (listing the hosts took 115 s)."""
    topology = _NoHostList(10**7, frozenset({5, 10**7 - 1}), ())
    flows = tmp_path / "flow.txt"
    flows.write_text("100\n" + "".join(f"{i} {10**7 - 2 - i} 3 100 1000 0\n" for i in range(100, 200)))
    read = read_flows(flows, topology)
    assert [(f.src, f.dst) for f in read] == [(i, 10**7 - 2 - i) for i in range(100, 200)]
    flows.write_text("1\n0 5 3 100 1000 0\n")
    with pytest.raises(WorkloadFileError, match=r":2: node 5 is not a host of the topology$"):
        read_flows(flows, topology)
    flows.write_text(f"1\n0 {10**7} 3 100 1000 0\n")
    with pytest.raises(WorkloadFileError, match=r":2: node 10000000 is not a host of the topology$"):
        read_flows(flows, topology)


def test_is_host_agrees_with_hosts(topology_file):
    topology = read_topology(topology_file)
    assert [n for n in range(-2, topology.nodes + 2) if topology.is_host(n)] == topology.hosts
