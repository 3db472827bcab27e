"""HPCC-ns-3 input and output files, so existing experiment inputs and FCT analyses keep working.

Topology file: a header ``N S L`` (nodes, switches, links), a line with the S
switch node ids, then L lines ``src dst rate delay error_rate`` (``100Gbps
0.001ms 0``). Flow file: a line with the flow count F, then F lines ``src dst
priority dport size start`` (size in bytes, start in seconds). FCT output: one
line per flow, ``sip dip sport dport size start_ns fct_ns standalone_fct_ns``
with IPv4 addresses in hexadecimal, as HPCC's analysis scripts read it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from wormhole_ns3.models.workloads.dag import Workload, WorkloadBuilder
from wormhole_ns3.models.workloads.text import WorkloadFileError, numbered_fields, parse_count, parse_int, shown

_UNITS = {"": 1.0, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9, "t": 1e12, "T": 1e12}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
#: Destination ports are 16-bit.
MAX_PORT = 65535


@dataclass(frozen=True)
class HpccLink:
    src: int
    dst: int
    rate_bps: float
    delay_s: float
    error_rate: float


@dataclass(frozen=True)
class HpccTopology:
    nodes: int
    switches: frozenset[int]
    links: tuple[HpccLink, ...]

    @property
    def hosts(self) -> list[int]:
        return [n for n in range(self.nodes) if n not in self.switches]

    def is_host(self, node: int) -> bool:
        """Whether ``node`` is one of ``hosts``, without building that list (a topology may declare 10^7 nodes)."""
        return 0 <= node < self.nodes and node not in self.switches


@dataclass(frozen=True)
class HpccFlow:
    src: int
    dst: int
    priority: int
    dport: int
    size: int
    start_s: float


def parse_rate(text: str) -> float:
    """``100Gbps`` -> 1e11 bit/s."""
    match = re.fullmatch(r"([0-9.]+(?:[eE][-+]?\d+)?)\s*([kKmMgGtT]?)(?:bps|b/s)?", text)
    rate = _finite(match.group(1)) * _UNITS[match.group(2)] if match else math.nan
    if not math.isfinite(rate):
        raise ValueError(f"not a data rate: {shown(text)} (expected e.g. 100Gbps)")
    return rate


def parse_time(text: str) -> float:
    """``0.001ms`` -> 1e-6 s."""
    match = re.fullmatch(r"([0-9.]+(?:[eE][-+]?\d+)?)\s*(s|ms|us|ns)", text)
    time = _finite(match.group(1)) * _TIME_UNITS[match.group(2)] if match else math.nan
    if not math.isfinite(time):
        raise ValueError(f"not a time: {shown(text)} (expected e.g. 0.001ms)")
    return time


def _finite(number: str) -> float:
    """The number the unit regexes matched; NaN for what float() refuses ('1..2'), so the caller's error names it."""
    try:
        return float(number)
    except ValueError:
        return math.nan


def _error_rate(text: str) -> float:
    """A link's packet error probability: a finite number (whether it is a probability, the fabric checks)."""
    rate = _finite(text)
    if not math.isfinite(rate):
        raise ValueError(f"error_rate must be a number, got {shown(text)}")
    return rate


def read_topology(path: str | Path) -> HpccTopology:
    path = Path(path)
    lines = list(numbered_fields(path))
    if not lines:
        raise WorkloadFileError(path, 1, "empty topology file (expected a header 'N S L')")
    number, header = lines[0]
    if len(header) != 3:
        raise WorkloadFileError(path, number, f"header must be 'N S L', got {shown(' '.join(header))}")
    nodes, n_switches, n_links = (parse_count(path, number, f, w) for f, w in zip(header, "NSL"))
    if len(lines) < 2:
        raise WorkloadFileError(path, number, "missing the line of switch ids")
    number, ids = lines[1]
    switches = [parse_int(path, number, f, "a switch id") for f in ids]
    if len(switches) != n_switches:
        raise WorkloadFileError(path, number, f"expected {n_switches} switch ids, got {len(switches)}")
    for node in switches:
        _check_node(path, number, node, nodes)
    links = []
    for number, fields in lines[2:]:
        if len(fields) != 5:
            raise WorkloadFileError(path, number, "a link is 'src dst rate delay error_rate'")
        src, dst = (parse_int(path, number, f, "a node id") for f in fields[:2])
        for node in (src, dst):
            _check_node(path, number, node, nodes)
        try:
            rate, delay, error = parse_rate(fields[2]), parse_time(fields[3]), _error_rate(fields[4])
        except ValueError as problem:
            raise WorkloadFileError(path, number, str(problem)) from None
        links.append(HpccLink(src, dst, rate, delay, error))
    if len(links) != n_links:
        raise WorkloadFileError(path, lines[-1][0], f"header says {n_links} links, file has {len(links)}")
    return HpccTopology(nodes, frozenset(switches), tuple(links))


def _check_node(path: Path, line: int, node: int, nodes: int) -> None:
    if not 0 <= node < nodes:
        raise WorkloadFileError(path, line, f"node {node} outside 0..{nodes - 1}")


def read_flows(path: str | Path, topology: HpccTopology | None = None) -> list[HpccFlow]:
    path = Path(path)
    lines = list(numbered_fields(path))
    if not lines:
        raise WorkloadFileError(path, 1, "empty flow file (expected the flow count)")
    number, header = lines[0]
    if len(header) != 1:
        raise WorkloadFileError(path, number, "the first line is the number of flows")
    count = parse_count(path, number, header[0], "the flow count")
    flows = []
    for number, fields in lines[1:]:
        if len(fields) != 6:
            raise WorkloadFileError(path, number, "a flow is 'src dst priority dport size start'")
        flow = _parse_flow(path, number, fields)
        if topology is not None:
            for node in (flow.src, flow.dst):
                if not topology.is_host(node):
                    raise WorkloadFileError(path, number, f"node {node} is not a host of the topology")
        flows.append(flow)
    if len(flows) != count:
        raise WorkloadFileError(path, lines[-1][0], f"first line says {count} flows, file has {len(flows)}")
    return flows


def _parse_flow(path: Path, number: int, fields: list[str]) -> HpccFlow:
    """One line ``src dst priority dport size start`` of a flow file, checked on its own."""
    src, dst, priority, dport = (
        parse_count(path, number, f, w) for f, w in zip(fields, ("src", "dst", "priority", "dport"))
    )
    size = parse_int(path, number, fields[4], "size")
    try:
        start = float(fields[5])
    except ValueError:
        start = math.nan
    if not math.isfinite(start):
        raise WorkloadFileError(path, number, f"start must be seconds, got {shown(fields[5])}")
    if size <= 0 or start < 0:
        raise WorkloadFileError(path, number, "size must be positive and start not negative")
    if dport > MAX_PORT:
        raise WorkloadFileError(path, number, f"dport must be at most {MAX_PORT}, got {dport}")
    return HpccFlow(src, dst, priority, dport, size, start)


def hpcc_flows_to_workload(flows: Sequence[HpccFlow], ranks: int | None = None, name: str = "hpcc") -> Workload:
    """HPCC flows as a task graph: independent flows, each starting at its start time.

    A flow is task i (file order), with no prerequisite and its start time as
    the delay after the graph starts; node ids are ranks (``ranks`` defaults
    to the largest id + 1). One iteration, ending when every flow is done, so
    the iteration time is the makespan. Each flow's priority group is its
    ``group`` label ("pg3"); priorities and destination ports are kept in the
    metadata, in flow order, for an ``fct.txt`` that names the same ports.
    """
    if not flows:
        raise ValueError("no HPCC flows to convert")
    ranks = ranks or max(max(f.src, f.dst) for f in flows) + 1
    metadata = {"source": "hpcc", "priorities": [f.priority for f in flows], "dports": [f.dport for f in flows]}
    builder = WorkloadBuilder(name, ranks, metadata)
    ids = [
        builder.add_flow(f.src, f.dst, f.size, delay=f.start_s, collective="sendrecv", group=f"pg{f.priority}")
        for f in flows
    ]
    builder.end_iteration(ids)
    return builder.build()


def _hex_ip(address: str) -> str:
    return "".join(f"{int(part):02x}" for part in address.split("."))


def write_fct(rows: Iterable[dict], path: str | Path) -> None:
    """Write HPCC-style ``fct.txt`` from flow rows (src, dst, sport, dport, bytes, start, fct).

    ``standalone_fct`` (the flow alone on an idle network) is taken from the
    row when present, else written as 0.
    """
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w") as out:
        for r in rows:
            if r.get("fct") is None:
                continue
            out.write(
                f"{_hex_ip(r['src'])} {_hex_ip(r['dst'])} {r['sport']} {r['dport']} {r['bytes']} "
                f"{round(r['start'] * 1e9)} {round(r['fct'] * 1e9)} "
                f"{round(r.get('standalone_fct', 0) * 1e9)}\n"
            )
    partial.replace(path)
