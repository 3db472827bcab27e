"""Episodes that meet: a merge, simulated for real, or an *absorb*, which a recording and its mirrors follow.

Episodes that open apart and later meet (overlapping all-to-alls: a flow
between them starts) are one episode from then on. A recording that meets
episodes which have only simulated their opening flows *absorbs* them: nothing
else touched any of them, so the union is still isolated, and the record has
the absorbed openings arrive *apart* (``ApartSignature``), under their own key,
at their offsets. A replay of it holds flows that open apart with that key at
that offset (``join_apart``), and the flow that met them is then an expected
joiner. Any other meeting is a merge: replays diverge, recordings stop being
recordable, and the union is simulated.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from wormhole_ns3.core.ports import MemoHost
from wormhole_ns3.core.shortcuts import GuardKind
from wormhole_ns3.memo.decisions import (
    Absorbed,
    Cause,
    JoinedApart,
    MemoDecision,
    MemoStats,
    MemoTrace,
    Merged,
    MirrorsAbsorbed,
)
from wormhole_ns3.memo.meetings import Leaders
from wormhole_ns3.memo.record import Arrival
from wormhole_ns3.memo.replay import Replays
from wormhole_ns3.memo.signature import ApartSignature
from wormhole_ns3.memo.table import Course, EpisodeMode, EpisodeTable, OpenEpisode


class Merges:
    """What becomes of open episodes that meet."""

    def __init__(self, host: MemoHost, table: EpisodeTable, leaders: Leaders, replays: Replays, stats: MemoStats,
                 trace: MemoTrace) -> None:
        self.host = host
        self.table = table
        self.leaders = leaders
        self.replays = replays
        self.stats = stats
        self.trace = trace
        #: an absorbed episode's id -> the id of the recording that absorbed it, and its first flow's index there
        self._absorbed_into: dict[int, tuple[int, int]] = {}

    def merge(self, now_ns: int, episode_ids: Iterable[int], why: str) -> int:
        """Several open episodes meet: from now on they are one, simulated for real."""
        ids = sorted(episode_ids)
        target = self.table.episodes[ids[0]]
        absorbed = [self.table.episodes[i] for i in ids[1:]]
        flows = [flow for episode in (target, *absorbed) for flow in episode.flows]
        # flows not resumed exactly are absorbed only if all are (paced ones beside unpaced ones never are:
        # a replay of the union is taken as the paced flows' is, a resume of the unpaced ones exactly)
        exact = {self.host.flow_transport(flow).exact_resume for flow in flows}
        mixed = len(exact) > 1
        if target.mode is EpisodeMode.RECORDING and not mixed and all(e.absorbable() for e in absorbed):
            self._absorb(now_ns, target, absorbed, why)
            return target.id
        if self._mirrors_absorbable(target, absorbed):
            self._absorb_mirrors(now_ns, target, absorbed, why)
            return target.id
        for episode_id in ids:
            episode = self.table.episodes[episode_id]
            if episode.mode is EpisodeMode.REPLAYING:
                self.replays.diverge(now_ns, episode, Cause.MERGE, why)
            elif episode.mode is EpisodeMode.RECORDING:
                self.replays.lose_leadership(now_ns, episode, why)
                self.trace.emit(MemoDecision.MERGED, Merged(why, episode.key, len(episode.flows), len(ids) - 1,
                                                            mixed), now_ns, episode.id, tuple(episode.flows))
            episode.mode = EpisodeMode.UNMEMOIZED
            if episode is not target:
                self.table.take_in(episode, target)
        return target.id

    def _absorb(self, now_ns: int, target: OpenEpisode, absorbed: list[OpenEpisode], why: str) -> None:
        """A recording meets episodes opened apart from it that only simulate their opening flows.

        Nothing else has touched any of them: together they are still one isolated
        episode, so the recording goes on, holding the others' opening flows as
        arrivals *apart* (at their offset, under their own key, which is what a
        replay can recognise when they open: ``join_apart``). No episode mirrors
        either key from now on (what opens like them need not meet like them);
        the mirrors they have already must meet as they did
        (``_await_mirror_absorbs``).
        """
        self.leaders.drop(target)  # its record is no longer what opening like it promises
        for episode in absorbed:
            self.leaders.drop(episode)
            offset, first = episode.t0_ns - target.t0_ns, len(target.flows)
            target.arrivals.extend(Arrival(offset, ApartSignature(episode.key, index))
                                   for index in range(len(episode.flows)))
            self.table.name_links(target, episode.flows, first_index=first)
            self._move(episode, target)
            self._absorbed_into[episode.id] = (target.id, first)
            self._await_mirror_absorbs(now_ns, target, episode, offset)
        self.trace.emit(MemoDecision.ABSORBED,
                        Absorbed(why, target.key, tuple(e.t0_ns - target.t0_ns for e in absorbed)),
                        now_ns, target.id, tuple(f for e in absorbed for f in e.flows))

    def _move(self, source: OpenEpisode, target: OpenEpisode) -> None:
        """Every flow and link of ``source`` belongs to ``target`` from now on (what it had pending lapses)."""
        source.mode, source.candidates = EpisodeMode.UNMEMOIZED, []
        self.table.take_in(source, target)

    def _await_mirror_absorbs(self, now_ns: int, target: OpenEpisode, absorbed: OpenEpisode, offset: int) -> None:
        """The mirrors of a recording and of the episode it absorbed must meet as their leaders did.

        Training runs the same overlap many times at once: a mirror of the target
        meets a mirror of the absorbed episode when its own meeting flow starts,
        and takes it in then (``_absorb_mirrors``); a mirror of the target whose
        counterpart opens later takes it in when it opens (``join_apart``). A
        mirror of the absorbed episode that nobody takes in by the time its
        meeting was due diverges: its leader no longer completes its flows.
        """
        for candidate in target.followers:
            if candidate.episode.t0_ns + offset > now_ns:
                self.replays.check_later(candidate.episode, offset)
        met = now_ns - absorbed.t0_ns
        for candidate in absorbed.followers:
            due = candidate.episode.t0_ns + met + 1
            self.host.call_at(due, partial(self._absorbed_or_diverged, candidate, due))

    def _absorbed_or_diverged(self, candidate: Course, now_ns: int) -> None:
        episode = candidate.episode
        if self.table.episodes.get(episode.id) is episode and episode.mode is EpisodeMode.REPLAYING:
            self.replays.diverge(now_ns, episode, Cause.ABSORBED_UNMET,
                                 "the episode it mirrored was absorbed by another one, and no mirror of that one "
                                 "met it when the recording's meeting came")

    def _mirrors_absorbable(self, target: OpenEpisode, others: list[OpenEpisode]) -> bool:
        """Whether a mirror meets mirrors of the episodes its leader absorbed, at the same shift."""
        origin = _mirrored(target)
        if origin is None:
            return False
        for other in others:
            absorbed = _mirrored(other)
            if absorbed is None:
                return False
            into = self._absorbed_into.get(absorbed.id)
            if into is None or into[0] != origin.id:
                return False
            if other.t0_ns - target.t0_ns != absorbed.t0_ns - origin.t0_ns:
                return False
        return True

    def _absorb_mirrors(self, now_ns: int, target: OpenEpisode, others: list[OpenEpisode], why: str) -> None:
        """A mirror takes in the mirrors of what its leader absorbed: their flows are its apart arrivals."""
        candidate = target.candidates[0]
        moved = []
        for other in others:
            absorbed = other.candidates[0].origin
            assert absorbed is not None, "checked by _mirrors_absorbable"
            first = self._absorbed_into[absorbed.id][1]
            flows = [other.candidates[0].flow_of[index] for index in range(len(absorbed.flows))]
            absorbed.followers.remove(other.candidates[0])
            for index, flow in enumerate(flows, start=first):
                candidate.match(flow, index)
                self.table.name_links(target, [flow], first_index=index)
            self._move(other, target)
            moved += flows
        self.replays.schedule_completions(target, moved)
        self.trace.emit(MemoDecision.ABSORBED, MirrorsAbsorbed(why, target.key, len(others)), now_ns, target.id,
                        tuple(moved))

    def join_apart(self, now_ns: int, key: bytes, order: list[int]) -> bool:
        """Flows opening on idle links that a replay's record has open apart right now, then meet it.

        A recording that met an episode opened apart from it went on recording the
        two as one (``_absorb``): its record has the other episode's opening flows
        arrive apart, under their own key, at their offset. When a replay of it
        sees flows with that key open at that offset, they are those flows: they
        join the replay, held, instead of opening an episode that would meet it.
        """
        signatures = [ApartSignature(key, index) for index in range(len(order))]
        for episode in list(self.table.episodes.values()):
            if episode.mode is not EpisodeMode.REPLAYING:
                continue
            offset = now_ns - episode.t0_ns
            matches: list[tuple[Course, list[int]]] = []
            for candidate in episode.candidates:
                expected = [candidate.expected_at(offset, signature) for signature in signatures]
                indices = [index for index in expected if index is not None]
                if len(indices) == len(signatures):
                    matches.append((candidate, indices))
            if not matches:
                continue
            self.replays.keep(episode, [candidate for candidate, _ in matches])
            for candidate, indices in matches:
                for flow, index in zip(order, indices):
                    candidate.match(flow, index)
            for flow, index in zip(order, matches[0][1]):
                self.table.name_links(episode, [flow], first_index=index)
            self.replays.hold(episode, order, GuardKind.ABSORB)
            if episode.mirror:
                self.stats.mirrored += 1
            else:
                self.stats.hits += 1
            self.trace.emit(MemoDecision.REPLAY, JoinedApart(key, len(order), offset, episode.id), now_ns,
                            episode.id, tuple(order))
            return True
        return False


def _mirrored(episode: OpenEpisode) -> OpenEpisode | None:
    """The recording a replay following one course mirrored, if it did."""
    if episode.mode is not EpisodeMode.REPLAYING or len(episode.candidates) != 1:
        return None
    return episode.candidates[0].origin
