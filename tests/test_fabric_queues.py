"""Switch queues on real packets: DCTCP's step marker in an incast, and the options that change it."""

from wormhole_ns3.models.fabric import LeafSpine, QueueConfig, TransportConfig, build_fabric

from fabric_support import tcp_flow

# hosts 0 and 1 on leaf 0, host 2 on leaf 1; one 200 Gbps spine: leaf1 -> host2 is the bottleneck
INCAST = LeafSpine(leaves=2, hosts_per_leaf=2, spines=1)
FLOW_BYTES = 2_000_000


def run_incast(ns, queues=None, transport=None):
    """Two flows into host 2; returns (fabric, bytes received per flow)."""
    fabric = build_fabric(ns, INCAST, queues, transport)
    sinks = [tcp_flow(ns, fabric, src, 2, 40_000 + src, 5000 + src, FLOW_BYTES) for src in (0, 1)]
    ns.Simulator.Stop(ns.Seconds(1))
    ns.Simulator.Run()
    return fabric, [sink.GetTotalRx() for sink in sinks]


def stats(fabric, node, peer):
    return fabric.port(node, peer).queue_disc.GetStats()


def test_dctcp_incast_is_marked_at_the_bottleneck_and_loses_nothing(ns):
    fabric, received = run_incast(ns)
    assert received == [FLOW_BYTES, FLOW_BYTES]
    bottleneck = stats(fabric, "leaf1", "host2")
    print(f"\nincast: {bottleneck.nTotalMarkedPackets} of {bottleneck.nTotalSentPackets} packets "
          f"marked at K={fabric.ecn_thresholds[100_000_000_000]}")
    assert bottleneck.GetNMarkedPackets("Forced mark") == bottleneck.nTotalMarkedPackets > 50
    assert sum(p.queue_disc.GetStats().nTotalDroppedPackets for p in fabric.ports) == 0
    assert stats(fabric, "host0", "leaf0").nTotalMarkedPackets == 0  # hosts only queue


def test_without_ecn_the_marker_drops_at_k_and_tcp_recovers(ns):
    transport = TransportConfig(congestion_control="newreno", ecn=False)
    fabric, received = run_incast(ns, transport=transport)
    assert received == [FLOW_BYTES, FLOW_BYTES]
    bottleneck = stats(fabric, "leaf1", "host2")
    assert bottleneck.nTotalMarkedPackets == 0
    assert bottleneck.GetNDroppedPackets("Forced drop") > 0


def test_drop_tail_switches_never_mark_so_slow_start_overflows_them(ns):
    fabric, received = run_incast(ns, queues=QueueConfig(ecn_marking=False))
    assert received == [FLOW_BYTES, FLOW_BYTES]
    assert fabric.ecn_thresholds == {}
    bottleneck = fabric.port("leaf1", "host2").queue_disc
    assert bottleneck.GetInstanceTypeId().GetName() == "ns3::FifoQueueDisc"
    assert bottleneck.GetStats().nTotalMarkedPackets == 0
    # unmarked, the two flows double their windows until the 1000 packets overflow
    assert bottleneck.GetStats().nTotalDroppedPackets > 0


def test_segment_size_sets_the_size_of_the_packets_on_the_wire(ns):
    transport = TransportConfig(segment_bytes=8948)
    fabric, received = run_incast(ns, transport=transport)
    assert received == [FLOW_BYTES, FLOW_BYTES]
    sender = stats(fabric, "host0", "leaf0")
    full_segments = FLOW_BYTES // 8948
    # every full segment leaves as one 9000-byte IP packet (+2 bytes of PPP header)
    assert sender.nTotalSentBytes >= full_segments * 9002
    assert sender.nTotalSentPackets < full_segments + 10
