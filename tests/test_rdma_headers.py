"""RoCEv2 headers on real ns-3 packets: wire sizes, round trips, 24-bit PSN unwrapping."""

import pytest

from wormhole_ns3.runtime import native


@pytest.fixture(scope="module")
def ns3():
    return native.load().ns3


def test_bth_survives_a_packet_round_trip(ns3):
    bth = ns3.RdmaBthHeader()
    bth.SetOpcode(ns3.RdmaBthHeader.RC_WRITE_LAST)
    bth.SetDestQp(0x123456)
    bth.SetPsn(0xABCDEF)
    bth.SetAckRequest(True)
    packet = ns3.Packet(100)
    packet.AddHeader(bth)
    assert packet.GetSize() == 112  # the BTH is 12 bytes
    read = ns3.RdmaBthHeader()
    packet.RemoveHeader(read)
    assert read.GetOpcode() == ns3.RdmaBthHeader.RC_WRITE_LAST
    assert read.IsData() and read.IsLastOfMessage()
    assert (read.GetDestQp(), read.GetWirePsn(), read.GetAckRequest()) == (0x123456, 0xABCDEF, True)


def test_bth_keeps_24_bits_of_psn_and_qpn(ns3):
    bth = ns3.RdmaBthHeader()
    bth.SetPsn(0x01000007)
    bth.SetDestQp(0x7000001)
    assert bth.GetWirePsn() == 7
    assert bth.GetDestQp() == 1


@pytest.mark.parametrize("wire, reference, full", [
    (5, 3, 5),
    (0x000005, 0x00FFFFF0, 0x01000005),  # forward across the 24-bit wrap
    (0xFFFFF0, 0x01000005, 0x00FFFFF0),  # backward across it
    (0x000010, 0x02000000, 0x02000010),
])
def test_unwrap_picks_the_psn_nearest_the_reference(ns3, wire, reference, full):
    assert ns3.RdmaBthHeader.Unwrap(wire, reference) == full


def test_aeth_carries_ack_or_nak(ns3):
    for nak in (False, True):
        aeth = ns3.RdmaAethHeader()
        aeth.SetNak(nak)
        aeth.SetMsn(3)
        packet = ns3.Packet(4)
        packet.AddHeader(aeth)
        assert packet.GetSize() == 8
        read = ns3.RdmaAethHeader()
        packet.RemoveHeader(read)
        assert (read.IsNak(), read.GetMsn()) == (nak, 3)


def test_int_records_survive_a_packet_round_trip(ns3):
    telemetry = ns3.RdmaIntHeader()
    telemetry.PushHop(ns3.NanoSeconds(5_000_000_123), 2**32 + 777, 123_456, ns3.DataRate("100Gbps"))
    telemetry.PushHop(ns3.MicroSeconds(7), 10, 10**9, ns3.DataRate("400Gbps"))
    packet = ns3.Packet(0)
    packet.AddHeader(telemetry)
    assert packet.GetSize() == 2 + 5 * 12  # fixed size: stamping never resizes a packet
    read = ns3.RdmaIntHeader()
    packet.RemoveHeader(read)
    assert read.GetNHops() == 2
    first, second = read.GetHop(0), read.GetHop(1)
    assert first.timeNs == 5_000_000_123 % 2**32 and first.txBytes == 777  # wrapping fields
    assert first.queueBytes == 123_456 // 32 * 32 and first.rateBps == 100 * 10**9
    assert second.queueBytes == (2**20 - 1) * 32  # saturates instead of wrapping


def test_int_header_holds_at_most_five_hops(ns3):
    telemetry = ns3.RdmaIntHeader()
    for hop in range(7):
        telemetry.PushHop(ns3.NanoSeconds(hop), hop, 0, ns3.DataRate("100Gbps"))
    assert telemetry.GetNHops() == 5
    assert telemetry.GetHop(4).txBytes == 4
