"""What a run must tell its user before it starts: a workload with nothing to simulate, ranks that do not fit.

Each answer is one line, naming the cause and what to do about it, so a
script can print it as its error or warning.
"""

from __future__ import annotations

from wormhole_ns3.models.workloads.dag import Workload


def no_flows_reason(workload: Workload) -> str:
    """Why a workload moves nothing over the network (call it when ``workload.flows`` is empty)."""
    skipped = workload.metadata.get("skipped_tp", {})
    if skipped.get("collectives"):
        return (f"{workload.name} has no network flows: its {skipped['collectives']} collectives "
                f"({skipped['bytes'] / 1e9:.3f} GB) are all TP collectives, which --intra-server skip (the default, "
                "as in the Wormhole paper) leaves out; --intra-server nvlink keeps them")
    return f"{workload.name} has no network flows: none of its collectives moves a byte"


def rank_fit(ranks: int, hosts: int, fabric: str) -> tuple[str | None, str | None]:
    """(error, warning) for ``ranks`` ranks on ``fabric`` of ``hosts`` hosts: more ranks is an error, fewer a
    warning."""
    if ranks > hosts:
        return f"the workload has {ranks} ranks, {fabric} has only {hosts} hosts", None
    if ranks < hosts:
        return None, f"the workload has {ranks} ranks, {fabric} has {hosts} hosts: hosts {ranks}..{hosts - 1} " \
                     "(by rank) stay idle"
    return None, None
