"""A scenario as data: its nodes and links, queues, transport and flows, and their JSON form.

The generator (``generator.py``) makes specs, ``scenario.py`` builds one in ns-3 and the
sweep keeps each beside its results. A spec names every link and every flow, so its file
alone says what ran, whatever generator made it; the generator's own choices (the
topology's family, how sizes and starts were drawn) travel with it as ``Shape``, for the
sweep's table, and change nothing that is built.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import asdict, dataclass, is_dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin, get_type_hints

#: ns-3's TCP segment size every scenario uses (1500-byte packets on the wire).
SEGMENT_BYTES = 1448


class SpecError(ValueError):
    """A spec that cannot be built; the message names the problem in one line."""


class Label(str, Enum):
    """An enum member that is also its own text (in JSON, CSV and on the command line)."""

    def __str__(self) -> str:
        return str(self.value)


class TopologyKind(Label):
    DUMBBELL = "dumbbell"
    PARKING_LOT = "parking-lot"
    LEAF_SPINE = "leaf-spine"


class CongestionControl(Label):
    """The TCP congestion controls a scenario may run (ns-3 TypeId names)."""

    NEW_RENO = "TcpNewReno"
    CUBIC = "TcpCubic"
    DCTCP = "TcpDctcp"


class RedKind(Label):
    """How a RED queue decides to mark or drop, from its thresholds and Gentle."""

    #: MinTh = MaxTh, Gentle off: every packet above the threshold, no coin flipped (DCTCP's marker).
    STEP = "step"
    #: MinTh = MaxTh, Gentle on (ns-3's default Gentle): at random between the threshold and twice it.
    STEP_GENTLE = "step-gentle"
    #: MinTh < MaxTh, Gentle off: at random between the thresholds, every packet above MaxTh.
    RAMP = "ramp"
    #: MinTh < MaxTh, Gentle on: at random from MinTh to twice MaxTh.
    RAMP_GENTLE = "ramp-gentle"


class StartPattern(Label):
    SIMULTANEOUS = "simultaneous"
    STAGGERED = "staggered"
    RANDOM = "random"


class SizeMix(Label):
    #: Every flow the same size.
    EQUAL = "equal"
    #: Each flow's size drawn log-uniformly over the whole range.
    MIXED = "mixed"
    #: Mostly short flows beside a few long ones.
    MICE_AND_ELEPHANTS = "mice-and-elephants"


@dataclass(frozen=True)
class Link:
    """A point-to-point link between nodes ``a`` and ``b`` (hosts first, then switches)."""

    a: int
    b: int
    rate_bps: int
    delay_ns: int


@dataclass(frozen=True)
class Topology:
    """Nodes 0 .. hosts-1 are hosts, the next ``switches`` are switches; routing is ns-3's global routing."""

    hosts: int
    switches: int
    links: tuple[Link, ...]
    #: ns-3's per-packet random choice among equal-cost routes (Ipv4GlobalRouting::RandomEcmpRouting).
    random_ecmp: bool

    @property
    def nodes(self) -> int:
        return self.hosts + self.switches

    def is_host(self, node: int) -> bool:
        return 0 <= node < self.hosts

    def hops(self, src: int, dst: int) -> int:
        """Links on a shortest path from src to dst (global routing's metric: one per link)."""
        neighbours: dict[int, list[int]] = {n: [] for n in range(self.nodes)}
        for link in self.links:
            neighbours[link.a].append(link.b)
            neighbours[link.b].append(link.a)
        distance = {src: 0}
        frontier = deque([src])
        while frontier:
            node = frontier.popleft()
            for other in neighbours[node]:
                if other not in distance:
                    distance[other] = distance[node] + 1
                    frontier.append(other)
        if dst not in distance:
            raise SpecError(f"no path from node {src} to node {dst}")
        return distance[dst]


@dataclass(frozen=True)
class RedQueue:
    """ns-3's RedQueueDisc on every switch port (thresholds in packets)."""

    min_th: float
    max_th: float
    gentle: bool
    #: Weight of the instantaneous queue in RED's average (1: no averaging).
    qw: float
    #: 1 / the marking probability at MaxTh.
    l_interm: float
    max_packets: int
    use_ecn: bool
    #: Drop rather than mark above MaxTh (ns-3's default, true).
    hard_drop: bool

    @property
    def kind(self) -> RedKind:
        if self.min_th == self.max_th:
            return RedKind.STEP_GENTLE if self.gentle else RedKind.STEP
        return RedKind.RAMP_GENTLE if self.gentle else RedKind.RAMP


@dataclass(frozen=True)
class Transport:
    congestion_control: CongestionControl
    ecn: bool
    #: Segments per delayed ACK (ns-3's default 2).
    delayed_ack_count: int
    #: TCP send and receive buffers (ns-3's default 131072).
    buffer_bytes: int


@dataclass(frozen=True)
class Flow:
    """A BulkSend from host src to a PacketSink on host dst."""

    src: int
    dst: int
    bytes: int
    start_ns: int


@dataclass(frozen=True)
class Shape:
    """The generator's draws that the spec's links and flows no longer name."""

    topology: TopologyKind
    sizes: SizeMix
    starts: StartPattern
    #: How much the drawn sizes were scaled down to keep the scenario's plain run short (1: not at all).
    size_scale: float


@dataclass(frozen=True)
class ScenarioSpec:
    name: str
    shape: Shape
    topology: Topology
    switch_queue: RedQueue
    #: FIFO queue disc on every host port.
    host_queue_packets: int
    #: The point-to-point devices' own transmit queue under the queue disc (ns-3's default 100).
    device_queue_packets: int
    transport: Transport
    flows: tuple[Flow, ...]

    def __post_init__(self) -> None:
        check(self)

    def flow_hops(self, flow: Flow) -> int:
        return self.topology.hops(flow.src, flow.dst)

    def parameters(self) -> dict[str, Any]:
        """The scenario in one flat row (the sweep's table)."""
        rates = [link.rate_bps for link in self.topology.links]
        delays = [link.delay_ns for link in self.topology.links]
        sizes = [flow.bytes for flow in self.flows]
        red = self.switch_queue
        return {
            "topology": str(self.shape.topology),
            "hosts": self.topology.hosts,
            "switches": self.topology.switches,
            "random_ecmp": self.topology.random_ecmp,
            "min_rate_gbps": min(rates) / 1e9,
            "max_rate_gbps": max(rates) / 1e9,
            "min_delay_us": min(delays) / 1e3,
            "max_delay_us": max(delays) / 1e3,
            "transport": str(self.transport.congestion_control),
            "ecn": self.transport.ecn,
            "delayed_ack_count": self.transport.delayed_ack_count,
            "tcp_buffer_bytes": self.transport.buffer_bytes,
            "red_kind": str(red.kind),
            "red_min_th": red.min_th,
            "red_max_th": red.max_th,
            "red_qw": red.qw,
            "red_l_interm": red.l_interm,
            "red_hard_drop": red.hard_drop,
            "switch_buffer_packets": red.max_packets,
            "host_buffer_packets": self.host_queue_packets,
            "device_queue_packets": self.device_queue_packets,
            "flows": len(self.flows),
            "size_mix": str(self.shape.sizes),
            "size_scale": self.shape.size_scale,
            "total_bytes": sum(sizes),
            "min_flow_bytes": min(sizes),
            "max_flow_bytes": max(sizes),
            "starts": str(self.shape.starts),
            "last_start_ms": max(flow.start_ns for flow in self.flows) / 1e6,
        }

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True) + "\n"


def check(spec: ScenarioSpec) -> None:
    """SpecError unless ns-3 can build and run ``spec`` as it says."""
    topology = spec.topology
    if topology.hosts < 2 or topology.switches < 1:
        raise SpecError(f"need at least 2 hosts and 1 switch, got {topology.hosts} and {topology.switches}")
    for link in topology.links:
        if not (0 <= link.a < topology.nodes and 0 <= link.b < topology.nodes) or link.a == link.b:
            raise SpecError(f"link {link.a}-{link.b} does not join two of the {topology.nodes} nodes")
        if topology.is_host(link.a) and topology.is_host(link.b):
            raise SpecError(f"link {link.a}-{link.b} joins two hosts; hosts attach to switches")
        if link.rate_bps <= 0 or link.delay_ns < 0:
            raise SpecError(f"link {link.a}-{link.b} needs a positive rate and a delay of at least 0")
    red = spec.switch_queue
    if not 0 < red.min_th <= red.max_th < red.max_packets:
        raise SpecError(f"RED needs 0 < MinTh <= MaxTh < MaxSize, got {red.min_th}, {red.max_th}, {red.max_packets}")
    if not 0 < red.qw <= 1 or red.l_interm < 1:
        raise SpecError(f"RED needs 0 < QW <= 1 and LInterm >= 1, got {red.qw} and {red.l_interm}")
    if spec.host_queue_packets < 1 or spec.device_queue_packets < 1:
        raise SpecError("host and device queues need room for at least one packet")
    if spec.transport.congestion_control is CongestionControl.DCTCP and not spec.transport.ecn:
        raise SpecError("DCTCP needs ECN")
    if not spec.flows:
        raise SpecError("a scenario needs at least one flow")
    for i, flow in enumerate(spec.flows):
        if not (topology.is_host(flow.src) and topology.is_host(flow.dst)) or flow.src == flow.dst:
            raise SpecError(f"flow {i} must run between two different hosts, got {flow.src} -> {flow.dst}")
        if flow.bytes < 1 or flow.start_ns < 0:
            raise SpecError(f"flow {i} needs at least one byte and a start of at least 0")
        topology.hops(flow.src, flow.dst)


def _build(cls: type, document: Any) -> Any:
    """An instance of dataclass ``cls`` from its asdict() form, nested dataclasses and enums included."""
    if not isinstance(document, dict):
        raise SpecError(f"{cls.__name__} must be a JSON object")
    expected = get_type_hints(cls)
    missing, unknown = sorted(set(expected) - set(document)), sorted(set(document) - set(expected))
    if missing or unknown:
        raise SpecError(f"{cls.__name__}: " + "; ".join(
            part for part in (f"missing {', '.join(missing)}" if missing else "",
                              f"unknown {', '.join(unknown)}" if unknown else "") if part))
    return cls(**{name: _value(kind, document[name], f"{cls.__name__}.{name}") for name, kind in expected.items()})


def _value(kind: Any, value: Any, where: str) -> Any:
    """``value`` read as a field of type ``kind`` (a tuple of dataclasses, an enum, a dataclass or a scalar)."""
    if get_origin(kind) is tuple:
        if not isinstance(value, list):
            raise SpecError(f"{where} must be a list")
        return tuple(_build(get_args(kind)[0], item) for item in value)
    if issubclass(kind, Enum):
        try:
            return kind(value)
        except ValueError:
            raise SpecError(f"{where} must be one of {', '.join(str(m) for m in kind)}, got {value!r}") from None
    if is_dataclass(kind):
        return _build(kind, value)
    if kind is float and type(value) is int:
        return float(value)
    if type(value) is not kind:
        raise SpecError(f"{where} must be a {kind.__name__}, got {value!r}")
    return value


def from_json(text: str) -> ScenarioSpec:
    """The spec a ``to_json`` text holds; SpecError for anything else."""
    try:
        document = json.loads(text)
    except ValueError as error:
        raise SpecError(f"not JSON: {error}") from None
    spec: ScenarioSpec = _build(ScenarioSpec, document)
    return spec


def load(path: Path) -> ScenarioSpec:
    """The spec in the file at ``path``; SpecError (naming the file) if it cannot be read or built."""
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise SpecError(f"{path}: {error.strerror}") from None
    try:
        return from_json(text)
    except SpecError as error:
        raise SpecError(f"{path}: {error}") from None
