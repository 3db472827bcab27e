"""LLM training iterations on a datacenter fabric: an ordinary ns-3 script.

The workload (GPT or MoE training steps from a preset, a SimAI/AICB workload
file, MLCommons Chakra execution traces, or an HPCC-ns-3 flow file) is a graph
of flows and compute tasks; an
ns3::FlowDag starts each flow when what it waits for is done. The fabric is
rail-optimized by default (each GPU a host, GPU i of every server on rail i),
with DCTCP over ECN-marking switch queues (or RoCEv2 with DCQCN or HPCC:
--transport dcqcn) and ECMP by flow hash.

    python experiments/llm_training.py --preset gpt-small            # plain ns-3
    wormhole-ns3 run experiments/llm_training.py --preset gpt-small  # accelerated
    wormhole-ns3 compare experiments/llm_training.py -- --preset moe-small --transport dcqcn
    wormhole-ns3 experiment compare llm-training --preset gpt-small --out results/

Prints the workload and fabric, then one line per iteration with its time, and
the tasks finished. With --results-dir, every finished flow and iteration is
also appended to CSV files there as the run goes (see wormhole_ns3.tools.experiment).
"""

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from ns import ns

from wormhole_ns3.models.fabric import (
    CONGESTION_CONTROLS,
    RDMA_CONGESTION_CONTROLS,
    FabricSpecError,
    FatTree,
    HpccTopologyFile,
    LeafSpine,
    QueueConfig,
    RailOptimized,
    RdmaTransportConfig,
    TransportConfig,
    build_fabric,
)
from wormhole_ns3.models.fabric.standalone import StandaloneFct
from wormhole_ns3.models.workloads import (
    WorkloadFileError,
    chakra_to_workload,
    fct_dport,
    hpcc_flows_to_workload,
    list_presets,
    no_flows_reason,
    preset_workload,
    rank_fit,
    read_chakra_trace,
    read_flows,
    read_simai_workload,
    simai_to_workload,
)
from wormhole_ns3.models.workloads.flowdag import WorkloadRun
from wormhole_ns3.runtime import native

#: GPUs per server when the workload does not say (SimAI and HPCC inputs).
GPUS_PER_SERVER = 8
INTRA_SERVER = ("skip", "nvlink")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--preset", default="gpt-small",
                        help="a workload preset (--list shows them; default %(default)s)")
    source.add_argument("--simai", type=Path, metavar="FILE", help="a SimAI / AICB workload file")
    source.add_argument("--chakra", type=Path, metavar="DIR_OR_PREFIX",
                        help="MLCommons Chakra execution traces, PREFIX.<rank>.et (or a folder of them): "
                             "what ASTRA-sim runs; rank r is host r as for --simai")
    source.add_argument("--hpcc-flows", type=Path, metavar="FILE",
                        help="an HPCC-ns-3 flow file (needs --topology-file)")
    parser.add_argument("--topology-file", "--hpcc-topology", dest="topology_file", type=Path, metavar="FILE",
                        help="the fabric from a topology file of SimAI's generator or of HPCC-ns-3; "
                             "rank r is its r-th GPU (host) by node id")
    parser.add_argument("--intra-server", choices=INTRA_SERVER, default="skip",
                        help="traffic inside a server: skip leaves out TP collectives and NVLink, as the "
                             "Wormhole paper does; nvlink keeps them, over the topology file's NVLink "
                             "(default %(default)s)")
    parser.add_argument("--list", action="store_true", help="list the presets and exit")
    parser.add_argument("--iterations", type=int, help="training iterations (default: the preset's)")
    parser.add_argument("--dp-buckets", type=int, metavar="N",
                        help="a preset's gradient buckets per pipeline stage: 1 is the Wormhole paper's shape, "
                             "one all-reduce after the whole backward (default: the preset's)")
    parser.add_argument("--topology", choices=("rail", "leaf-spine", "fat-tree"), default="rail",
                        help="fabric for the ranks (default %(default)s)")
    parser.add_argument("--rate-gbps", type=float, default=100, help="host link rate (default %(default)s)")
    parser.add_argument("--delay-us", type=float, default=1, help="per-link delay (default %(default)s)")
    parser.add_argument("--oversubscription", type=float, default=1.0,
                        help="leaf downlink / uplink capacity (default %(default)s)")
    parser.add_argument("--transport", choices=sorted(CONGESTION_CONTROLS) + sorted(RDMA_CONGESTION_CONTROLS),
                        default="dctcp",
                        help="TCP congestion control, or RDMA (RoCEv2) with dcqcn or hpcc "
                             "(default %(default)s)")
    parser.add_argument("--segment-bytes", type=int, default=1448, help="TCP segment size")
    parser.add_argument("--buffer-mb", type=float, default=8, help="socket send/receive buffers")
    parser.add_argument("--ecn-k", type=int, metavar="PACKETS",
                        help="ECN marking threshold at switch ports (default: C x RTT / 7)")
    parser.add_argument("--results-dir", type=Path, metavar="DIR",
                        help="append each finished flow and iteration to CSV files here")
    args = parser.parse_args(argv)
    if args.list:
        for name, description in list_presets().items():
            print(f"{name:16} {description}")
        sys.exit(0)
    if args.hpcc_flows and not args.topology_file:
        parser.error("--hpcc-flows needs --topology-file (or --hpcc-topology), the fabric its node ids name")
    if args.iterations is not None and args.iterations < 1:
        parser.error("--iterations must be at least 1")
    if args.dp_buckets is not None and (args.simai or args.hpcc_flows or args.chakra):
        parser.error("--dp-buckets shapes a preset's gradient all-reduce; a workload file has its own")
    if args.iterations is not None and args.chakra:
        parser.error("--iterations repeats a preset's or a SimAI file's iteration; a Chakra trace has its own "
                     "(a barrier of every rank ends one)")
    if args.ecn_k is not None and args.transport in RDMA_CONGESTION_CONTROLS:
        parser.error("--ecn-k is DCTCP's marking threshold; RDMA switch ports mark between Kmin "
                     "and Kmax")
    return args


def transport_config(args):
    """The transport the options ask for: RoCEv2 for dcqcn and hpcc, TCP otherwise."""
    if args.transport in RDMA_CONGESTION_CONTROLS:
        return RdmaTransportConfig(congestion_control=args.transport)
    return TransportConfig(
        congestion_control=args.transport, segment_bytes=args.segment_bytes,
        send_buffer_bytes=int(args.buffer_mb * 2**20), receive_buffer_bytes=int(args.buffer_mb * 2**20),
    )


def topology_file(args):
    """The fabric of --topology-file, or None; a bad file exits with one clear line."""
    if args.topology_file is None:
        return None
    try:
        return HpccTopologyFile(args.topology_file, nvlink=args.intra_server == "nvlink")
    except FabricSpecError as problem:
        sys.exit(f"llm_training.py: error: {problem}")


def load_workload(args, topology=None):
    """The workload the options ask for; a bad file or name exits with one clear line."""
    try:
        if args.simai:
            per_server = topology.gpus_per_server if topology is not None else None
            return simai_to_workload(read_simai_workload(args.simai), iterations=args.iterations or 1,
                                     gpus_per_server=per_server or GPUS_PER_SERVER,
                                     include_tp=args.intra_server == "nvlink", name=args.simai.stem)
        if args.chakra:
            per_server = topology.gpus_per_server if topology is not None else None
            return chakra_to_workload(read_chakra_trace(args.chakra), gpus_per_server=per_server,
                                      include_tp=args.intra_server == "nvlink")
        if args.hpcc_flows:
            ranks = {node: rank for rank, node in enumerate(topology.topology.hosts)}
            flows = [replace(f, src=ranks[f.src], dst=ranks[f.dst])
                     for f in read_flows(args.hpcc_flows, topology.topology)]
            return hpcc_flows_to_workload(flows, ranks=len(ranks), name=args.hpcc_flows.stem)
        return preset_workload(args.preset, iterations=args.iterations, dp_buckets=args.dp_buckets)
    except (WorkloadFileError, ValueError, KeyError) as problem:
        sys.exit(f"llm_training.py: error: {problem}")


def check_ranks(workload, spec) -> None:
    """More ranks than the fabric has hosts is an error; fewer leaves hosts idle, which is said."""
    where = f"the topology {spec.path}" if isinstance(spec, HpccTopologyFile) else "the fabric"
    error, warning = rank_fit(workload.ranks, spec.host_count, where)
    if error:
        sys.exit(f"llm_training.py: error: {error}")
    if warning:
        print(f"llm_training.py: warning: {warning}", file=sys.stderr)


def fabric_spec(args, workload, topology=None):
    """The fabric for the workload's GPUs: the topology file, or every rank one host, servers as the workload has them.

    Rank r is GPU r % g of server r // g (g GPUs per server), so a rail-optimized
    fabric puts it on rail r % g: where the workload's data- and pipeline-parallel
    groups expect it.
    """
    if topology is not None:
        return topology
    ranks = workload.ranks
    per_server = workload.metadata.get("parallelism", {}).get("gpus_per_server", GPUS_PER_SERVER)
    per_server = min(ranks, per_server)
    timing = {"rate_gbps": args.rate_gbps, "delay_us": args.delay_us}
    if args.topology == "rail":
        return RailOptimized(servers=-(-ranks // per_server), gpus_per_server=per_server,
                             oversubscription=args.oversubscription, **timing)
    if args.topology == "leaf-spine":
        return LeafSpine(leaves=-(-ranks // per_server), hosts_per_leaf=per_server,
                         oversubscription=args.oversubscription, **timing)
    k = 2
    while k**3 // 4 < ranks:
        k += 2
    return FatTree(k=k, hosts=ranks, **timing)


def fct_labels(workload, fabric, topology, run):
    """What fct.txt names: HPCC's node ids, HPCC's destination ports (``fct_dport``), standalone FCTs on this fabric."""
    from wormhole_ns3.tools.experiment.results import FctLabels

    standalone = StandaloneFct(fabric.layout, fabric.transport.packet_bytes)
    tasks = workload.tasks

    def ports(task):
        return int(run.dag.GetSourcePort(task)), fct_dport(workload.metadata, task)

    def standalone_s(task):
        t = tasks[task]
        return standalone.seconds(t.src, t.dst, t.bytes)

    node_ids = topology.topology.hosts if topology is not None else range(workload.ranks)
    return FctLabels(node_ids=node_ids, ports=ports, standalone_s=standalone_s)


def main(argv=None):
    args = parse_args(argv)
    topology = topology_file(args)
    workload = load_workload(args, topology)
    if not workload.flows:
        sys.exit(f"llm_training.py: error: {no_flows_reason(workload)}")
    spec = fabric_spec(args, workload, topology)
    check_ranks(workload, spec)
    native.load()  # FlowDag, flow-hash ECMP routing and the RDMA models
    # ns-3's random streams run under its defaults (seed 1, run 1) or the RngRun that
    # NS_GLOBAL_VALUE gives: experiment compare --seeds runs the preset under others
    try:
        transport = transport_config(args)
        fabric = build_fabric(ns, spec, QueueConfig(ecn_threshold_packets=args.ecn_k), transport)
    except FabricSpecError as problem:
        sys.exit(f"llm_training.py: error: {problem}")
    print(f"workload  {workload.name}: {workload.ranks} ranks, {len(workload.flows)} flows, "
          f"{workload.total_bytes / 1e9:.3f} GB, {workload.iterations} iterations")
    print(f"fabric    {fabric.describe()}")

    writer = None
    ends = {task: k for k, task in enumerate(workload.iteration_ends)}
    finished_at = {}

    def task_finished(task, start, finish):
        if writer is not None:
            writer.task_finished(task, start, finish)
        if task in ends:
            finished_at[ends[task]] = finish

    run = WorkloadRun(ns, workload, fabric.hosts, on_finish=task_finished, transport=transport)
    if args.results_dir:
        from wormhole_ns3.tools.experiment.results import ResultWriter

        writer = ResultWriter(args.results_dir, workload, fct=fct_labels(workload, fabric, topology, run))
    run.start()
    ns.Simulator.Run()
    previous = 0.0
    for k in range(workload.iterations):
        if k not in finished_at:
            print(f"iteration {k} did not finish")
            continue
        print(f"iteration {k} time {finished_at[k] - previous:.9f} s")
        previous = finished_at[k]
    print(f"tasks finished {run.finished_tasks} of {len(workload.tasks)}")
    ns.Simulator.Destroy()
    if writer is not None:
        writer.close()


if __name__ == "__main__":
    main()
