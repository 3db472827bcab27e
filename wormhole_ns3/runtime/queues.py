"""Queue occupancy of a run's ports, and how far an accelerated run's is from its baseline's.

A network researcher reads queues, not only completion times. Both sides of a
comparison follow every point-to-point port (C++ ``PortQueueMonitor``, with
``--queues``); each port's occupancy is weighted by how long it lasted, over the
time the port held at least one packet (an idle port's zeros, between bursts and
after the traffic, would make every median 0). A skip keeps a partition's
queues as they were, so their length lasts the skip; a replayed episode sends no
packets, so its ports stay empty: what the memo and the skips do to queues shows
here, port by port.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PortQueue:
    """One port's occupancy while it held packets: link id, median and 99th percentile (packets), how long (s)."""

    link: int
    p50: int
    p99: int
    occupied_s: float
    #: Which of the process's simulations the port was in (link ids start again after ``Simulator::Destroy()``).
    simulation: int = 0


def time_weighted_percentile(packets: Sequence[int], durations: Sequence[int], q: float) -> int:
    """The occupancy the port held at or below for a fraction ``q`` of the time ``durations`` cover."""
    weights = np.asarray(durations, dtype=float)
    reached = np.cumsum(weights) >= q * weights.sum() * (1 - 1e-12)
    return int(np.asarray(packets)[int(np.argmax(reached))])


def port_queues(records: Iterable[Any]) -> list[PortQueue]:
    """Each port's percentiles while it held packets, from the monitor's records (link, packets, durations).

    A port that never held a packet is left out.
    """
    ports = []
    for record in records:
        held = [(int(p), int(d)) for p, d in zip(record.packets, record.durations) if p > 0 and d > 0]
        if not held:
            continue
        packets, durations = [p for p, _ in held], [d for _, d in held]
        ports.append(PortQueue(
            link=int(record.link),
            p50=time_weighted_percentile(packets, durations, 0.5),
            p99=time_weighted_percentile(packets, durations, 0.99),
            occupied_s=sum(durations) * 1e-9,
        ))
    return sorted(ports, key=lambda port: port.link)


def as_results(ports: list[PortQueue]) -> list[dict]:
    return [asdict(port) for port in ports]


def _port_key(port: dict) -> tuple[int, int]:
    """A port's simulation and link (results written before simulations were numbered hold one)."""
    return port.get("simulation", 0), port["link"]


def queue_comparison(baseline: list[dict], accelerated: list[dict]) -> dict:
    """Per port that held packets in the baseline, the accelerated run's p50 and p99 error, in packets.

    A port the accelerated run never loaded counts as empty all along. How long
    each side's ports held packets is compared too: the total difference over the
    baseline's total.
    """
    accel = {_port_key(port): port for port in accelerated}
    rows = []
    for base in baseline:
        fast = accel.get(_port_key(base), {"p50": 0, "p99": 0, "occupied_s": 0.0})
        rows.append({"link": base["link"], "p50_baseline": base["p50"], "p50_accelerated": fast["p50"],
                     "p99_baseline": base["p99"], "p99_accelerated": fast["p99"],
                     "occupied_s_baseline": base["occupied_s"], "occupied_s_accelerated": fast["occupied_s"]})
    p50 = [abs(r["p50_accelerated"] - r["p50_baseline"]) for r in rows]
    p99 = [abs(r["p99_accelerated"] - r["p99_baseline"]) for r in rows]
    return {
        "busy_ports": len(rows),
        "p50_abs_err_mean": float(np.mean(p50)) if rows else None,
        "p50_abs_err_max": max(p50) if rows else None,
        "p99_abs_err_mean": float(np.mean(p99)) if rows else None,
        "p99_abs_err_max": max(p99) if rows else None,
        # weighted by how long each port held packets in the baseline: a port that held one
        # packet for a microsecond does not count as much as a bottleneck
        "occupied_rel_err": (sum(abs(r["occupied_s_accelerated"] - r["occupied_s_baseline"]) for r in rows)
                             / sum(r["occupied_s_baseline"] for r in rows)) if rows else None,
        "ports": rows,
    }


def queue_line(summary: dict) -> str | None:
    """The queue comparison in one line; None when the runs did not measure queues."""
    queues = summary.get("queues")
    if not queues:
        return None
    if not queues["busy_ports"]:
        return "no port held a packet in the baseline"
    return (f"over {queues['busy_ports']} ports that held packets, p50 off by {queues['p50_abs_err_mean']:.1f} "
            f"packets on average (max {queues['p50_abs_err_max']}), p99 by {queues['p99_abs_err_mean']:.1f} "
            f"(max {queues['p99_abs_err_max']}); time holding packets off by {queues['occupied_rel_err']:.1%}")
