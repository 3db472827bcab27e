"""What the run knows is coming: the ``Forecast`` a lookup and a mirror judge an episode's future by.

The workload's oracle (``MemoHost.upcoming``, ``releases``, ``unforeseeable``) tells
which flows will start, which the ends of given flows would release, and when
any flow may start at the earliest. From it the forecast says which flows will
join an opening before it can end (``due``), as a *pattern* a stored
continuation must have seen (``pattern``), which links an episode will span
(``span``), which links flows the run cannot foresee yet may reach
(``intruding``), and which joiners a replay would release itself
(``released_by_replay``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from wormhole_ns3.core.ports import DueFlow, MemoHost, Unforeseen
from wormhole_ns3.memo.links import LinkLedger
from wormhole_ns3.memo.record import EpisodeRecord
from wormhole_ns3.memo.signature import ApartSignature, Signature
from wormhole_ns3.memo.table import OpenEpisode

#: A flow due to join an opening: its offset (ns), its nodes (source, destination) and its links.
Joiner = tuple[int, tuple[int, int], frozenset[int]]

#: How many times a lookup may ask the workload what a replay would release (``released_by_replay``).
MAX_RELEASE_QUERIES = 32


class Forecast:
    """The flows to come, as the workload tells them, asked once per batch of arrivals where it can be."""

    def __init__(self, host: MemoHost, ledger: LinkLedger) -> None:
        self.host = host
        self.ledger = ledger
        #: the last answer of host.upcoming: when, for how far ahead, and what
        self._cache: tuple[int, int, list[DueFlow]] = (-1, -1, [])

    def forget(self) -> None:
        """What the workload would start has changed (flows created, completions scheduled or cancelled)."""
        self._cache = (-1, -1, [])

    def upcoming(self, now_ns: int, horizon_ns: int) -> list[DueFlow]:
        """``host.upcoming``, asked once per batch for the widest horizon yet (a workload scans its tasks)."""
        cached_at, cached_horizon, known = self._cache
        if cached_at != now_ns or cached_horizon < horizon_ns:
            known = self.host.upcoming(now_ns, horizon_ns)
            self._cache = (now_ns, horizon_ns, known)
        return [entry for entry in known if entry[0] <= now_ns + horizon_ns]

    def joining(self, order: list[int]) -> tuple[int, Callable[[int, frozenset[int]], bool]]:
        """How far ahead a flow can join the opening ``order`` before it can end, and whether one does.

        "Before it can end": before its busiest link could carry all its flows' bytes at
        line rate; a flow at that offset (ns) joins if it loads one of their links. The
        flows foreseen (``due``), those a replay would release (``Admission.foreseen``) and those
        that did join a recording (``joined_pattern``) are all judged by this one rule,
        so that their patterns compare.
        """
        links = self.ledger.links_of(order)
        horizon = self.host.drain_time_ns(order)
        return horizon, lambda offset, route: 0 < offset <= horizon and bool(route & links)

    def due(self, now_ns: int, order: list[int]) -> list[Joiner]:
        """The flows the run knows will join the opening ``order`` before it can end: (offset, their nodes, links).

        Known: started by compute that is running, or waiting for their start, or
        released when replayed flows complete.
        """
        horizon, joins = self.joining(order)
        return [(start - now_ns, nodes, route) for start, route, nodes in self.upcoming(now_ns, horizon)
                if joins(start - now_ns, route)]

    def joined_pattern(self, episode: OpenEpisode) -> str:
        """The pattern (``pattern``) of the flows that did join a recording before it could
        end: what a lookup that foresaw them all would see.

        A recording whose joiners were released by flows it could not foresee (simulated
        ones) is then found by the lookup that foresees them (the same step replayed, its
        joiners released by replayed completions): on moe-small, 14 episodes of the second
        iteration were recorded again for want of it.
        """
        order = episode.flows[: episode.initial]
        _, joins = self.joining(order)
        return self.pattern(order, [(offset, self.host.flow_nodes(flow), self.ledger.links(flow))
                                     for offset, flow in episode.joined if joins(offset, self.ledger.links(flow))])

    def pattern(self, order: list[int], due: list[Joiner]) -> str:
        """Which flows join the opening ``order`` (``due``), and in what order they are made.

        Joiners alike in all else do not run alike when they are created in another
        order (the simulator breaks ties between simultaneous events in that order), and
        a joiner's order is only known when it arrives: a continuation recorded with
        other joiners to come is replayed into a divergence. Where the run knows the
        joiners (``due``), a continuation must have seen the same pattern join it
        (``joined_pattern``): each joiner's offset, and the ends of every opening and
        joining flow ranked by node id (a workload creates its flows in the order of
        their ranks, so the ranks stand for that order). Empty if there is none.

        The order joiners of one instant are made in can break ties only between
        joiners that meet, on a link both load. Where none meet and the opening's kind
        is matched in any order (``TransportPolicy.rank_sensitive`` false, as
        ``Memoizer._match_joiner`` matches its joiners), the pattern says which joiner
        meets which opening flow's ends, not that order (``_unranked``).
        """
        if not due:
            return ""
        due = sorted(due, key=lambda joiner: joiner[:2])
        ends = [self.host.flow_nodes(flow) for flow in order]
        if not any(self.host.flow_transport(flow).rank_sensitive for flow in order) and not _meeting(due):
            return _unranked(ends, [(offset, nodes) for offset, nodes, _ in due])
        rank = {node: i for i, node in enumerate(sorted({n for pair in ends + [p for _, p, _ in due] for n in pair}))}
        opening = " ".join(f"{rank[src]}>{rank[dst]}" for src, dst in ends)
        joining = " ".join(f"+{offset}:{rank[src]}>{rank[dst]}" for offset, (src, dst), _ in due)
        return f"{opening} then {joining}"

    def due_routes(self, now_ns: int, horizon_ns: int) -> list[tuple[int, frozenset[int]]]:
        """The flows due to start after now and within the horizon: (start, links), in ``upcoming``'s order."""
        return [(start, route) for start, route, _ in self.upcoming(now_ns, horizon_ns)
                if now_ns < start <= now_ns + horizon_ns]

    def span(self, now_ns: int, links: frozenset[int], horizon_ns: int) -> tuple[set[int], set[int]]:
        """The links an episode on ``links`` will span within the horizon, and the due flows that bring it there.

        Its links, and those of every flow due on them, transitively (due flows by
        their index in ``upcoming``).
        """
        due = [route for _, route in self.due_routes(now_ns, horizon_ns)]
        span, joiners = set(links), set[int]()
        while True:
            joining = {i for i, route in enumerate(due) if i not in joiners and route & span}
            if not joining:
                return span, joiners
            joiners |= joining
            for i in joining:
                span |= due[i]

    def intruding(self, now_ns: int, links: frozenset[int], horizon_ns: int, ends: dict[int, int],
                   own: Iterable[int]) -> set[int]:
        """The links a flow the run cannot foresee yet may reach within the horizon, of ``links`` and its joiners'.

        For grouped paced flows, whose resume is never exact, a replay or mirror is taken only
        where nothing can come that its record does not hold. The workload tells when
        every flow may start at the earliest (a running flow ending now, a flow to come
        ending as it starts), taking the episode's own flows (``own``) and the flows due
        to join it to end beyond the horizon, and ``ends`` as given (a replay's recorded
        ends). A flow there that the known ends do not release as well could come sooner
        than any lookup can tell (``host.unforeseeable``). On moe-small-dcqcn such flows
        met three replays and a mirror, and the queue pairs resumed ended up to 16% off.
        """
        return set().union(*(reached for _, reached in self.unforeseeable(now_ns, links, horizon_ns, ends, own)))

    def unforeseeable(self, now_ns: int, links: frozenset[int], horizon_ns: int, ends: dict[int, int],
                       own: Iterable[int]) -> list[Unforeseen]:
        """``intruding``'s flows: when each may start at the earliest, and which of the links it reaches.

        The episode's own flows and its joiners are taken to end beyond the horizon, out of
        its reach (``host.unforeseeable``).
        """
        return self.host.unforeseeable(now_ns, links, horizon_ns, ends, own, now_ns + 2 * horizon_ns + 1)

    def unforeseen(self, now_ns: int, links: frozenset[int], horizon_ns: int, own: Iterable[int],
                    ) -> list[tuple[int, int]]:
        """The shape of the flows that may reach ``links`` unforeseen: each one's offset and how many links.

        A twin and its leader with the same shape meet such flows alike.
        """
        return sorted((start - now_ns, len(reached))
                      for start, reached in self.unforeseeable(now_ns, links, horizon_ns, {}, own))

    def released_by_replay(self, now_ns: int, episode: OpenEpisode, order: list[int], record: EpisodeRecord,
                            known: set[int]) -> list[tuple[int, tuple[int, int], frozenset[int]]] | None:
        """The joiners of ``record`` the run does not know of, if replaying it would release them itself.

        Each as (offset, its nodes, its links); None if some are not found so.

        The next step of an all-to-all is released by the completions of the step
        before it, in the same episode: nothing knows of it before a replay schedules
        those completions. So the replay is played forward on the workload
        (``host.releases``): the opening flows end at their recorded offsets; a flow
        that is then released at a recorded joiner's offset, over links the record
        names alike (the episode's links by the index of the flow that brought them,
        and as many links new to it), is that joiner, and ends at its recorded offset
        in turn; and so on, until nothing new is found. The record is followed only
        if every joiner at an offset not otherwise known is found so. On moe-small,
        the second iteration recorded 3 such episodes again (with their twins) for
        want of it.
        """
        Found = dict[int, tuple[int, frozenset[int], tuple[int, int], Any]]  # arrival -> task, links, nodes, flow
        unknown = {i for i, a in enumerate(record.arrivals) if i >= record.initial and a.offset_ns not in known}
        if any(isinstance(record.arrivals[i].signature, ApartSignature) for i in unknown):
            return None  # an episode opening apart: what releases it is not followed here
        wanted = {i: signature.named_links() for i in range(record.initial, len(record.arrivals))
                  if isinstance(signature := record.arrivals[i].signature, Signature)}
        opening = {link: name.index for link, name in episode.names.items()}
        flow_ends = {flow: now_ns + record.outcomes[i].finish_ns for i, flow in enumerate(order)}
        queries = MAX_RELEASE_QUERIES  # a budget: alike joiners are tried in turn

        def names_when_joining(i: int, found: Found) -> dict[int, int]:
            """The links named when joiner ``i`` joined: the opening flows', then those each earlier joiner brought."""
            index_of = dict(opening)
            for j in sorted(j for j in found if j < i):
                index_of.update((link, j) for link in found[j][1] if link not in index_of)
            return index_of

        def fits(i: int, route: frozenset[int], index_of: dict[int, int]) -> bool:
            named = tuple(sorted(index_of[link] for link in route if link in index_of))
            return (named, len(route) - len(named)) == wanted[i]

        def borne_out(i: int, candidate: tuple[int, frozenset[int], tuple[int, int], Any], found: Found,
                      offered: Iterable[tuple[int, frozenset[int], tuple[int, int], Any]]) -> bool:
            """Whether the joiners of i's own instant that hold i's links fit beside this candidate for i.

            A joiner holding none of the episode's links (it came with one that did) is
            fitted alike by the flows the other rails' steps release at that instant; the
            joiners of the instant that hold its links tell which one it is, with no
            further play. Trying the other rail's flows in turn spent the whole query
            budget on moe-small's twins, and a twin whose leader was replayed was then
            recorded again (80 k events in its second iteration). A joiner naming one not
            found yet cannot tell, and is not asked.
            """
            trial = found | {i: candidate}
            taken = {task for task, _, _, _ in trial.values()}
            offset = record.arrivals[i].offset_ns
            for j, (held, _) in wanted.items():
                if j in trial or i not in held or record.arrivals[j].offset_ns != offset:
                    continue
                if not all(k < record.initial or k in trial for k in held):
                    continue
                index_of = names_when_joining(j, trial)
                if not any(task not in taken and fits(j, route, index_of) for task, route, _, _ in offered):
                    return False
            return True

        def search(found: Found) -> Found | None:
            """Play the replay forward from the joiners found so far, until every unknown one is."""
            nonlocal queries
            if unknown <= found.keys():
                return found
            if not queries:
                return None
            queries -= 1
            coming_ends = [(flow, now_ns + record.outcomes[i].finish_ns) for i, (_, _, _, flow) in found.items()]
            # by offset: a joiner is only ever a flow released at its own recorded offset
            coming: dict[int, list[tuple[int, frozenset[int], tuple[int, int], Any]]] = {}
            for start, route, nodes, task, flow in self.host.releases(now_ns, record.close_ns, flow_ends,
                                                                      coming_ends):
                coming.setdefault(start - now_ns, []).append((task, route, nodes, flow))
            found = dict(found)
            progress = False
            for i in sorted(wanted.keys() - found.keys()):
                taken = {task for task, _, _, _ in found.values()}
                index_of = names_when_joining(i, found)
                candidates = [(task, route, nodes, flow) for task, route, nodes, flow
                              in coming.get(record.arrivals[i].offset_ns, ())
                              if task not in taken and fits(i, route, index_of)]
                if len(candidates) > 1:
                    offered = coming[record.arrivals[i].offset_ns]
                    candidates = [c for c in candidates if borne_out(i, c, found, offered)] or candidates
                if len(candidates) > 1:  # alike flows of one instant: which is which shows later
                    return next(filter(None, (search(found | {i: candidate}) for candidate in candidates)), None)
                if candidates:
                    found[i], progress = candidates[0], True
            return search(found) if progress or unknown <= found.keys() else None

        found = search({})
        if found is None:
            return None
        return [(record.arrivals[i].offset_ns, nodes, route) for i, (_, route, nodes, _) in sorted(found.items())
                if i in unknown]


def _meeting(due: list[Joiner]) -> bool:
    """Whether two joiners of one instant load a link both load."""
    loaded: dict[int, frozenset[int]] = {}
    for offset, _, route in due:
        if loaded.get(offset, frozenset()) & route:
            return True
        loaded[offset] = loaded.get(offset, frozenset()) | route
    return False


def _unranked(ends: list[tuple[int, int]], due: list[tuple[int, tuple[int, int]]]) -> str:
    """``Forecast.pattern`` without the order flows are made in: nodes named as the opening meets them.

    Each node is named by its first appearance in the opening's canonical order (the
    key's: the same place in every episode of the key), then in the joiners', those of
    one offset taken by the names their ends already have. A step of a ring whose
    flows were made starting at another rank (the step before it completed in another
    order, which ns decide) is then the same pattern: on gpt-13b-128g over DCQCN, such a
    step, recorded with its joiners already, was recorded again (doc/changelog.md).
    """
    names: dict[int, int] = {}

    def name(node: int) -> int:
        return names.setdefault(node, len(names))

    opening = " ".join(f"{name(src)}>{name(dst)}" for src, dst in ends)
    unnamed = len(ends) * 2 + len(due) * 2  # past every name: sorts an end not named yet last
    joining = []
    for offset in sorted({offset for offset, _ in due}):
        pairs = sorted((pair for at, pair in due if at == offset),
                       key=lambda pair: (names.get(pair[0], unnamed), names.get(pair[1], unnamed)))
        joining += [f"+{offset}:{name(src)}>{name(dst)}" for src, dst in pairs]
    return f"{opening} then {' '.join(joining)}"
