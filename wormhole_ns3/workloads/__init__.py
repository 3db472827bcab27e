"""Inputs users already have: readers for existing topology and flow file formats."""

from .hpcc import HpccFlow, HpccLink, HpccTopology, read_flows, read_topology, write_fct
from .simai import Communication, SimaiLayer, SimaiWorkload, read_simai_workload
from .text import WorkloadFileError

__all__ = [
    "Communication",
    "SimaiLayer",
    "SimaiWorkload",
    "read_simai_workload",
    "HpccFlow",
    "HpccLink",
    "HpccTopology",
    "WorkloadFileError",
    "read_flows",
    "read_topology",
    "write_fct",
]
