"""Which recording a twin episode may mirror: the ``Leaders`` of each key, and the ``Meetings`` a mirror can follow.

Training runs the same episode many times *at once* (every data-parallel ring
of a step, on its own rail). An episode whose key is being recorded right now
by another open episode (its *leader*) *mirrors* it: it follows the leader's
record as the leader writes it (a ``Course`` on a live recording). A mirror
can follow only meetings its leader's record will hold: where flows due would
bring the twin into another episode that its leader does not meet alike, the
twin is recorded instead.
"""

from __future__ import annotations

from collections.abc import Callable

from wormhole_ns3.core.ports import MemoHost
from wormhole_ns3.memo.decisions import MemoDecision, MemoStats, MemoTrace, NotMirrored
from wormhole_ns3.memo.forecast import Forecast
from wormhole_ns3.memo.links import LinkLedger
from wormhole_ns3.memo.table import Batch, EpisodeMode, EpisodeTable, OpenEpisode

#: How many drain times ahead a paced mirror looks for flows the run cannot foresee yet
#: (``Forecast.intruding``): a mirror has no record to say when it ends, and an all-to-all of
#: DCQCN flows lasts 3.3 drain times on moe-8x7b-64g-dcqcn.
PACED_REACH = 8


class Leaders:
    """The recordings open right now that episodes opening with their key may mirror."""

    def __init__(self, host: MemoHost) -> None:
        self.host = host
        self._first: dict[bytes, OpenEpisode] = {}  #: key -> the open episode recording it
        #: key -> the recordings of it opened at the instant of the arrivals being handled
        self._now: dict[bytes, list[OpenEpisode]] = {}

    def new_instant(self) -> None:
        """Arrivals of a later instant: no recording opened in this one any more."""
        self._now.clear()

    def add(self, episode: OpenEpisode) -> None:
        """A recording opened: twins opening from now on may mirror it."""
        self._first.setdefault(episode.key, episode)
        self._now.setdefault(episode.key, []).append(episode)

    def of(self, key: bytes, flows: list[int]) -> list[OpenEpisode]:
        """The recordings that an episode of these flows opening with this key may mirror.

        The key's first recording still open; for guarded kinds (DCQCN), those
        opened at this same instant, since twins open together. On
        moe-8x7b-64g-dcqcn a stage's last pipeline sends open on every rail at two
        instants 58 ns apart: each instant's twins follow that instant's recording,
        not the first instant's, which is 58 ns away and would be refused. Several
        recordings of one key may open in one instant (moe-small-dcqcn: four single
        pipeline sends, two on each rail), and a twin mirrors the one whose meetings
        it meets alike.
        """
        now = self._now.get(key)
        if now and all(self.host.flow_transport(flow).guarded for flow in flows):
            return now
        first = self._first.get(key)
        return [] if first is None else [first]

    def drop(self, episode: OpenEpisode) -> None:
        """No episode opening from now on mirrors this one."""
        if self._first.get(episode.key) is episode:
            del self._first[episode.key]
        now = self._now.get(episode.key, [])
        if episode in now:
            now.remove(episode)


class Meetings:
    """Whether a twin's flows would meet other episodes as its leader's do, so that it may mirror it."""

    def __init__(self, host: MemoHost, ledger: LinkLedger, table: EpisodeTable, forecast: Forecast,
                 leaders: Leaders, batch: Batch, key_of: Callable[[list[int]], bytes], stats: MemoStats,
                 trace: MemoTrace) -> None:
        self.host = host
        self.ledger = ledger
        self.table = table
        self.forecast = forecast
        self.leaders = leaders
        self.batch = batch
        self.key_of = key_of  #: the key flows opening an episode would have
        self.stats = stats
        self.trace = trace

    def followed_leader(self, now_ns: int, episode: OpenEpisode, flows: list[int], leaders: list[OpenEpisode],
                        ) -> OpenEpisode | None:
        """The first of ``leaders`` whose meetings the episode's flows would follow (``_unfollowable_meetings``).

        None, and a trace row saying why the first was refused, when there is none.
        """
        first_refusal = None
        for leader in leaders:
            refusal = self._unfollowable_meetings(now_ns, episode.key, flows, leader)
            if refusal is None:
                return leader
            first_refusal = first_refusal or refusal
        assert first_refusal is not None, "called with leaders to try"
        self.stats.foreseen += 1
        self.trace.emit(MemoDecision.NO_MIRROR, first_refusal, now_ns, episode.id, tuple(flows))
        return None

    def _unfollowable_meetings(self, now_ns: int, key: bytes, flows: list[int], leader: OpenEpisode,
                               ) -> NotMirrored | None:
        """Where flows the run knows are coming will bring the episode into another one before it can end, if they do.

        Said with the due flows that reach there, the horizon, and what those links are.

        Such a flow joins the episode and reaches beyond its links, and so do the
        flows due on its links in turn; where that reaches links another episode
        holds, or flows starting in this same instant do, it is a merge a mirror
        cannot follow (its leader's record has no such flow), and the episode is
        recorded instead. Joiners that reach only idle links (the rest of an
        all-to-all) are left to the mirror's usual check against its leader.
        "Before it can end": before its busiest link could carry all its flows'
        bytes at line rate.

        Such links are no merge when their episode is itself a mirror, opened with
        its leader, and the episode's own leader will meet that leader; nor when
        the flows starting in this instant there open like a leader opened now,
        which the episode's leader will meet (they will mirror it). The leaders'
        meeting is recorded as an absorb, and the mirrors follow it
        (``Merges._absorb_mirrors``, ``_followable``). On moe-small, two pipeline sends
        633 ns apart each had a twin on another rail; the second twin, recorded
        for fear of the first, was met by it at once, and the first twin diverged
        (2.4% mean FCT error over the run).

        A mirror opened ``shift`` ns after its leader keeps the old rule (any
        joiner beyond its links rules it out): joiners a common event releases at
        one instant come at offsets that differ by the shift (gpt-medium: a mirror
        4,934 ns behind its leader met its joiner 4,934 ns early and diverged).
        Paced flows opened with their leader follow ``paced_meetings``; for DCQCN,
        links that ``_followable`` or ``_absorbs`` accepts are no meeting, and flows
        the run cannot foresee yet (``Forecast.intruding``) rule a twin out only where they
        would not reach it as they reach its leader (``Forecast.unforeseen``): they then
        join both alike, and the mirror checks its joiners against its leader's.
        On moe-8x7b-64g-dcqcn a stage's last pipeline sends, on every rail, meet
        its gradient all-reduce: recorded on each rail, they and the ring steps
        that join them ran most of the run's events.
        """
        shift = now_ns - leader.t0_ns
        links = self.ledger.links_of(flows)
        horizon = self.host.drain_time_ns(flows)
        span, joiners = self.forecast.span(now_ns, links, horizon)
        if shift == 0 and not all(self.host.flow_transport(flow).exact_resume for flow in flows):
            leader_links = self.ledger.links_of(leader.flows)
            grouped = all(self.host.flow_transport(flow).guarded for flow in flows)
            mine = self._paced_meetings(now_ns, links, horizon, grouped)
            theirs = self._paced_meetings(now_ns, leader_links, horizon, grouped)
            if not grouped:
                taken = set(mine) | set(theirs)
            else:
                # DCQCN recordings absorb as TCP ones do (``Merges.merge``) and their mirrors follow, so a
                # meeting is none where the twin meets flows due as its leader does, or an episode
                # its leader's mirrors or its leader's own absorbs will meet alike
                alike = (sorted(due for due in mine.values() if due is not None)
                         == sorted(due for due in theirs.values() if due is not None))
                taken = {link for link, due in mine.items()
                         if not (alike if due is not None else self._followable(now_ns, link, leader))}
                taken |= {link for link, due in theirs.items() if not (
                    alike if due is not None
                    else self._followable(now_ns, link, leader) or self._absorbs(now_ns, link, leader))}
            reach = PACED_REACH * horizon
            if not taken and any(self.host.flow_transport(flow).guarded for flow in flows) and (
                    links & leader_links or self.forecast.unforeseen(now_ns, links, reach, flows)
                    != self.forecast.unforeseen(now_ns, leader_links, reach, leader.unfinished)):
                taken = self.forecast.intruding(now_ns, links | leader_links, reach, {}, [*flows, *leader.unfinished])
            paced = True
        else:
            taken = {link for link in span - links if shift > 0 or not self._followable(now_ns, link, leader)}
            paced = False
        if not taken:
            return None
        return NotMirrored(key, len(joiners), horizon, len(taken), paced, shift)

    def _paced_meetings(self, now_ns: int, links: frozenset[int], horizon_ns: int, grouped: bool,
                        ) -> dict[int, int | None]:
        """The links where paced flows on ``links`` would meet another episode through their joiners.

        Each with the offset at which another flow due loads it first, or None
        where an episode holds it.

        Paced flows beside unpaced ones are never absorbed (``Merges.merge``): where a flow due to
        join them loads a link that another flow due loads first, or one an episode
        holds that will not have closed by the joiner's start (``_idle_by``), the
        meeting is a merge, which ends a mirror and resumes its flows inexactly.
        Joiners reaching only links nobody else will load are followed as any
        mirror's joiners are, checked against the leader's as they come. Asked for
        the mirror's links and its leader's: a leader that merges ends its mirrors
        too. On gpt-13b-128g-dcqcn every data-parallel ring step opened on eight
        rails at once, and its pipeline sends, due on its links, reach another
        stage's hosts: refused whatever they reach, 24 of the run's 36 recordings
        were such twins.

        A joiner is a flow due on ``links``; of ``grouped`` flows (``arrive``), also
        one due on a joiner's links no earlier than that joiner starts: it finds the
        joiner running, or starts with it and is grouped with it, and joins as well.
        On moe-8x7b-64g-dcqcn an all-to-all opens with the two flows between two of
        its four hosts, and 50 ns later the ten others start together, the two
        between the other two hosts among them. Taken for other flows, those two
        had every rail's twin of each all-to-all recorded rather than mirrored: the
        run executed 21.8 M events so, 10.4 M with them joining. Paced flows beside
        unpaced ones keep the first rule: a flow starting with their joiner on fresh
        links opens an episode of its own, which the joiner then merges with.
        """
        due = self.forecast.due_routes(now_ns, horizon_ns)
        joining = {i for i, (_, route) in enumerate(due) if route & links}
        while grouped:
            later = {i for i, (start, route) in enumerate(due) if i not in joining
                     and any(due[j][0] <= start and route & due[j][1] for j in joining)}
            if not later:
                break
            joining |= later
        others = [(start, route) for i, (start, route) in enumerate(due) if i not in joining]
        meetings: dict[int, int | None] = {}
        for i in sorted(joining):
            for link in due[i][1] - links:
                first = min((start for start, other in others if link in other), default=None)
                if first is not None:
                    meetings.setdefault(link, first - now_ns)
                elif not self._idle_by(link, due[i][0]):
                    meetings.setdefault(link, None)
        return meetings

    def _idle_by(self, link: int, time_ns: int) -> bool:
        """Whether a link will be idle at ``time_ns``: none of this instant's flows start on it, and
        no episode holds it or a replay does whose held flows all complete before then."""
        holder = self.table.of_link.get(link)
        if holder is None:
            return link not in self.batch.group_of
        episode = self.table.episodes[holder]
        return (episode.mode is EpisodeMode.REPLAYING and bool(episode.unfinished)
                and set(episode.unfinished) <= set(episode.completing)
                and episode.t0_ns + max(episode.completing.values()) < time_ns)

    def _followable(self, now_ns: int, link: int, leader: OpenEpisode) -> bool:
        """Whether a would-be mirror of ``leader`` that reaches ``link`` can follow its leader there.

        An idle link: yes (the mirror's usual check against its leader decides).
        A link another episode holds: only if that episode is a mirror opened with
        its own leader, which ``leader`` will meet (``_leaders_meet``). A link of
        flows starting in this same instant, not decided yet: only if they open
        like a leader opened now, which ``leader`` will meet (they will mirror it).
        """
        holder = self.table.of_link.get(link)
        if holder is not None:
            episode = self.table.episodes[holder]
            if episode.mode is not EpisodeMode.REPLAYING or len(episode.candidates) != 1:
                return False
            origin = episode.candidates[0].origin
            return (origin is not None and episode.t0_ns == origin.t0_ns
                    and self.table.episodes.get(origin.id) is origin and self._leaders_meet(now_ns, leader, origin))
        group = self.batch.group_of.get(link)
        if group is None:
            return True
        if any(map(self.host.memo_blocker, group)):
            return False  # simulated as it is: it will not mirror
        twins = self.leaders.of(self.key_of(group), group)
        return any(twin.t0_ns == now_ns and self._leaders_meet(now_ns, leader, twin) for twin in twins)

    def _absorbs(self, now_ns: int, link: int, leader: OpenEpisode) -> bool:
        """Whether the episode holding ``link`` is a DCQCN recording whose meeting with ``leader`` is an absorb.

        Either it opened before ``leader`` (so it is the one ``Merges.merge`` keeps) and
        ``leader`` still holds only its opening flows, or it opened in this instant
        after ``leader``, which will meet it and absorb it. ``leader``'s mirrors
        then absorb the mirrors of the holder's, or are absorbed by them
        (``Merges._absorb_mirrors``).
        """
        holder = self.table.episodes.get(self.table.of_link.get(link, -1))
        if (holder is None or holder is leader or holder.mode is not EpisodeMode.RECORDING
                or not all(self.host.flow_transport(flow).guarded for flow in [*holder.flows, *leader.flows])):
            return False
        if holder.id < leader.id:
            return leader.absorbable()
        return holder.t0_ns == now_ns and holder.absorbable() and self._leaders_meet(now_ns, leader, holder)

    def _leaders_meet(self, now_ns: int, leader: OpenEpisode, other: OpenEpisode) -> bool:
        """Whether two recordings will meet: flows due on ``leader``'s links reach ``other``'s."""
        if other.mode is not EpisodeMode.RECORDING or other is leader:
            return False
        span, _ = self.forecast.span(now_ns, self.ledger.links_of(leader.flows), self.host.drain_time_ns(leader.flows))
        return bool(span & other.links)
