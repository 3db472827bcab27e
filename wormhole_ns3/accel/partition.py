"""Group flows into partitions: flows that share a link contend, flows that don't are independent.

A partition is a connected component of the bipartite flow-link graph. Each
partition is fingerprinted, judged steady and fast-forwarded on its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: Link key of a flow whose route could not be derived: it contends with everything.
UNKNOWN_PATH = -1


@dataclass(frozen=True)
class Partition:
    """A set of flows that share links only among themselves."""

    flows: frozenset[int]
    links: frozenset[int]

    @property
    def key(self) -> frozenset[int]:
        return self.flows


def partition_flows(paths: Mapping[int, Iterable[int]]) -> list[Partition]:
    """Connected components of flows by shared links, ordered by their smallest flow id.

    ``paths`` maps a flow id to the links it uses; an empty path stands for an
    unknown route, which is put in one partition with every other such flow
    and every flow sharing a link with them (the conservative choice).
    """
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    owner_of_link: dict[int, int] = {}
    links_of: dict[int, frozenset[int]] = {}
    for flow in sorted(paths):
        parent[flow] = flow
        links = frozenset(paths[flow]) or frozenset({UNKNOWN_PATH})
        links_of[flow] = links
        for link in links:
            if link in owner_of_link:
                union(flow, owner_of_link[link])
            else:
                owner_of_link[link] = flow

    members: dict[int, set[int]] = {}
    for flow in parent:
        members.setdefault(find(flow), set()).add(flow)
    return [
        Partition(
            flows=frozenset(group),
            links=frozenset().union(*(links_of[f] for f in group)),
        )
        for _, group in sorted(members.items())
    ]
