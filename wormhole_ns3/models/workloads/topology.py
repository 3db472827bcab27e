"""Topology files of HPCC's ns-3 simulator and of SimAI's topology generator, read as their simulators read them.

HPCC: a header ``N S L`` (nodes, switches, links), the S switch ids, then L
links ``src dst rate delay error_rate`` (``100Gbps 0.001ms 0``).

SimAI (``gen_Topo_Template.py``: Spectrum-X, DCN+, AlibabaHPN, ...): a header
``N G V S L TYPE`` (nodes, GPUs per server, NVSwitches, switches, links, GPU
type such as ``H100``), the V NVSwitch ids followed by the S switch ids, then
L links in HPCC's form; a GPU's links to its server's NVSwitches are NVLink
(``2880Gbps``).

Both simulators read the counted items and stop: whatever follows the L-th
link (HPCC ships its files with help text there) is not part of the
topology, so it is not read here either. Ids may span lines, as the
simulators read them as a stream of numbers; each link is one line.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from wormhole_ns3.models.workloads.text import WorkloadFileError, numbered_fields, parse_count, parse_int, shown

_UNITS = {"": 1.0, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "g": 1e9, "G": 1e9, "t": 1e12, "T": 1e12}
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
HPCC_HEADER = "N S L"
SIMAI_HEADER = "nodes gpus_per_server nvswitches switches links gpu_type"


@dataclass(frozen=True)
class HpccLink:
    src: int
    dst: int
    rate_bps: float
    delay_s: float
    error_rate: float


@dataclass(frozen=True)
class HpccTopology:
    """Nodes 0..nodes-1; every node not in ``switches`` is a host (a GPU in SimAI's files).

    ``switches`` holds every forwarding node, NVSwitches included;
    ``nvswitches`` is the part of it SimAI declares as NVSwitches (empty for
    HPCC's files), and ``gpus_per_server`` is SimAI's (None for HPCC's).
    """

    nodes: int
    switches: frozenset[int]
    links: tuple[HpccLink, ...]
    nvswitches: frozenset[int] = frozenset()
    gpus_per_server: int | None = None
    gpu_type: str = ""

    @property
    def hosts(self) -> list[int]:
        return [n for n in range(self.nodes) if n not in self.switches]

    def is_host(self, node: int) -> bool:
        """Whether ``node`` is one of ``hosts``, without building that list (a topology may declare 10^7 nodes)."""
        return 0 <= node < self.nodes and node not in self.switches

    def is_nvlink(self, link: HpccLink) -> bool:
        """Whether the link is inside a server: it has an NVSwitch at one end."""
        return link.src in self.nvswitches or link.dst in self.nvswitches


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


@dataclass(frozen=True)
class _Header:
    nodes: int
    nvswitches: int
    switches: int
    links: int
    gpus_per_server: int | None = None
    gpu_type: str = ""


def _header(path: Path, number: int, fields: list[str]) -> _Header:
    """HPCC's ``N S L`` or SimAI's six fields, told apart by their count."""
    if len(fields) == 3:
        nodes, switches, links = (parse_count(path, number, f, w) for f, w in zip(fields, "NSL"))
        return _Header(nodes, 0, switches, links)
    if len(fields) == 6:
        nodes, per_server, nvswitches, switches, links = (
            parse_count(path, number, f, w) for f, w in zip(fields[:5], SIMAI_HEADER.split())
        )
        if per_server < 1:
            raise WorkloadFileError(path, number, "gpus_per_server must be at least 1, got 0")
        return _Header(nodes, nvswitches, switches, links, per_server, fields[5])
    raise WorkloadFileError(
        path, number,
        f"header must be HPCC's '{HPCC_HEADER}' or SimAI's '{SIMAI_HEADER}', got {shown(' '.join(fields))}",
    )


def read_topology(path: str | Path) -> HpccTopology:
    """Read an HPCC or SimAI topology file; a malformed one raises WorkloadFileError with file:line."""
    path = Path(path)
    lines = numbered_fields(path)
    first = next(lines, None)
    if first is None:
        raise WorkloadFileError(path, 1, f"empty topology file (expected a header '{HPCC_HEADER}')")
    number, fields = first
    header = _header(path, number, fields)
    kinds = "NVSwitch and switch ids" if header.gpus_per_server is not None else "switch ids"
    ids, number = _ids(path, lines, header.nvswitches + header.switches, number, kinds)
    for node in ids:
        _check_node(path, number, node, header.nodes)
    links: list[HpccLink] = []
    for number, fields in lines:
        if len(links) == header.links:
            break  # the counted links are read; the rest is not part of the topology
        links.append(_link(path, number, fields, header.nodes))
    if len(links) != header.links:
        raise WorkloadFileError(path, number, f"header says {header.links} links, file has {len(links)}")
    return HpccTopology(
        nodes=header.nodes, switches=frozenset(ids), links=tuple(links),
        nvswitches=frozenset(ids[: header.nvswitches]),
        gpus_per_server=header.gpus_per_server, gpu_type=header.gpu_type,
    )


def _ids(path: Path, lines: Iterator[tuple[int, list[str]]], count: int, number: int,
         kinds: str) -> tuple[list[int], int]:
    """``count`` ids from the lines after the header (they may span lines); the ids and the last line read."""
    ids: list[int] = []
    while len(ids) < count:
        line = next(lines, None)
        if line is None:
            raise WorkloadFileError(path, number, f"expected {count} {kinds}, the file ends after {len(ids)}")
        number, fields = line
        ids += [parse_int(path, number, f, "a switch id") for f in fields]
    if len(ids) != count:
        raise WorkloadFileError(path, number, f"expected {count} {kinds}, got {len(ids)}")
    return ids, number


def _link(path: Path, number: int, fields: list[str], nodes: int) -> HpccLink:
    if len(fields) != 5:
        raise WorkloadFileError(path, number, "a link is 'src dst rate delay error_rate'")
    src, dst = (parse_int(path, number, f, "a node id") for f in fields[:2])
    for node in (src, dst):
        _check_node(path, number, node, nodes)
    try:
        rate, delay, error = parse_rate(fields[2]), parse_time(fields[3]), _error_rate(fields[4])
    except ValueError as problem:
        raise WorkloadFileError(path, number, str(problem)) from None
    return HpccLink(src, dst, rate, delay, error)


def _check_node(path: Path, line: int, node: int, nodes: int) -> None:
    if not 0 <= node < nodes:
        raise WorkloadFileError(path, line, f"node {node} outside 0..{nodes - 1}")
