"""How long plain packet-level ns-3 would take to simulate a workload, from its bytes alone.

Rule of thumb measured on this project's machines (see the shared ns-3
findings: 2.2-2.7 us per event for TCP over point-to-point links): every
flow is cut into MSS-sized segments (1448 payload bytes in a 1500-byte
packet), each segment is ACKed, and each packet costs about 6 events per
hop (enqueue, dequeue, transmit, receive, and the stack above). Same-rail
traffic on a rail-optimized fabric crosses 2 links (GPU to leaf to GPU);
cross-rail or fat-tree paths 3 or more. Compute gaps cost no events.
"""

from __future__ import annotations

from dataclasses import dataclass

from wormhole_ns3.models.workloads.dag import Workload

MSS = 1448


@dataclass(frozen=True)
class PlainNs3Estimate:
    packets: int  #: data segments and their ACKs
    events: int
    seconds: float

    @property
    def minutes(self) -> float:
        return self.seconds / 60


def estimate_plain_ns3(
    workload: Workload,
    hops: float = 2.0,
    events_per_packet_hop: float = 6.0,
    seconds_per_event: float = 2.5e-6,
) -> PlainNs3Estimate:
    segments = sum(-(-flow.bytes // MSS) for flow in workload.flows)
    packets = 2 * segments
    events = round(packets * hops * events_per_packet_hop)
    return PlainNs3Estimate(packets, events, events * seconds_per_event)
