"""Per-flow ECMP on real packets: one path per flow, spread over spines, exactly as LookupFlow says."""

from collections import Counter

from wormhole_ns3.models.fabric import HpccTopologyFile, LeafSpine, RoutingConfig, build_fabric, flow_path

from fabric_support import TCP, UDP, hops, predicted_packets, sent_packets, tcp_flow, udp_flow

SPINES = 4
TWO_LEAVES = LeafSpine(leaves=2, hosts_per_leaf=4, spines=SPINES)


def leaf0_uplinks(counts: Counter) -> list[int]:
    return [counts[("leaf0", f"spine{s}")] for s in range(SPINES)]


def cross_leaf_udp_flows(ns, fabric, count, packets):
    """count UDP flows from leaf 0's hosts to leaf 1's, each with its own source port."""
    flows = [(i % 4, 4 + (i // 4) % 4, 10_000 + i, 9000, packets) for i in range(count)]
    for i, (src, dst, sport, dport, n) in enumerate(flows):
        udp_flow(ns, fabric, src, dst, sport, dport + i, n, start_s=i * 1e-5)
    return [(src, dst, sport, dport + i, n) for i, (src, dst, sport, dport, n) in enumerate(flows)]


def test_every_port_carries_exactly_the_packets_lookupflow_routes_over_it(ns):
    fabric = build_fabric(ns, TWO_LEAVES)
    flows = cross_leaf_udp_flows(ns, fabric, count=48, packets=20)
    flows += [(5, 1, 7000, 7001, 30), (6, 7, 7002, 7003, 25)]  # leaf 1 to leaf 0, and within leaf 1
    udp_flow(ns, fabric, 5, 1, 7000, 7001, 30)
    udp_flow(ns, fabric, 6, 7, 7002, 7003, 25)
    expected = predicted_packets(ns, fabric, flows)
    ns.Simulator.Run()
    assert sent_packets(fabric) == expected
    assert sum(expected.values()) == 48 * 20 * 4 + 30 * 4 + 25 * 2


def test_flows_between_two_leaves_spread_evenly_over_the_spines(ns):
    fabric = build_fabric(ns, TWO_LEAVES)
    cross_leaf_udp_flows(ns, fabric, count=128, packets=10)
    ns.Simulator.Run()
    per_spine = leaf0_uplinks(sent_packets(fabric))
    print(f"\npackets per spine from 128 flows: {per_spine}")
    assert sum(per_spine) == 1280
    assert all(0.6 * 320 <= n <= 1.4 * 320 for n in per_spine)


def test_ns3_global_routing_puts_every_flow_on_the_first_spine(ns):
    fabric = build_fabric(ns, TWO_LEAVES, routing=RoutingConfig(kind="global"))
    cross_leaf_udp_flows(ns, fabric, count=32, packets=10)
    ns.Simulator.Run()
    assert sorted(leaf0_uplinks(sent_packets(fabric))) == [0, 0, 0, 320]


def test_one_flow_never_splits_where_random_ecmp_sprays_it(ns):
    fabric = build_fabric(ns, TWO_LEAVES)
    udp_flow(ns, fabric, 0, 4, 10_000, 9000, 200)
    ns.Simulator.Run()
    assert sorted(leaf0_uplinks(sent_packets(fabric))) == [0, 0, 0, 200]
    ns.Simulator.Destroy()

    fabric = build_fabric(ns, TWO_LEAVES, routing=RoutingConfig(kind="random-ecmp"))
    udp_flow(ns, fabric, 0, 4, 10_000, 9000, 200)
    ns.Simulator.Run()
    sprayed = leaf0_uplinks(sent_packets(fabric))
    assert sum(sprayed) == 200 and all(n > 0 for n in sprayed)


def test_a_tcp_flow_and_its_acks_each_keep_to_the_path_lookupflow_gives(ns):
    fabric = build_fabric(ns, TWO_LEAVES)
    sink = tcp_flow(ns, fabric, 1, 6, 12_345, 5001, 2_000_000)
    data = hops(flow_path(ns, fabric, 1, 6, TCP, 12_345, 5001))
    acks = hops(flow_path(ns, fabric, 6, 1, TCP, 5001, 12_345))
    ns.Simulator.Run()
    assert sink.GetTotalRx() == 2_000_000
    sent = sent_packets(fabric)
    assert set(sent) == set(data) | set(acks)
    segments = -(-2_000_000 // 1448)
    assert all(sent[hop] >= segments for hop in data)  # every segment, plus SYN and FIN
    assert len({sent[hop] for hop in data}) == 1  # nothing lost or diverted on the way
    assert len({sent[hop] for hop in acks}) == 1


def test_another_hash_seed_moves_flows_to_other_spines(ns):
    flows = [(i % 4, 4 + i % 4, 10_000 + i, 9000) for i in range(32)]

    def spines(seed):
        fabric = build_fabric(ns, TWO_LEAVES, routing=RoutingConfig(hash_seed=seed))
        chosen = [flow_path(ns, fabric, s, d, UDP, sp, dp)[2] for s, d, sp, dp in flows]
        ns.Simulator.Destroy()
        return chosen

    first, again, other = spines(0), spines(0), spines(7)
    assert first == again
    moved = sum(a != b for a, b in zip(first, other))
    print(f"\nflows on another spine with seed 7: {moved} of 32")
    assert 16 <= moved <= 31  # a fresh draw moves 3/4 of them: 24 +- 3 standard deviations


def test_lookupflow_knows_which_uplink_a_dual_homed_host_sends_on(ns, tmp_path):
    # host 0 hangs off switches 4 and 5, which both reach switch 6; hosts 1..3 hang off 6
    topology = tmp_path / "dual.txt"
    topology.write_text("7 3 7\n4 5 6\n"
                        "0 4 100Gbps 0.001ms 0\n0 5 100Gbps 0.001ms 0\n4 6 100Gbps 0.001ms 0\n"
                        "5 6 100Gbps 0.001ms 0\n1 6 100Gbps 0.001ms 0\n2 6 100Gbps 0.001ms 0\n"
                        "3 6 100Gbps 0.001ms 0\n")
    fabric = build_fabric(ns, HpccTopologyFile(topology))
    flows = [(0, dst, 10_000 + dst * 10 + k, 9000 + dst * 10 + k, 10)
             for dst in (1, 2, 3) for k in range(4)]
    for flow in flows:
        udp_flow(ns, fabric, *flow)
    expected = predicted_packets(ns, fabric, flows)
    ns.Simulator.Run()
    sent = sent_packets(fabric)
    assert sent == expected
    # a host's own packets are spread by destination only: each destination uses one uplink
    uplinks = {dst: {flow_path(ns, fabric, 0, dst, UDP, sport, dport)[1]
                     for _, d, sport, dport, _ in flows if d == dst} for dst in (1, 2, 3)}
    assert all(len(u) == 1 for u in uplinks.values())
    assert sent[("host0", "switch4")] + sent[("host0", "switch5")] == 120


def test_recomputed_routes_are_seen_after_a_flush(ns):
    fabric = build_fabric(ns, LeafSpine(leaves=2, hosts_per_leaf=1, spines=2))
    leaf0 = fabric.switches[0]
    ipv4 = leaf0.GetObject[ns.Ipv4]()

    def prefer(spine):
        """Make the other spine's uplink of leaf 0 expensive and recompute the routes."""
        for s in range(2):
            device = fabric.port("leaf0", f"spine{s}").device
            ipv4.SetMetric(ipv4.GetInterfaceForDevice(device), 1 if s == spine else 10)
        ns.Ipv4GlobalRoutingHelper.RecomputeRoutingTables()

    def via():
        return flow_path(ns, fabric, 0, 1, UDP, 1000, 2000)[2]

    routing = ns.DynamicCast[ns.FlowHashEcmpRouting](ipv4.GetRoutingProtocol())
    prefer(1)
    assert via() == "spine1" and routing.GetNEqualCostRoutes(fabric.host_address(1)) == 1
    prefer(0)  # as many routes as before, and no interface event: the index cannot tell
    assert via() == "spine1"
    routing.FlushCache()
    assert via() == "spine0"
