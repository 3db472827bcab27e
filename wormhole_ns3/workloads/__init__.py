"""Training workloads as dependency graphs of flows and compute, and readers for existing input formats."""

from .collectives import all_to_all, ring_allgather, ring_allreduce, ring_reducescatter, send_recv
from .dag import Task, Workload, WorkloadBuilder
from .hpcc import HpccFlow, HpccLink, HpccTopology, hpcc_flows_to_workload, read_flows, read_topology, write_fct
from .estimate import PlainNs3Estimate, estimate_plain_ns3
from .ideal import IdealSchedule, ideal_schedule
from .models import ComputeModel, DenseModel, MoeModel, Parallelism, one_f_one_b, training_workload
from .presets import list_presets, preset_workload
from .simai import Communication, SimaiLayer, SimaiWorkload, read_simai_workload, simai_to_workload
from .text import WorkloadFileError

__all__ = [
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
]
