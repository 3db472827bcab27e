"""Egress queues: DCTCP's step ECN marker on switch ports, a plain FIFO on hosts.

DCTCP expects a switch to mark every packet while the instantaneous queue is
above a threshold K and to drop none early. ns-3's RED queue disc does exactly
that with no averaging (QW = 1), MinTh = MaxTh = K, Gentle off, UseEcn on and
no hard drop; a packet that cannot carry ECN is dropped at K instead, as RED
would. The same two helpers serve the demo dumbbell and the fabrics, so both
mark alike.

K follows the DCTCP guideline K > C * RTT / 7 (C the port's rate, RTT the
longest idle round trip of the fabric, ``Layout.base_rtt_s``): a 2-tier fabric
of 100 Gbps links with 1 us delay has an 8.48 us RTT with 1500-byte packets,
so K is 11 packets at 100 Gbps (21 at 200 Gbps, 41 at 400 Gbps); a k=4
fat-tree (12.72 us) gets 16. The device transmit queue below the queue disc holds a single
packet by default, so the backlog, and thus the marking, is in the queue disc.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wormhole_ns3.models.fabric.specs import FabricSpecError, require_at_least_one


def dctcp_threshold_packets(rate_bps: float, rtt_s: float, packet_bytes: int) -> int:
    """K = C * RTT / 7 in packets of packet_bytes, rounded up (at least 1)."""
    return max(1, math.ceil(rate_bps * rtt_s / 7 / (packet_bytes * 8)))


@dataclass(frozen=True, kw_only=True)
class QueueConfig:
    """How the fabric queues: marking at switch egress, buffer sizes.

    ``ecn_threshold_packets`` fixes K on every switch port; by default K is
    scaled per port with its rate and ``design_rtt_us`` (by default the
    fabric's longest base RTT). ``ecn_marking=False`` gives switches a
    drop-tail FIFO of the same buffer.
    """

    ecn_marking: bool = True
    ecn_threshold_packets: int | None = None
    design_rtt_us: float | None = None
    switch_buffer_packets: int = 1000
    host_buffer_packets: int = 10_000
    device_queue_packets: int = 1

    def __post_init__(self) -> None:
        require_at_least_one(self, "switch_buffer_packets", "host_buffer_packets",
                             "device_queue_packets")
        k = self.ecn_threshold_packets
        if k is not None and not 1 <= k <= self.switch_buffer_packets:
            raise FabricSpecError(f"ecn_threshold_packets must be between 1 and "
                                  f"switch_buffer_packets ({self.switch_buffer_packets}), got {k}")
        if self.design_rtt_us is not None and self.design_rtt_us <= 0:
            raise FabricSpecError(f"design_rtt_us must be positive, got {self.design_rtt_us}")

    def threshold_packets(self, rate_bps: float, fabric_rtt_s: float, packet_bytes: int) -> int:
        """K for a switch port of this rate."""
        if self.ecn_threshold_packets is not None:
            return self.ecn_threshold_packets
        rtt = fabric_rtt_s if self.design_rtt_us is None else self.design_rtt_us * 1e-6
        return min(dctcp_threshold_packets(rate_bps, rtt, packet_bytes), self.switch_buffer_packets)


def step_marking_red(ns, *, threshold_packets: int, buffer_packets: int, link_rate: str,
                     link_delay: str, packet_bytes: int = 1500):
    """A TrafficControlHelper installing RED as DCTCP's step marker at K packets."""
    helper = ns.TrafficControlHelper()
    helper.SetRootQueueDisc(
        "ns3::RedQueueDisc",
        "UseEcn", ns.BooleanValue(True),
        "UseHardDrop", ns.BooleanValue(False),
        "Gentle", ns.BooleanValue(False),
        "MeanPktSize", ns.UintegerValue(packet_bytes),
        "QW", ns.DoubleValue(1.0),
        "MinTh", ns.DoubleValue(threshold_packets),
        "MaxTh", ns.DoubleValue(threshold_packets),
        "LinkBandwidth", ns.DataRateValue(ns.DataRate(link_rate)),
        "LinkDelay", ns.TimeValue(ns.Time(link_delay)),
        "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{buffer_packets}p")),
    )
    return helper


def fifo(ns, buffer_packets: int):
    """A TrafficControlHelper installing a drop-tail FIFO queue disc."""
    helper = ns.TrafficControlHelper()
    helper.SetRootQueueDisc("ns3::FifoQueueDisc",
                            "MaxSize", ns.QueueSizeValue(ns.QueueSize(f"{buffer_packets}p")))
    return helper
