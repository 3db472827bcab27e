"""Small inputs in SimAI's formats, written here (not SimAI's files): a rail topology and workload files.

``rail_topology`` writes what SimAI's generator writes for a Spectrum-X-like
fabric: one NVSwitch per server, GPU i of every server on ToR (rail) i, every
ToR linked to every spine; NVSwitch ids first, then ToRs, then spines.
"""

from __future__ import annotations

from pathlib import Path


def rail_topology(path: Path, servers: int = 2, gpus_per_server: int = 4, spines: int = 2,
                  nic: str = "100Gbps", nvlink: str = "2400Gbps", uplink: str = "400Gbps",
                  delay: str = "0.0005ms", nvlink_delay: str = "0.000025ms", trailer: str = "") -> Path:
    gpus = servers * gpus_per_server
    nvswitches = list(range(gpus, gpus + servers))
    tors = list(range(nvswitches[-1] + 1, nvswitches[-1] + 1 + gpus_per_server))
    spine_ids = list(range(tors[-1] + 1, tors[-1] + 1 + spines))
    links = []
    for gpu in range(gpus):
        server, rail = divmod(gpu, gpus_per_server)
        links.append(f"{gpu} {nvswitches[server]} {nvlink} {nvlink_delay} 0")
        links.append(f"{gpu} {tors[rail]} {nic} {delay} 0")
    links += [f"{tor} {spine} {uplink} {delay} 0" for tor in tors for spine in spine_ids]
    nodes = gpus + servers + gpus_per_server + spines
    header = f"{nodes} {gpus_per_server} {servers} {gpus_per_server + spines} {len(links)} H100"
    ids = " ".join(str(i) for i in nvswitches + tors + spine_ids)
    path.write_text("\n".join([header, ids + " ", *links]) + "\n" + trailer)
    return path


def allreduce_workload(path: Path, gpus: int, tp: int, bytes_: int, layers: int = 1,
                       tp_bytes: int | None = None) -> Path:
    """A SimAI workload of ``layers`` layers, each a forward TP all-reduce and a DP weight-gradient all-reduce
    (of ``tp_bytes`` and ``bytes_``; compute 1 us per pass, update 100 ns)."""
    tp_bytes = bytes_ if tp_bytes is None else tp_bytes
    header = (f"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: {tp} ep: 1 pp: 1 ga: 1 "
              f"all_gpus: {gpus} checkpoints: 0 checkpoint_initiates: 0")
    lines = [f"layer{i} -1 1000 ALLREDUCE {tp_bytes} 1000 NONE 0 1000 ALLREDUCE {bytes_} 100"
             for i in range(layers)]
    path.write_text("\n".join([header, str(layers), *lines]) + "\n")
    return path
