"""Scenario N of a seed: dumbbells, parking lots and leaf-spines, drawn off the beaten path.

Every choice comes from one ``random.Random`` seeded by the pair (seed, N), so a spec
is the same on every machine and Python, and scenario N does not change when the
sweep asks for more scenarios. What is drawn, and over which ranges:

- topology: a dumbbell (1-8 hosts per side), a parking lot (a chain of 3-5 switches,
  1-3 hosts each) or a leaf-spine (2-4 leaves, 1-3 spines, 2-4 hosts per leaf, ns-3's
  random per-packet ECMP on a quarter of those with several spines);
- links: rates of 1-100 Gbps, host links and the fabric's drawn apart (either may be
  the narrower), delays of 1-50 us;
- switch queues: ns-3's RED as a step marker (MinTh = MaxTh, Gentle off, QW 1) or
  probabilistic (MinTh < MaxTh and/or Gentle on, QW 1 down to ns-3's 0.002), thresholds
  of 5-150 packets, buffers of 100-3000 packets (at least twice MaxTh), hard drop or not;
  host queues a FIFO of 100-10000 packets; device queues ns-3's default 100 packets or 1;
- transport: NewReno, Cubic or DCTCP (ECN always for DCTCP, on half the others),
  delayed ACKs every 1 or 2 segments, socket buffers from ns-3's 128 KiB to 16 MiB;
- flows: 2-24, of 100 KB - 200 MB (all equal, log-uniform, or mice beside elephants),
  starting together, staggered, or at random within the scenario's drain time.

A scenario's packets are bounded (``PACKET_HOP_BUDGET``) so that plain ns-3 runs it in
well under a minute: drawn sizes above it are scaled down together (the spec's
``Shape.size_scale`` says by how much), never below the smallest size.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from spec import (
    SEGMENT_BYTES,
    CongestionControl,
    Flow,
    Link,
    RedKind,
    RedQueue,
    ScenarioSpec,
    Shape,
    SizeMix,
    StartPattern,
    Topology,
    TopologyKind,
    Transport,
)

GBPS = 10**9
RATES_GBPS = (1, 2.5, 5, 10, 25, 40, 50, 100)
MIN_DELAY_US, MAX_DELAY_US = 1, 50
MIN_FLOWS, MAX_FLOWS = 2, 24
MIN_BYTES, MAX_BYTES = 100_000, 200_000_000
#: Data packets times the links they cross, summed over a scenario's flows. Plain ns-3
#: (this machine, Python bindings) runs about 1 M of them in 30 s (see README.md).
PACKET_HOP_BUDGET = 1_000_000
#: Every flow starts at or after this instant (routing and sinks are in place).
FIRST_START_NS = 1_000_000


@dataclass(frozen=True)
class Side:
    """Hosts a flow may leave from and hosts it may go to, drawn with this weight among a fabric's sides."""

    sources: tuple[int, ...]
    destinations: tuple[int, ...]
    weight: float


@dataclass(frozen=True)
class Fabric:
    """A drawn topology before its flows."""

    kind: TopologyKind
    topology: Topology
    sides: tuple[Side, ...]


def generate(seed: int, index: int, budget: int = PACKET_HOP_BUDGET) -> ScenarioSpec:
    """Scenario ``index`` of ``seed``, its data packets times their hops at most ``budget`` (``packet_hops``)."""
    draw = random.Random(f"wormhole-scenarios/{seed}/{index}")
    fabric = _fabric(draw)
    transport = _transport(draw)
    queue = _red(draw, transport)
    n_flows = draw.randint(MIN_FLOWS, MAX_FLOWS)
    mix = draw.choice(list(SizeMix))
    sizes = _sizes(draw, mix, n_flows)
    pairs = [_endpoints(draw, fabric) for _ in range(n_flows)]
    hops = [fabric.topology.hops(src, dst) for src, dst in pairs]
    sizes, scale = _within_budget(sizes, hops, budget)
    pattern = draw.choice(list(StartPattern))
    starts = _starts(draw, pattern, sizes, fabric.topology)
    return ScenarioSpec(
        name=f"seed{seed}-{index:04d}",
        shape=Shape(topology=fabric.kind, sizes=mix, starts=pattern, size_scale=scale),
        topology=fabric.topology,
        switch_queue=queue,
        host_queue_packets=draw.choice((100, 1000, 10_000)),
        device_queue_packets=draw.choice((1, 100)),
        transport=transport,
        flows=tuple(Flow(src, dst, size, start) for (src, dst), size, start in zip(pairs, sizes, starts)),
    )


def _rate(draw: random.Random) -> int:
    return int(draw.choice(RATES_GBPS) * GBPS)


def _delay(draw: random.Random) -> int:
    return draw.randint(MIN_DELAY_US, MAX_DELAY_US) * 1000


def _fabric(draw: random.Random) -> Fabric:
    kind = draw.choice(list(TopologyKind))
    host_rate, fabric_rate = _rate(draw), _rate(draw)
    host_delay, fabric_delay = _delay(draw), _delay(draw)
    if kind is TopologyKind.DUMBBELL:
        left, right = draw.randint(1, 8), draw.randint(1, 8)
        hosts = left + right
        lefts, rights = tuple(range(left)), tuple(range(left, hosts))
        switch_l, switch_r = hosts, hosts + 1
        links = [Link(h, switch_l if h < left else switch_r, host_rate, host_delay) for h in range(hosts)]
        links.append(Link(switch_l, switch_r, fabric_rate, fabric_delay))
        forward = draw.choice((1.0, 1.0, 0.7, 0.5))  # the share of flows from left to right
        sides = (Side(lefts, rights, forward), Side(rights, lefts, 1 - forward))
        return Fabric(kind, Topology(hosts, 2, tuple(links), random_ecmp=False), sides)
    if kind is TopologyKind.PARKING_LOT:
        switches, per_switch = draw.randint(3, 5), draw.randint(1, 3)
        hosts = switches * per_switch
        links = [Link(h, hosts + h // per_switch, host_rate, host_delay) for h in range(hosts)]
        links += [Link(hosts + s, hosts + s + 1, fabric_rate, fabric_delay) for s in range(switches - 1)]
        at = [tuple(range(s * per_switch, (s + 1) * per_switch)) for s in range(switches)]
        # upstream to downstream between any two switches, and half the flows over the whole chain
        pairs = [(i, j) for i in range(switches) for j in range(i + 1, switches)]
        sides = (Side(at[0], at[-1], 1.0), *(Side(at[i], at[j], 1 / len(pairs)) for i, j in pairs))
        return Fabric(kind, Topology(hosts, switches, tuple(links), random_ecmp=False), sides)
    leaves, spines, per_leaf = draw.randint(2, 4), draw.randint(1, 3), draw.randint(2, 4)
    hosts = leaves * per_leaf
    links = [Link(h, hosts + h // per_leaf, host_rate, host_delay) for h in range(hosts)]
    links += [Link(hosts + leaf, hosts + leaves + spine, fabric_rate, fabric_delay)
              for leaf in range(leaves) for spine in range(spines)]
    everyone = tuple(range(hosts))
    ecmp = spines > 1 and draw.random() < 0.25
    return Fabric(kind, Topology(hosts, leaves + spines, tuple(links), random_ecmp=ecmp),
                  (Side(everyone, everyone, 1.0),))


def _endpoints(draw: random.Random, fabric: Fabric) -> tuple[int, int]:
    side = draw.choices(fabric.sides, weights=[s.weight for s in fabric.sides])[0]
    src = draw.choice(side.sources)
    dst = draw.choice([d for d in side.destinations if d != src])
    return src, dst


def _transport(draw: random.Random) -> Transport:
    cc = draw.choice(list(CongestionControl))
    ecn = cc is CongestionControl.DCTCP or draw.random() < 0.5
    return Transport(congestion_control=cc, ecn=ecn, delayed_ack_count=draw.choice((1, 2)),
                     buffer_bytes=draw.choice((131_072, 1 << 20, 4 << 20, 16 << 20)))


def _red(draw: random.Random, transport: Transport) -> RedQueue:
    kind = draw.choice(list(RedKind))
    min_th = float(draw.randint(5, 150))
    max_th = min_th if kind in (RedKind.STEP, RedKind.STEP_GENTLE) else float(round(min_th * draw.uniform(1.5, 4)))
    qw = 1.0 if kind is RedKind.STEP else draw.choice((1.0, 0.1, 0.01, 0.002))
    return RedQueue(
        min_th=min_th, max_th=max_th, gentle=kind in (RedKind.STEP_GENTLE, RedKind.RAMP_GENTLE), qw=qw,
        l_interm=draw.choice((10.0, 50.0)),
        max_packets=max(draw.choice((100, 250, 1000, 3000)), math.ceil(2 * max_th) + 1),
        use_ecn=transport.ecn,
        hard_drop=draw.random() < 0.3 if transport.ecn else True,
    )


def _log_uniform(draw: random.Random, low: float, high: float) -> int:
    return round(math.exp(draw.uniform(math.log(low), math.log(high))))


def _sizes(draw: random.Random, mix: SizeMix, n: int) -> list[int]:
    if mix is SizeMix.EQUAL:
        return [_log_uniform(draw, MIN_BYTES, MAX_BYTES)] * n
    if mix is SizeMix.MIXED:
        return [_log_uniform(draw, MIN_BYTES, MAX_BYTES) for _ in range(n)]
    elephants = max(1, round(n * draw.uniform(0.1, 0.3)))
    sizes = [_log_uniform(draw, 20_000_000, MAX_BYTES) if i < elephants else _log_uniform(draw, MIN_BYTES, 1_000_000)
             for i in range(n)]
    draw.shuffle(sizes)
    return sizes


def packet_hops(sizes: list[int], hops: list[int]) -> int:
    """Data packets times the links they cross: what a scenario's plain run time grows with."""
    return sum(math.ceil(size / SEGMENT_BYTES) * h for size, h in zip(sizes, hops))


def _within_budget(sizes: list[int], hops: list[int], budget: int) -> tuple[list[int], float]:
    """Sizes scaled down together (none below MIN_BYTES) to fit ``budget`` packet-hops, and the scale."""
    load = packet_hops(sizes, hops)
    if load <= budget:
        return sizes, 1.0
    if packet_hops([MIN_BYTES] * len(sizes), hops) >= budget:
        return [MIN_BYTES] * len(sizes), round(MIN_BYTES / max(sizes), 6)
    scale = budget / load
    while packet_hops([max(MIN_BYTES, round(s * scale)) for s in sizes], hops) > budget:
        scale *= 0.95
    return [max(MIN_BYTES, round(s * scale)) for s in sizes], round(scale, 6)


def _starts(draw: random.Random, pattern: StartPattern, sizes: list[int], topology: Topology) -> list[int]:
    """Start instants (ns): together, a fixed gap apart, or at random within the scenario's drain time.

    The drain time is the time the narrowest link takes to carry every byte, so staggered
    and random flows still meet.
    """
    narrowest = min(link.rate_bps for link in topology.links)
    drain_ns = sum(sizes) * 8 / narrowest * 1e9
    if pattern is StartPattern.SIMULTANEOUS:
        return [FIRST_START_NS] * len(sizes)
    if pattern is StartPattern.STAGGERED:
        gap = round(drain_ns * draw.uniform(0.05, 0.8) / len(sizes) / 1000) * 1000
        return [FIRST_START_NS + i * gap for i in range(len(sizes))]
    window = drain_ns * draw.uniform(0.1, 1.0)
    return [FIRST_START_NS + round(draw.uniform(0, window) / 1000) * 1000 for _ in sizes]
