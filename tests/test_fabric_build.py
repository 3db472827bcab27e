"""Fabrics built in ns-3: node and link counts, rank placement, routes, queues, transport."""

from collections import Counter

import pytest

from wormhole_ns3.models.fabric import (
    FatTree,
    HpccTopologyFile,
    LeafSpine,
    QueueConfig,
    RailOptimized,
    TransportConfig,
    build_fabric,
    flow_path,
)

from fabric_support import TCP


def device_counts(ns, fabric):
    """Point-to-point devices per node name, read back from ns-3 (loopback excluded)."""
    return {fabric.name_of(node): node.GetNDevices() - 1 for node in fabric.hosts + fabric.switches}


@pytest.mark.parametrize("spec, nodes, links", [
    (RailOptimized(servers=4, leaf_downlinks=2), 32 + 16 + 2, 32 + 16 * 2),
    (LeafSpine(leaves=3, hosts_per_leaf=4, spines=2), 12 + 5, 12 + 6),
    (FatTree(k=4), 16 + 20, 48),
])
def test_ns3_holds_the_nodes_and_links_of_the_spec(ns, spec, nodes, links):
    fabric = build_fabric(ns, spec)
    assert ns.NodeList.GetNNodes() == nodes
    assert ns.ChannelList.GetNChannels() == links == len(fabric.links)
    expected = Counter(n for link in fabric.links for n in (link.a, link.b))
    assert device_counts(ns, fabric) == expected
    assert len(fabric.ports) == 2 * links


def test_rank_r_sits_on_a_leaf_of_rail_r_mod_8(ns):
    fabric = build_fabric(ns, RailOptimized(servers=6, leaf_downlinks=3))
    for rank, host in enumerate(fabric.hosts):
        leaf = fabric.name_of(fabric.peer_node(host.GetDevice(1)))
        assert leaf == f"rail{rank % 8}-leaf{rank // 8 // 3}"


def all_paths(ns, fabric):
    n = len(fabric.hosts)
    return {(s, d): flow_path(ns, fabric, s, d, TCP, 10_000 + s, 20_000 + d)
            for s in range(n) for d in range(n) if s != d}


def test_every_host_pair_of_a_rail_fabric_is_routed_on_a_shortest_path(ns):
    fabric = build_fabric(ns, RailOptimized(servers=4, leaf_downlinks=2))
    lengths = Counter()
    for (s, d), path in all_paths(ns, fabric).items():
        assert path[0] == f"host{s}" and path[-1] == f"host{d}"
        same_leaf = s % 8 == d % 8 and s // 16 == d // 16
        assert len(path) == (3 if same_leaf else 5)
        lengths[len(path)] += 1
    # 32 hosts in 16 leaves of 2: each host shares its leaf with one other host
    assert lengths == {3: 32, 5: 32 * 31 - 32}


def test_every_host_pair_of_a_fat_tree_is_routed_on_a_shortest_path(ns):
    fabric = build_fabric(ns, FatTree(k=4))
    for (s, d), path in all_paths(ns, fabric).items():
        same_edge, same_pod = s // 2 == d // 2, s // 4 == d // 4
        assert len(path) == (3 if same_edge else 5 if same_pod else 7)
        if not same_pod:
            assert path[3].startswith("core")


def test_hpcc_file_fabric_routes_all_pairs_and_installs_its_losses(ns, tmp_path):
    path = tmp_path / "topo.txt"
    path.write_text("6 3 6\n3 4 5\n"
                    "0 3 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 4 100Gbps 0.001ms 0\n"
                    "3 5 400Gbps 0.002ms 0\n4 5 400Gbps 0.002ms 0\n3 4 400Gbps 0.002ms 0.001\n")
    fabric = build_fabric(ns, HpccTopologyFile(path))
    routes = all_paths(ns, fabric)
    assert routes[(0, 2)] == ["host0", "switch3", "switch4", "host2"]  # direct link beats switch5
    assert routes[(0, 1)] == ["host0", "switch3", "host1"]
    lossy = fabric.port("switch3", "switch4").device
    model = ns.PointerValue()
    lossy.GetAttribute("ReceiveErrorModel", model)
    rate = ns.DoubleValue()
    model.GetObject().GetAttribute("ErrorRate", rate)
    assert rate.Get() == pytest.approx(0.001)
    clean = ns.PointerValue()
    fabric.port("switch3", "switch5").device.GetAttribute("ReceiveErrorModel", clean)
    assert not clean.GetObject()


def attribute(ns, obj, name, value_type):
    value = value_type()
    obj.GetAttribute(name, value)
    return value.Get()


def test_switch_ports_mark_at_k_scaled_by_rate_and_hosts_queue_in_a_fifo(ns):
    fabric = build_fabric(ns, LeafSpine(leaves=2, hosts_per_leaf=4, spines=2),
                          QueueConfig(switch_buffer_packets=500))
    # base RTT 2 x (2.12 + 2.06) us = 8.36 us; K = C x RTT / 7 in 1500-byte packets
    assert fabric.ecn_thresholds == {100_000_000_000: 10, 200_000_000_000: 20}
    assert "ECN step marking above 10 pkts at 100 Gbps, 20 pkts at 200 Gbps" in fabric.describe()
    for port in fabric.ports:
        disc = port.queue_disc
        kind = disc.GetInstanceTypeId().GetName()
        if port.node.startswith("host"):
            assert kind == "ns3::FifoQueueDisc"
            assert disc.GetMaxSize().GetValue() == 10_000
            continue
        assert kind == "ns3::RedQueueDisc"
        k = 20 if port.peer.startswith(("leaf", "spine")) else 10
        assert attribute(ns, disc, "MinTh", ns.DoubleValue) == k
        assert attribute(ns, disc, "MaxTh", ns.DoubleValue) == k
        assert attribute(ns, disc, "QW", ns.DoubleValue) == 1
        assert attribute(ns, disc, "UseEcn", ns.BooleanValue)
        assert not attribute(ns, disc, "Gentle", ns.BooleanValue)
        assert not attribute(ns, disc, "UseHardDrop", ns.BooleanValue)
        assert disc.GetMaxSize().GetValue() == 500
        device = ns.DynamicCast[ns.PointToPointNetDevice](port.device)
        assert device.GetQueue().GetMaxSize().GetValue() == 1
        assert device.GetMtu() == 1500


def test_transport_options_land_on_the_sockets_applications_get(ns):
    transport = TransportConfig(congestion_control="newreno", segment_bytes=8948,
                                send_buffer_bytes=3 << 20, receive_buffer_bytes=5 << 20,
                                delayed_ack_count=2, min_rto_ms=5)
    fabric = build_fabric(ns, LeafSpine(leaves=1, hosts_per_leaf=2), transport=transport)
    socket = ns.DynamicCast[ns.TcpSocketBase](
        ns.Socket.CreateSocket(fabric.hosts[0], ns.TypeId.LookupByName(transport.socket_factory)))
    assert attribute(ns, socket, "SegmentSize", ns.UintegerValue) == 8948
    assert attribute(ns, socket, "SndBufSize", ns.UintegerValue) == 3 << 20
    assert attribute(ns, socket, "RcvBufSize", ns.UintegerValue) == 5 << 20
    assert attribute(ns, socket, "DelAckCount", ns.UintegerValue) == 2
    assert attribute(ns, socket, "MinRto", ns.TimeValue).GetMicroSeconds() == 5000
    assert ns.wormhole.TcpCongestionOpsName(socket) == "ns3::TcpNewReno"
    # jumbo segments need jumbo frames: every device carries the whole packet
    assert {p.device.GetMtu() for p in fabric.ports} == {9000}


def test_128_gpu_rail_fabric_builds_with_routes_between_all_pairs(ns):
    fabric = build_fabric(ns, RailOptimized(servers=16))
    assert (len(fabric.hosts), len(fabric.switches)) == (128, 24)
    for (s, d), path in all_paths(ns, fabric).items():
        assert path[-1] == f"host{d}" and len(path) == (3 if s % 8 == d % 8 else 5)


def test_a_simai_topology_routes_inside_a_server_over_nvlink_and_never_through_a_gpu(ns, tmp_path):
    """2 servers x 4 GPUs: NVLink inside a server, rail ToRs between servers, spines across rails."""
    from simai_inputs import rail_topology

    fabric = build_fabric(ns, HpccTopologyFile(rail_topology(tmp_path / "topo")))
    assert len(fabric.hosts) == 8 and len(fabric.switches) == 2 + 4 + 2 and len(fabric.links) == 16 + 8
    lengths = Counter()
    for (s, d), path in all_paths(ns, fabric).items():
        assert not any(node.startswith("host") for node in path[1:-1]), path
        if s // 4 == d // 4:
            assert path[1] == f"nvswitch{8 + s // 4}"
        lengths[len(path)] += 1
    assert lengths == Counter({3: 8 * 3 + 8, 5: 8 * 3})  # in a server; same rail; across rails


def test_without_nvlink_a_simai_topology_keeps_only_the_network(ns, tmp_path):
    from simai_inputs import rail_topology

    fabric = build_fabric(ns, HpccTopologyFile(rail_topology(tmp_path / "topo"), nvlink=False))
    assert len(fabric.switches) == 4 + 2 and len(fabric.links) == 8 + 8
    assert {link.tier for link in fabric.links} == {"host-switch", "switch-switch"}
    assert flow_path(ns, fabric, 0, 1, TCP, 10_000, 20_000)[2].startswith("switch1")  # over a spine
