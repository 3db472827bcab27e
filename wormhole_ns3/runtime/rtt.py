"""Packet round-trip times of a run's flows along their bytes, and their NRMSE against a baseline's.

The Wormhole paper reports packet RTT NRMSE next to FCT errors. With ``--rtt``
both sides of a comparison record each flow's packet RTTs (a packet's first
transmission to the ACK that covers it, at the sender: a TCP socket, an RDMA
queue pair; C++ ``FlowRttMonitor``), averaged over every 1/20 of its bytes: bins by bytes line
the two runs up although a skip moves the accelerated flow's clock. Bins a skip
credits have no samples; a replayed flow sends no data and has no bins at all.
Both are left out of the NRMSE, which says over how many flows and bins it ran.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def rtt_bins(values: Iterable[float]) -> list[float | None] | None:
    """The monitor's bins as run.json holds them: None where a bin has no sample; None for a flow not followed."""
    bins = [float(v) if v >= 0 else None for v in values]
    return bins or None


#: A comparison's RTT fields when the runs did not record RTTs.
NOT_MEASURED: dict = {"rtt_nrmse": None, "rtt_flows": None, "rtt_bins": None}


def rtt_comparison(pairs: Iterable[tuple[list | None, list | None]]) -> dict:
    """RTT NRMSE over every bin both runs have: RMS difference over the baseline's mean RTT.

    ``pairs`` holds (baseline bins, accelerated bins) per flow.
    """
    base, fast, flows = [], [], 0
    for baseline, accelerated in pairs:
        if not baseline or not accelerated:
            continue
        both = [(b, a) for b, a in zip(baseline, accelerated) if b is not None and a is not None]
        if both:
            flows += 1
            base += [b for b, _ in both]
            fast += [a for _, a in both]
    if not base:
        return {"rtt_nrmse": None, "rtt_flows": 0, "rtt_bins": 0}
    b, a = np.asarray(base), np.asarray(fast)
    return {"rtt_nrmse": float(np.sqrt(np.mean((a - b) ** 2)) / np.mean(b)), "rtt_flows": flows,
            "rtt_bins": int(b.size)}


def rtt_line(summary: dict) -> str | None:
    """The RTT comparison in one line; None when the runs did not record RTTs."""
    if summary.get("rtt_flows") is None:
        return None
    if summary["rtt_nrmse"] is None:
        return "no flow has RTTs on both sides (replayed flows send no data)"
    return (f"NRMSE {summary['rtt_nrmse']:.4f} over {summary['rtt_flows']} flows "
            f"({summary['rtt_bins']} bins of 1/20 of a flow's bytes)")
