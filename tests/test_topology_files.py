"""SimAI's topology files and HPCC's shipped files, read as their simulators read them."""

import pytest

from wormhole_ns3.models.fabric import FabricSpecError, HpccTopologyFile
from wormhole_ns3.models.fabric.layout import layout
from wormhole_ns3.models.workloads import WorkloadFileError, read_flows, read_topology

from simai_inputs import rail_topology


def test_a_simai_topology_has_gpus_nvswitches_switches_and_its_rates(tmp_path):
    topology = read_topology(rail_topology(tmp_path / "topo", servers=2, gpus_per_server=4, spines=2))
    assert topology.nodes == 16 and topology.gpus_per_server == 4 and topology.gpu_type == "H100"
    assert topology.hosts == list(range(8))
    assert topology.nvswitches == {8, 9} and topology.switches == set(range(8, 16))
    nvlink = [link for link in topology.links if topology.is_nvlink(link)]
    assert len(nvlink) == 8 and {link.rate_bps for link in nvlink} == {2400e9}
    assert nvlink[0].delay_s == pytest.approx(25e-9)
    assert {link.rate_bps for link in topology.links if not topology.is_nvlink(link)} == {100e9, 400e9}


def test_ranks_are_gpus_in_node_order_and_nvlink_can_be_left_out(tmp_path):
    path = rail_topology(tmp_path / "topo")
    with_nvlink, without = HpccTopologyFile(path), HpccTopologyFile(path, nvlink=False)
    assert with_nvlink.rank(5) == 5 and with_nvlink.gpus_per_server == 4
    tiers = [link.tier for link in layout(with_nvlink).links]
    assert tiers.count("nvlink") == 8 and len(tiers) == 24
    assert [link.tier for link in layout(without).links].count("nvlink") == 0
    assert "nvswitch8" in layout(with_nvlink).switches and "nvswitch8" not in layout(without).switches
    assert without.summary() == ("SimAI topology topo: 8 GPUs (4 per server, H100), NVLink left out "
                                 "(2 NVSwitches), 6 switches, 16 links")


def test_a_gpu_with_only_nvlink_has_no_network_without_nvlink(tmp_path):
    path = tmp_path / "topo"
    path.write_text("3 2 1 0 2 A100\n2\n0 2 2400Gbps 0.000025ms 0\n1 2 2400Gbps 0.000025ms 0\n")
    assert HpccTopologyFile(path).host_count == 2
    with pytest.raises(FabricSpecError) as error:
        HpccTopologyFile(path, nvlink=False)
    assert str(error.value) == f"{path}: host 0 has no link but NVLink (left out without NVLink)"


def test_only_the_counted_items_are_read_as_hpcc_does(tmp_path):
    """HPCC ships its files with help text after the counted items, and a flow count below the lines."""
    path = tmp_path / "topology.txt"
    path.write_text("3 1 2\n2\n0 2 100Gbps 0.001ms 0\n1 2 100Gbps 0.001ms 0\n5 6 7 8 9\n\n"
                    "First line: total node #, switch node #, link #\n")
    assert len(read_topology(path).links) == 2
    flows = tmp_path / "flow.txt"
    flows.write_text("2\n0 1 3 100 1000 2\n1 0 3 100 2000 2\n1 0 3 100 9 2\n\nFirst line: # of flows\n")
    assert [f.size for f in read_flows(flows, read_topology(path))] == [1000, 2000]


@pytest.mark.parametrize("text, line, problem", [
    ("3 2 1 0\n", 1, "header must be HPCC's 'N S L' or SimAI's 'nodes gpus_per_server nvswitches switches "
                     "links gpu_type', got '3 2 1 0'"),
    ("3 0 1 0 2 A100\n2\n", 1, "gpus_per_server must be at least 1, got 0"),
    ("3 2 1 1 2 A100\n2\n", 2, "expected 2 NVSwitch and switch ids, the file ends after 1"),
    ("3 2 1 0 2 A100\n2 1\n", 2, "expected 1 NVSwitch and switch ids, got 2"),
    ("3 2 1 0 2 A100\n2\n0 2 2880Gbps 0.000025ms 0\n", 3, "header says 2 links, file has 1"),
    ("3 2 1 0 1 A100\n2\n0 2 2880Gbs 0.000025ms 0\n", 3, "not a data rate: '2880Gbs' (expected e.g. 100Gbps)"),
    ("3 2 1 0 1 A100\n3\n", 2, "node 3 outside 0..2"),
])
def test_a_malformed_simai_topology_is_one_line_with_file_and_line(tmp_path, text, line, problem):
    path = tmp_path / "topo"
    path.write_text(text)
    with pytest.raises(WorkloadFileError) as error:
        read_topology(path)
    assert str(error.value) == f"{path}:{line}: {problem}"


@pytest.mark.parametrize("reader", [read_topology, read_flows])
def test_a_missing_file_or_a_directory_is_one_line(tmp_path, reader):
    with pytest.raises(WorkloadFileError) as error:
        reader(tmp_path / "absent.txt")
    assert str(error.value) == f"{tmp_path / 'absent.txt'}: No such file or directory"
    with pytest.raises(WorkloadFileError) as error:
        reader(tmp_path)
    assert str(error.value) == f"{tmp_path}: is a directory, not a file"


def test_nvlink_does_not_shorten_the_base_rtt_that_sets_switch_thresholds(tmp_path):
    path = rail_topology(tmp_path / "topo")
    rtt = layout(HpccTopologyFile(path)).base_rtt_s(1500)
    assert rtt == layout(HpccTopologyFile(path, nvlink=False)).base_rtt_s(1500)
    assert rtt == pytest.approx(4 * (2 * 0.5e-6) + 2 * 1500 * 8 / 100e9 + 2 * 1500 * 8 / 400e9)


def test_a_standalone_fct_takes_the_flows_own_path_and_its_slowest_link(tmp_path):
    from wormhole_ns3.models.fabric.standalone import StandaloneFct

    path = rail_topology(tmp_path / "topo")  # NIC 100G, 0.5 us; NVLink 2400G, 25 ns; spines 400G
    with_nvlink = StandaloneFct(layout(HpccTopologyFile(path)), packet_bytes=1000)
    without = StandaloneFct(layout(HpccTopologyFile(path, nvlink=False)), packet_bytes=1000)
    size = 10**6
    over_nvlink = 2 * 2 * 25e-9 + 2 * 8000 / 2400e9 + size * 8 / 2400e9
    over_a_spine = 2 * 4 * 0.5e-6 + 2 * 8000 / 100e9 + 2 * 8000 / 400e9 + size * 8 / 100e9
    same_rail = 2 * 2 * 0.5e-6 + 2 * 8000 / 100e9 + size * 8 / 100e9
    assert with_nvlink.seconds(0, 1, size) == pytest.approx(over_nvlink)
    assert without.seconds(0, 1, size) == pytest.approx(over_a_spine)
    assert with_nvlink.seconds(0, 4, size) == without.seconds(0, 4, size) == pytest.approx(same_rail)
