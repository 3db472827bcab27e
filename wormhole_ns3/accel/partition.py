"""Group flows into partitions: flows that share a link contend, flows that don't are independent.

A partition is a connected component of the bipartite flow-link graph. Each
partition is fingerprinted, judged steady and fast-forwarded on its own.
``partition_flows`` finds them from scratch; ``FlowGroups`` keeps them up to
date as flows come and go, at the cost of the partitions a flow touches.
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
    return [_partition(group, links_of) for _, group in sorted(members.items())]


def _partition(members: Iterable[int], links_of: Mapping[int, frozenset[int]]) -> Partition:
    """The partition of these flows, its sets built exactly as ``partition_flows`` builds them.

    A set's iteration order depends on the order its members were added, and
    the controller makes C++ calls (tag classes, sampling) in the order it
    iterates a partition's flows: the flows are added in ascending order, so
    a partition found incrementally iterates like one found from scratch.
    """
    group = set(sorted(members))
    return Partition(flows=frozenset(group), links=frozenset().union(*map(links_of.__getitem__, group)))


class FlowGroups:
    """The partitions of a changing set of flows, kept up to date one flow at a time.

    As the Wormhole paper keeps them: a flow that arrives joins the partition
    whose links it touches, or merges the partitions it touches; a flow that
    leaves can only split its own partition, so only that one is recomputed.
    Rebuilding every partition at every flow event cost the controller more
    than all its other work on a run with nothing to skip. The partitions are
    always those ``partition_flows`` returns for the same flows and links.

    A partition is named by its smallest flow id (its *group*); ``take_stale``
    tells which groups appeared, changed or went away since it was last asked.
    """

    def __init__(self) -> None:
        self._links_of: dict[int, frozenset[int]] = {}
        #: The flows loading each link (all of them are in one partition).
        self._flows_on: dict[int, set[int]] = {}
        self._group_of: dict[int, int] = {}
        self._groups: dict[int, Partition] = {}
        self._stale: set[int] = set()

    def __contains__(self, flow: int) -> bool:
        return flow in self._group_of

    def __len__(self) -> int:
        return len(self._groups)

    def add(self, flow: int, links: Iterable[int]) -> None:
        """A flow arrives on these links (an empty route contends with every other unknown one)."""
        if flow in self._group_of:
            self.remove(flow)
        own = frozenset(links) or frozenset({UNKNOWN_PATH})
        self._links_of[flow] = own
        touched = set()
        flows_on, group_of = self._flows_on, self._group_of
        for link in own:
            on = flows_on.get(link)
            if on is None:
                flows_on[link] = {flow}
            else:
                touched.add(group_of[next(iter(on))])
                on.add(flow)
        members = {flow}
        for group in touched:
            members |= self._groups.pop(group).flows
        self._stale |= touched
        self._settle([_partition(members, self._links_of)])

    def remove(self, flow: int) -> None:
        """A flow leaves: its partition may fall apart into several (KeyError if it is not here)."""
        group = self._group_of.pop(flow)
        for link in self._links_of.pop(flow):
            on = self._flows_on[link]
            on.discard(flow)
            if not on:
                del self._flows_on[link]
        rest = self._groups.pop(group).flows - {flow}
        self._stale.add(group)
        if rest:
            self._settle(self._components(rest))

    def _components(self, flows: frozenset[int]) -> list[Partition]:
        """The partitions these flows fall into, as ``partition_flows`` finds them.

        Walked link by link (a link's flows are all in one partition: one set
        operation each), not flow by flow and link by link.
        """
        parts: list[Partition] = []
        left = set(flows)
        links_of, flows_on = self._links_of, self._flows_on
        while left:
            seed = left.pop()
            members, frontier, seen = {seed}, [seed], set[int]()
            while frontier:
                links = links_of[frontier.pop()] - seen
                seen |= links
                for link in links:
                    new = flows_on[link] - members
                    if new:
                        members |= new
                        frontier.extend(new)
            left -= members
            parts.append(_partition(members, self._links_of))
        return parts

    def touch(self, flow: int) -> None:
        """Mark the flow's partition stale although its flows did not change (one of them finished)."""
        self._stale.add(self._group_of[flow])

    def get(self, group: int) -> Partition | None:
        """The partition whose smallest flow is ``group``, if there is one."""
        return self._groups.get(group)

    def partitions(self) -> list[Partition]:
        """Every partition, ordered by its smallest flow id (as ``partition_flows`` orders them)."""
        return [self._groups[g] for g in sorted(self._groups)]

    def take_stale(self) -> list[int]:
        """The groups made, changed or gone since the last call, in ascending order (then forgotten)."""
        stale, self._stale = sorted(self._stale), set()
        return stale

    def _settle(self, parts: list[Partition]) -> None:
        for part in parts:
            name = min(part.flows)
            self._groups[name] = part
            self._stale.add(name)
            self._group_of.update(dict.fromkeys(part.flows, name))
