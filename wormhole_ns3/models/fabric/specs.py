"""What fabric to build: small frozen specifications, checked when they are made.

A spec says only what a person chooses (sizes, rates, oversubscription); the
layout module derives nodes and links from it. Invalid values raise
FabricSpecError with one line that names the field and the rule, before ns-3
is touched, so a typo in an experiment fails in milliseconds.

Rates are in Gbit/s and delays in microseconds because that is how fabrics
are described; each spec's ``rate_gbps`` is the host link rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from wormhole_ns3.models.workloads import HpccLink, HpccTopology, WorkloadFileError, read_topology


class FabricSpecError(ValueError):
    """A fabric specification that cannot be built; the message says which field and why."""


def _require(condition: bool, problem: str) -> None:
    if not condition:
        raise FabricSpecError(problem)


def require_at_least_one(spec, *fields: str) -> None:
    """Each named field of ``spec`` must be a count of at least 1."""
    for name in fields:
        value = getattr(spec, name)
        _require(value >= 1, f"{name} must be at least 1, got {value}")


def _whole(value: float) -> bool:
    return math.isclose(value, round(value), rel_tol=0, abs_tol=1e-9)


@dataclass(frozen=True, kw_only=True)
class LinkTiming:
    """Host link rate and the propagation delay of every link."""

    rate_gbps: float = 100.0
    delay_us: float = 1.0

    def __post_init__(self) -> None:
        _require(self.rate_gbps > 0, f"rate_gbps must be positive, got {self.rate_gbps}")
        _require(self.delay_us >= 0, f"delay_us must not be negative, got {self.delay_us}")


class _TwoTier:
    """The uplink rule shared by two-tier fabrics (needs hosts_per_leaf, rate_gbps, spines
    and oversubscription).

    A leaf's uplink capacity is its downlink capacity divided by the
    oversubscription, spread evenly over one link per spine. Without an
    explicit spine count, uplinks run at the host rate (so there are
    hosts_per_leaf / oversubscription spines), as in a classic Clos.
    """

    # fields of the dataclasses this rule is mixed into (RailOptimized derives hosts_per_leaf)
    rate_gbps: float
    spines: int | None
    oversubscription: float
    delay_us: float

    if TYPE_CHECKING:  # declared only for type checkers: a real property would become the fields' default
        @property
        def hosts_per_leaf(self) -> int: ...

    @cached_property
    def uplinks(self) -> tuple[int, float]:
        """(number of spines, uplink rate in Gbit/s)."""
        _require(self.oversubscription > 0,
                 f"oversubscription must be positive, got {self.oversubscription}")
        spines = self.spines
        if spines is None:
            count = self.hosts_per_leaf / self.oversubscription
            _require(_whole(count) and count >= 1,
                     f"{self.hosts_per_leaf} hosts per leaf / oversubscription "
                     f"{self.oversubscription} is not a whole number of spines: give spines "
                     "explicitly")
            spines = round(count)
        _require(spines >= 1, f"spines must be at least 1, got {spines}")
        return spines, self.hosts_per_leaf * self.rate_gbps / self.oversubscription / spines

    def _uplink_summary(self) -> str:
        spines, uplink = self.uplinks
        return (f"{spines} spines; host links {self.rate_gbps:g} Gbps, uplinks {uplink:g} Gbps "
                f"(oversubscription {self.oversubscription:g}); delay {self.delay_us:g} us")


@dataclass(frozen=True, kw_only=True)
class LeafSpine(LinkTiming, _TwoTier):
    """Two-tier Clos: every leaf has hosts_per_leaf hosts and one link to each spine.

    Uplinks run at hosts_per_leaf * rate_gbps / (spines * oversubscription)
    Gbit/s; spines defaults to hosts_per_leaf / oversubscription (uplinks at
    the host rate).
    """

    leaves: int
    hosts_per_leaf: int
    spines: int | None = None
    oversubscription: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        require_at_least_one(self, "leaves", "hosts_per_leaf")
        self.uplinks  # noqa: B018 - validates the derived spine count and rate

    @property
    def host_count(self) -> int:
        return self.leaves * self.hosts_per_leaf

    def summary(self) -> str:
        return (f"leaf-spine: {self.host_count} hosts, {self.leaves} leaves x "
                f"{self.hosts_per_leaf} hosts, {self._uplink_summary()}")


@dataclass(frozen=True, kw_only=True)
class RailOptimized(LinkTiming, _TwoTier):
    """Rail-optimized fat-tree: GPU i of every server hangs off a leaf of rail i.

    Each GPU is one host; rank = server * gpus_per_server + gpu, so rank r is
    on rail r % gpus_per_server. A rail has ceil(servers / leaf_downlinks)
    leaves sharing its servers evenly; every leaf links once to every spine,
    with the uplink rule of LeafSpine.
    """

    servers: int
    gpus_per_server: int = 8
    leaf_downlinks: int = 32
    spines: int | None = None
    oversubscription: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        require_at_least_one(self, "servers", "gpus_per_server", "leaf_downlinks")
        _require(self.servers % self.leaves_per_rail == 0,
                 f"{self.servers} servers do not split evenly over {self.leaves_per_rail} leaves "
                 f"per rail ({self.leaf_downlinks} downlinks each)")
        self.uplinks  # noqa: B018 - validates the derived spine count and rate

    @property
    def rails(self) -> int:
        return self.gpus_per_server

    @property
    def leaves_per_rail(self) -> int:
        return -(-self.servers // self.leaf_downlinks)

    @property
    def hosts_per_leaf(self) -> int:
        return self.servers // self.leaves_per_rail

    @property
    def host_count(self) -> int:
        return self.servers * self.gpus_per_server

    def summary(self) -> str:
        return (f"rail-optimized: {self.host_count} hosts ({self.servers} servers x "
                f"{self.gpus_per_server} GPUs), {self.rails} rails x {self.leaves_per_rail} "
                f"leaves of {self.hosts_per_leaf} hosts, {self._uplink_summary()}")


@dataclass(frozen=True, kw_only=True)
class FatTree(LinkTiming):
    """Three-tier fat-tree of arity k: k pods of k/2 edge and k/2 aggregation switches,
    (k/2)^2 cores, k^3/4 hosts (or the first ``hosts`` of them, pod by pod); all links
    run at rate_gbps."""

    k: int
    hosts: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _require(self.k >= 2 and self.k % 2 == 0, f"k must be even and at least 2, got {self.k}")
        if self.hosts is not None:
            _require(1 <= self.hosts <= self.capacity,
                     f"hosts must be between 1 and k^3/4 = {self.capacity}, got {self.hosts}")

    @property
    def capacity(self) -> int:
        return self.k**3 // 4

    @property
    def host_count(self) -> int:
        return self.capacity if self.hosts is None else self.hosts

    def summary(self) -> str:
        half = self.k // 2
        return (f"fat-tree k={self.k}: {self.host_count} hosts, {self.k} pods of {half} edge + "
                f"{half} aggregation switches, {half * half} cores; links {self.rate_gbps:g} "
                f"Gbps, delay {self.delay_us:g} us")


@dataclass(frozen=True)
class HpccTopologyFile:
    """A topology file of HPCC's ns-3 simulator or of SimAI's generator: rates and delays come from the file.

    Hosts are the nodes not listed as switches or NVSwitches; rank r is the
    r-th host in increasing node id (``rank(node_id)``), which is how SimAI
    puts GPU r on node r. A link's error rate becomes a per-packet loss on
    both of its devices. SimAI's NVLink (a GPU's links to its server's
    NVSwitches) are ordinary point-to-point links at the file's rate, or are
    left out with their NVSwitches when ``nvlink`` is False (intra-server
    traffic not simulated).
    """

    path: Path
    nvlink: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))
        try:
            topology = self.topology
        except WorkloadFileError as problem:  # file:line from the reader, or the file's own problem
            raise FabricSpecError(str(problem)) from None
        _require(bool(topology.hosts), f"{self.path}: every node is a switch, there is no host")
        linked = {n for link in self.links for n in (link.src, link.dst)}
        for node in topology.hosts:
            without = "" if self.nvlink or not topology.nvswitches else " but NVLink (left out without NVLink)"
            _require(node in linked, f"{self.path}: host {node} has no link{without}")
        for link in topology.links:
            _require(link.src != link.dst, f"{self.path}: node {link.src} is linked to itself")
            _require(link.rate_bps > 0, f"{self.path}: link {link.src}-{link.dst} has rate 0")
            _require(0 <= link.error_rate < 1,
                     f"{self.path}: link {link.src}-{link.dst} error rate {link.error_rate} "
                     "is not in [0, 1)")

    @cached_property
    def topology(self) -> HpccTopology:
        return read_topology(self.path)

    @property
    def links(self) -> list[HpccLink]:
        """The links to build: all of them, or all but NVLink when ``nvlink`` is False."""
        topology = self.topology
        return [link for link in topology.links if self.nvlink or not topology.is_nvlink(link)]

    @property
    def switches(self) -> list[int]:
        """The forwarding nodes to build, in node id order (NVSwitches only with NVLink)."""
        topology = self.topology
        return sorted(n for n in topology.switches if self.nvlink or n not in topology.nvswitches)

    @property
    def host_count(self) -> int:
        return len(self.topology.hosts)

    @property
    def gpus_per_server(self) -> int | None:
        """SimAI's GPUs per server (None for an HPCC file)."""
        return self.topology.gpus_per_server

    def rank(self, node_id: int) -> int:
        """The rank of the host with this node id in the file."""
        hosts = self.topology.hosts
        _require(node_id in hosts, f"{self.path}: node {node_id} is not a host")
        return hosts.index(node_id)

    def summary(self) -> str:
        t = self.topology
        if t.gpus_per_server is None:
            return (f"HPCC topology {self.path.name}: {len(t.hosts)} hosts, {len(t.switches)} "
                    f"switches, {len(t.links)} links")
        nvlink = (f"{len(t.nvswitches)} NVSwitches" if self.nvlink
                  else f"NVLink left out ({len(t.nvswitches)} NVSwitches)")
        return (f"SimAI topology {self.path.name}: {len(t.hosts)} GPUs ({t.gpus_per_server} per server, "
                f"{t.gpu_type}), {nvlink}, {len(t.switches) - len(t.nvswitches)} switches, "
                f"{len(self.links)} links")


FabricSpec = LeafSpine | RailOptimized | FatTree | HpccTopologyFile
