"""Training workloads as dependency graphs of flows and compute, and readers for existing input formats."""

from wormhole_ns3.models.workloads.chakra import ChakraTrace, ChakraTraceError, read_chakra_trace
from wormhole_ns3.models.workloads.chakra_export import write_chakra_trace
from wormhole_ns3.models.workloads.chakra_graph import chakra_to_workload
from wormhole_ns3.models.workloads.checks import no_flows_reason, rank_fit
from wormhole_ns3.models.workloads.collectives import (
    all_to_all,
    ring_allgather,
    ring_allreduce,
    ring_broadcast,
    ring_reducescatter,
    send_recv,
)
from wormhole_ns3.models.workloads.dag import Task, Workload, WorkloadBuilder
from wormhole_ns3.models.workloads.estimate import PlainNs3Estimate, estimate_plain_ns3
from wormhole_ns3.models.workloads.hpcc import (
    HpccFlow,
    fct_dport,
    fct_line,
    hpcc_address,
    hpcc_flows_to_workload,
    read_flows,
    write_fct,
)
from wormhole_ns3.models.workloads.ideal import IdealSchedule, ideal_schedule
from wormhole_ns3.models.workloads.models import (
    ComputeModel,
    DenseModel,
    MoeModel,
    Parallelism,
    one_f_one_b,
    training_workload,
)
from wormhole_ns3.models.workloads.presets import list_presets, preset_workload
from wormhole_ns3.models.workloads.simai import (
    Communication,
    SimaiLayer,
    SimaiWorkload,
    read_simai_workload,
    simai_to_workload,
)
from wormhole_ns3.models.workloads.text import WorkloadFileError
from wormhole_ns3.models.workloads.topology import HpccLink, HpccTopology, read_topology

__all__ = [
    "ChakraTrace",
    "ChakraTraceError",
    "chakra_to_workload",
    "read_chakra_trace",
    "write_chakra_trace",
    "Task",
    "Workload",
    "WorkloadBuilder",
    "IdealSchedule",
    "PlainNs3Estimate",
    "estimate_plain_ns3",
    "ideal_schedule",
    "all_to_all",
    "ring_allgather",
    "ring_allreduce",
    "ring_broadcast",
    "ring_reducescatter",
    "send_recv",
    "ComputeModel",
    "DenseModel",
    "MoeModel",
    "Parallelism",
    "one_f_one_b",
    "training_workload",
    "list_presets",
    "preset_workload",
    "Communication",
    "SimaiLayer",
    "SimaiWorkload",
    "read_simai_workload",
    "simai_to_workload",
    "HpccFlow",
    "HpccLink",
    "HpccTopology",
    "hpcc_flows_to_workload",
    "WorkloadFileError",
    "read_flows",
    "read_topology",
    "write_fct",
    "fct_line",
    "fct_dport",
    "no_flows_reason",
    "rank_fit",
    "hpcc_address",
]
