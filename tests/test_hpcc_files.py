import pytest

from wormhole_ns3.models.workloads import WorkloadFileError, read_flows, read_topology, write_fct

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
