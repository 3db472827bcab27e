"""Inputs users already have: readers for existing topology and flow file formats."""

from .hpcc import HpccFlow, HpccLink, HpccTopology, WorkloadFileError, read_flows, read_topology, write_fct

__all__ = [
    "HpccFlow",
    "HpccLink",
    "HpccTopology",
    "WorkloadFileError",
    "read_flows",
    "read_topology",
    "write_fct",
]
