"""HPCC-ns-3 input and output files, so existing experiment inputs and FCT analyses keep working.

Topology files: see ``topology``. Flow file: a line with the flow count F,
then F lines ``src dst priority dport size start`` (size in bytes, start in
seconds); HPCC reads those F flows and nothing after them. FCT output: one
line per flow, ``sip dip sport dport size start_ns fct_ns standalone_fct_ns``
with IPv4 addresses in hexadecimal, as HPCC's analysis scripts read it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wormhole_ns3.models.workloads.dag import Workload, WorkloadBuilder
from wormhole_ns3.models.workloads.text import WorkloadFileError, numbered_fields, parse_count, parse_int, shown
from wormhole_ns3.models.workloads.topology import HpccTopology

#: Destination ports are 16-bit.
MAX_PORT = 65535
#: The dport of an ordinary flow in HPCC's files: its traffic generator gives
#: it every flow (200 marks incast), SimAI's ns-3 backend every flow it sends,
#: and HPCC's ``fct_analysis.py`` keeps only flows of dport 100 (200 with -t 1).
ORDINARY_DPORT = 100


@dataclass(frozen=True)
class HpccFlow:
    src: int
    dst: int
    priority: int
    dport: int
    size: int
    start_s: float


def read_flows(path: str | Path, topology: HpccTopology | None = None) -> list[HpccFlow]:
    """The counted flows of an HPCC flow file; what follows the F-th flow is not read, as HPCC does not read it."""
    path = Path(path)
    lines = numbered_fields(path)
    first = next(lines, None)
    if first is None:
        raise WorkloadFileError(path, 1, "empty flow file (expected the flow count)")
    number, header = first
    if len(header) != 1:
        raise WorkloadFileError(path, number, "the first line is the number of flows")
    count = parse_count(path, number, header[0], "the flow count")
    flows: list[HpccFlow] = []
    for number, fields in lines:
        if len(flows) == count:
            break
        if len(fields) != 6:
            raise WorkloadFileError(path, number, "a flow is 'src dst priority dport size start'")
        flow = _parse_flow(path, number, fields)
        if topology is not None:
            for node in (flow.src, flow.dst):
                if not topology.is_host(node):
                    raise WorkloadFileError(path, number, f"node {node} is not a host of the topology")
        flows.append(flow)
    if len(flows) != count:
        raise WorkloadFileError(path, number, f"first line says {count} flows, file has {len(flows)}")
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


def fct_dport(metadata: Mapping[str, Any], task: int) -> int:
    """The dport ``fct.txt`` gives flow task ``task``: its flow file's, else an ordinary flow's.

    A workload read from an HPCC flow file keeps its dports in the metadata
    (``hpcc_flows_to_workload``). Any other flow is written as HPCC and SimAI
    write theirs, with ``ORDINARY_DPORT``, not the port the flow uses on the
    fabric (RoCEv2's 4791, a TCP listener's): HPCC's analysis selects flows
    by this column and would find none.
    """
    dports = metadata.get("dports")
    return ORDINARY_DPORT if dports is None else int(dports[task])


def _hex_ip(address: str) -> str:
    return "".join(f"{int(part):02x}" for part in address.split("."))


def hpcc_address(node_id: int) -> str:
    """The address HPCC gives node ``node_id`` (11.x.y.1 from the id), as fct.txt shows it: 8 hex digits."""
    return f"{0x0B000001 + (node_id // 256) * 0x10000 + (node_id % 256) * 0x100:08x}"


def fct_line(sip: str, dip: str, sport: int, dport: int, size: int, start_s: float, fct_s: float,
             standalone_s: float) -> str:
    """One line of ``fct.txt``: addresses as 8 hex digits, times in integer nanoseconds."""
    return (f"{sip} {dip} {sport} {dport} {size} {round(start_s * 1e9)} {round(fct_s * 1e9)} "
            f"{round(standalone_s * 1e9)}\n")


def write_fct(rows: Iterable[dict], path: str | Path) -> None:
    """Write HPCC-style ``fct.txt`` from flow rows (src, dst, sport, dport, bytes, start, fct).

    The addresses are the rows' own (IPv4 dotted); ``standalone_fct`` (the
    flow alone on an idle network) is taken from the row when present, else
    written as 0. A script that knows its flows' node ids and paths writes a
    better one as it runs (``ResultWriter``).
    """
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    with partial.open("w") as out:
        for r in rows:
            if r.get("fct") is None:
                continue
            out.write(fct_line(_hex_ip(r["src"]), _hex_ip(r["dst"]), r["sport"], r["dport"], r["bytes"],
                               r["start"], r["fct"], r.get("standalone_fct", 0)))
    partial.replace(path)
