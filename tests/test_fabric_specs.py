"""Fabric specs and layouts, without ns-3: shapes, rank placement, thresholds, bad input."""

from collections import Counter

import pytest

from wormhole_ns3.models.fabric import (
    FabricSpecError,
    FatTree,
    HpccTopologyFile,
    LeafSpine,
    QueueConfig,
    RailOptimized,
    RoutingConfig,
    TransportConfig,
    dctcp_threshold_packets,
    layout,
)


def degree(plan):
    return Counter(n for link in plan.links for n in (link.a, link.b))


def test_rail_optimized_128_gpus_has_one_leaf_per_rail_and_non_blocking_spines():
    spec = RailOptimized(servers=16)
    plan = layout(spec)
    assert (len(plan.hosts), len(plan.switches), len(plan.links)) == (128, 8 + 16, 128 + 8 * 16)
    tiers = Counter(link.tier for link in plan.links)
    assert tiers == {"host-leaf": 128, "leaf-spine": 128}
    assert {link.rate_bps for link in plan.links} == {100_000_000_000}
    assert all(degree(plan)[f"rail{r}-leaf0"] == 16 + 16 for r in range(8))


def test_rail_optimized_puts_rank_r_on_rail_r_mod_8_with_several_leaves_per_rail():
    spec = RailOptimized(servers=64, leaf_downlinks=16)
    plan = layout(spec)
    assert spec.leaves_per_rail == 4 and spec.hosts_per_leaf == 16
    leaf_of = {link.a: link.b for link in plan.links if link.tier == "host-leaf"}
    for rank, host in enumerate(plan.hosts):
        rail, leaf = leaf_of[host].split("-")
        assert rail == f"rail{rank % 8}"
        assert leaf == f"leaf{(rank // 8) // 16}"
    assert Counter(leaf_of.values()) == {leaf: 16 for leaf in set(leaf_of.values())}
    assert len(set(leaf_of.values())) == 32


def test_oversubscription_lowers_uplink_capacity():
    # 16 hosts per leaf at 100 Gbps, 3:1 over 4 spines: 1600/3/4 = 133.3 Gbps per uplink
    spec = LeafSpine(leaves=2, hosts_per_leaf=16, spines=4, oversubscription=3)
    uplinks = {link.rate_bps for link in layout(spec).links if link.tier == "leaf-spine"}
    assert uplinks == {133_333_333_333}
    # no spine count: uplinks at the host rate, 16 / 2 = 8 spines
    assert LeafSpine(leaves=2, hosts_per_leaf=16, oversubscription=2).uplinks == (8, 100.0)
    assert RailOptimized(servers=32, rate_gbps=400, spines=8).uplinks == (8, 1600.0)


def test_fat_tree_k4_has_textbook_counts_and_fewer_hosts_fill_pods_in_order():
    plan = layout(FatTree(k=4))
    assert (len(plan.hosts), len(plan.switches), len(plan.links)) == (16, 20, 48)
    assert Counter(link.tier for link in plan.links) == {"host-edge": 16, "edge-agg": 16,
                                                         "agg-core": 16}
    assert all(degree(plan)[f"core{c}"] == 4 for c in range(4))  # one link per pod
    small = layout(FatTree(k=8, hosts=20))
    assert (len(small.hosts), len(small.switches)) == (20, 80)
    edges = [link.b for link in small.links if link.tier == "host-edge"]
    assert edges[:5] == ["pod0-edge0"] * 4 + ["pod0-edge1"]
    assert edges[-1] == "pod1-edge0"  # host 19 = 16 + 3: pod 1, edge 0


def test_base_rtt_counts_every_hop_twice_plus_one_transmission():
    # 2 tiers: 4 links each way; each adds 2 x 1 us + 1500 B at 100 Gbps (0.12 us)
    assert layout(LeafSpine(leaves=2, hosts_per_leaf=2)).base_rtt_s(1500) == pytest.approx(
        4 * (2e-6 + 0.12e-6))
    # 3 tiers: 6 links
    assert layout(FatTree(k=4)).base_rtt_s(1500) == pytest.approx(6 * 2.12e-6)
    # one leaf: host-leaf-host
    assert layout(LeafSpine(leaves=1, hosts_per_leaf=2)).base_rtt_s(1500) == pytest.approx(
        2 * 2.12e-6)


def test_dctcp_threshold_scales_with_link_rate():
    rtt = 4 * 2.12e-6
    assert dctcp_threshold_packets(100e9, rtt, 1500) == 11  # 100e9 * 8.48e-6 / 7 / 12000 = 10.1
    assert dctcp_threshold_packets(200e9, rtt, 1500) == 21
    assert dctcp_threshold_packets(400e9, rtt, 1500) == 41
    assert dctcp_threshold_packets(10e9, 100e-6, 1500) == 12
    assert QueueConfig(ecn_threshold_packets=65).threshold_packets(100e9, rtt, 1500) == 65
    assert QueueConfig(design_rtt_us=100).threshold_packets(10e9, rtt, 1500) == 12


HPCC = """\
5 2 4
3 4
0 3 100Gbps 0.001ms 0
1 3 100Gbps 0.001ms 0
3 4 400Gbps 0.002ms 0
2 4 200Gbps 0.001ms 0.01
"""


def test_hpcc_topology_file_keeps_rates_delays_and_losses(tmp_path):
    path = tmp_path / "topo.txt"
    path.write_text(HPCC)
    spec = HpccTopologyFile(path)
    plan = layout(spec)
    assert plan.hosts == ("host0", "host1", "host2") and plan.switches == ("switch3", "switch4")
    assert [(link.a, link.b, link.rate_bps, link.tier) for link in plan.links] == [
        ("host0", "switch3", 100e9, "host-switch"),
        ("host1", "switch3", 100e9, "host-switch"),
        ("switch3", "switch4", 400e9, "switch-switch"),
        ("host2", "switch4", 200e9, "host-switch"),
    ]
    assert plan.links[2].delay_s == pytest.approx(2e-6)
    assert plan.links[3].error_rate == 0.01
    assert spec.rank(2) == 2 and spec.host_count == 3


@pytest.mark.parametrize("make, message", [
    (lambda: RailOptimized(servers=0), "servers must be at least 1, got 0"),
    (lambda: RailOptimized(servers=33, leaf_downlinks=32),
     "33 servers do not split evenly over 2 leaves per rail (32 downlinks each)"),
    (lambda: RailOptimized(servers=16, oversubscription=3),
     "16 hosts per leaf / oversubscription 3 is not a whole number of spines: give spines "
     "explicitly"),
    (lambda: RailOptimized(servers=16, rate_gbps=0), "rate_gbps must be positive, got 0"),
    (lambda: LeafSpine(leaves=2, hosts_per_leaf=4, spines=0), "spines must be at least 1, got 0"),
    (lambda: LeafSpine(leaves=2, hosts_per_leaf=4, oversubscription=-1),
     "oversubscription must be positive, got -1"),
    (lambda: LeafSpine(leaves=2, hosts_per_leaf=4, delay_us=-1),
     "delay_us must not be negative, got -1"),
    (lambda: FatTree(k=5), "k must be even and at least 2, got 5"),
    (lambda: FatTree(k=4, hosts=17), "hosts must be between 1 and k^3/4 = 16, got 17"),
    (lambda: HpccTopologyFile("/nonexistent/topo.txt"),
     "/nonexistent/topo.txt: No such file or directory"),
    (lambda: QueueConfig(ecn_threshold_packets=2000),
     "ecn_threshold_packets must be between 1 and switch_buffer_packets (1000), got 2000"),
    (lambda: QueueConfig(device_queue_packets=0), "device_queue_packets must be at least 1, got 0"),
    (lambda: TransportConfig(congestion_control="vegas"),
     "congestion_control must be one of dctcp, newreno, cubic or an ns-3 TCP TypeId name like "
     "TcpBbr, got 'vegas'"),
    (lambda: TransportConfig(ecn=False), "DCTCP needs ECN: ecn=False is not allowed with dctcp"),
    (lambda: TransportConfig(segment_bytes=0), "segment_bytes must be at least 1, got 0"),
    (lambda: RoutingConfig(kind="ospf"),
     "routing kind must be one of flow-hash-ecmp, global, random-ecmp, got 'ospf'"),
])
def test_bad_specs_fail_with_one_clear_line(make, message):
    with pytest.raises(FabricSpecError) as error:
        make()
    assert str(error.value) == message


@pytest.mark.parametrize("text, message", [
    ("3 1 1\n2\n0 2 100Gbps 1us 0\n", "host 1 has no link"),
    ("3 1 2\n2\n0 2 100Gbps 1us 0\n1 1 100Gbps 1us 0\n", "node 1 is linked to itself"),
    ("2 1 1\n1\n0 1 100Gbps 1us 1.5\n", "link 0-1 error rate 1.5 is not in [0, 1)"),
    ("2 2 1\n0 1\n0 1 100Gbps 1us 0\n", "every node is a switch, there is no host"),
])
def test_bad_hpcc_topology_names_the_file_and_the_problem(tmp_path, text, message):
    path = tmp_path / "topo.txt"
    path.write_text(text)
    with pytest.raises(FabricSpecError) as error:
        HpccTopologyFile(path)
    assert str(error.value) == f"{path}: {message}"


def test_malformed_hpcc_file_reports_file_and_line(tmp_path):
    path = tmp_path / "topo.txt"
    path.write_text("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 fast 1us 0\n")
    with pytest.raises(ValueError, match=rf"^{path}:4: not a data rate: 'fast'"):
        HpccTopologyFile(path)
