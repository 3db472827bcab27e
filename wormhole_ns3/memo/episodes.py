"""Memoized episodes: recognise a repeated contention episode and replay it instead of simulating it.

Each batch of flows starting at one instant follows one pipeline: *arrive*
(flows sharing links are one group), the *episode table* (``table.py``: a
group on idle links opens an episode, one on held links joins the episode
holding them, or merges those it touches, ``merge.py``), the *key*
(``fingerprint.py``: the canonical fingerprint of the opening flows, their
links' state as ``links.py`` keeps it), the *candidate courses* (the key's
stored continuations, ``continuations.py``, and the recordings of it being made
right now, ``meetings.py``), their *admission* (``admission.py``, on what the
``Forecast`` says is coming), then a *replay* (``replay.py``: held flows
completed at their recorded offsets) or a *recording* (simulated, and stored
as a continuation of its key when it closes), and the *host* does it
(``core.ports.MemoHost``: ``memo/driver.py`` in a run).

While an episode is open nothing else touches the links it holds, so its
course depends only on what its flows are, where they go, when they start
relative to one another, and the links' state: exactly what its key and its
arrival signatures (``signature.py``) contain. A replayed completion puts the
end of the transfer on the wire (the receiver's last ACK and FIN), so a flow
it starts meets them as in a plain run; what it leaves out (the packets of
other flows queued behind the last byte) is counted back into the next key
(``LinkLedger.queue``), and a recording made without them (``left_out``)
stands in only until one made after a simulated step replaces it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from wormhole_ns3.core.draws import DrawCase, Fidelity
from wormhole_ns3.core.flows import TrajectoryPoint
from wormhole_ns3.core.ports import MemoHost
from wormhole_ns3.core.shortcuts import MEMO_KINDS, GuardKind
from wormhole_ns3.memo.admission import Admission
from wormhole_ns3.memo.continuations import Continuations
from wormhole_ns3.memo.decisions import (
    Cause,
    Futile,
    MemoDecision,
    MemoStats,
    MemoTrace,
    Miss,
    Stopped,
    UnforeseeableFlows,
)
from wormhole_ns3.memo.fingerprint import Episode, Fingerprints, FlowDescriptor, LinkDescriptor
from wormhole_ns3.memo.forecast import Forecast
from wormhole_ns3.memo.links import LinkLedger
from wormhole_ns3.memo.meetings import Leaders, Meetings
from wormhole_ns3.memo.merge import Merges
from wormhole_ns3.memo.record import Arrival, EpisodeRecord, FlowOutcome, signature_text
from wormhole_ns3.memo.replay import Replays
from wormhole_ns3.memo.signature import AnySignature
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.memo.table import Batch, Course, EpisodeMode, EpisodeTable, OpenEpisode

#: Trajectory points kept per flow in a record (evenly thinned, last one kept).
TRAJECTORY_POINTS = 24

#: A recording that has grown past this many flows without closing, while the run's shortcuts
#: have not paid for its bets (``core/backoff.py``), stops: its links never went idle, so no
#: opening of its key can come while it is stored, and the course its joiners took is one a
#: replay must match joiner by joiner. The interleaved all-to-alls of
#: ``experiments/zoo/moe_alltoall.py`` make one episode of the whole run: 896 flows recorded.
RECORDING_BOUND = 256


class Memoizer:
    """Opens, records, replays and closes episodes as flows arrive and finish."""

    def __init__(self, store: MemoStore, context: str, host: MemoHost,
                 fidelity: Fidelity = Fidelity.SAME_SEED) -> None:
        self.context = context
        self.host = host
        self.stats = MemoStats()
        self.trace = MemoTrace()
        #: The kinds of shortcut the error guard (accel/verify.py) still allows. Once it stops
        #: resumes (what any replay may end in), new episodes are simulated, neither replayed
        #: nor recorded, and still seen by the open ones they touch.
        self.allowed: frozenset[GuardKind] = frozenset(MEMO_KINDS)
        self.batch = Batch()
        self.fingerprints = Fingerprints()
        self.ledger = LinkLedger(host)
        self.table = EpisodeTable(host, self.ledger)
        self.forecast = Forecast(host, self.ledger)
        self.continuations = Continuations(store, self.stats, self.trace)
        self.leaders = Leaders(host)
        self.admission = Admission(host, self.ledger, self.forecast, self.stats, fidelity)
        self.meetings = Meetings(host, self.ledger, self.table, self.forecast, self.leaders, self.batch,
                                 lambda group: self._fingerprint(group).key, self.stats, self.trace)
        self.replays = Replays(host, self.ledger, self.table, self.forecast, self.leaders, self.continuations,
                               self.batch, self.stats, self.trace)
        self.merges = Merges(host, self.table, self.leaders, self.replays, self.stats, self.trace)
        #: Set once recording backed off (``_back_off``): the refusal that no lookup of the simulation escapes.
        self.futile: UnforeseeableFlows | None = None

    @property
    def store(self) -> MemoStore:
        return self.continuations.store

    @property
    def inert(self) -> bool:
        """True in a forked child checking a decision (accel/verify.py): the decisions made
        before it forked go on (replays complete, mirrors follow their leaders), nothing is
        written to the store (it belongs to the parent), and new flows start for real."""
        return self.continuations.inert

    @inert.setter
    def inert(self, inert: bool) -> None:
        self.continuations.inert = inert

    # ------------------------------------------------------------ arrivals
    def arrive(self, now_ns: int, flows: Sequence[int]) -> None:
        """Flows that start now: join the open episodes they touch, or open new ones."""
        if now_ns != self.ledger.now_ns:
            self.leaders.new_instant()
        self.ledger.now_ns = now_ns
        self.forecast.forget()  # flows created since are known now
        if self.futile is None:
            self._back_off(now_ns)
        self.replays.complete_due(now_ns, flows)
        # flows starting together on shared links are one group: a flow on fresh links
        # that shares one with a flow joining an episode joins it too (opened apart, the
        # two would merge at once, and a merge is never replayed)
        # groups meeting a recording go first: a mirror's meeting in the same instant follows its leader's
        groups = _components(sorted(flows), self.ledger.links)
        self.batch.group_of = {link: group for group in groups for link in self.ledger.links_of(group)}
        groups.sort(key=lambda group: not any(self.table.episodes[e].mode is EpisodeMode.RECORDING
                                              for f in group for e in self.table.touching(f)))
        for group in groups:
            touched = set().union(*map(self.table.touching, group))
            if not touched:
                self._open(now_ns, group)
                continue
            if len(touched) > 1:
                toucher = next(f for f in group if self.table.touching(f))
                target = self.merges.merge(now_ns, touched, f"flow {toucher} and the {len(group) - 1} flow(s) "
                                           f"starting with it on shared links touch {len(touched)} episodes")
            else:
                target = next(iter(touched))
            self._join(now_ns, self.table.episodes[target], group)
        real = self.host.start_flow
        self.replays.simulated_from_now(now_ns, [f for f in flows if self.batch.launching.get(f) == real])
        for flow in flows:
            launch = self.batch.launching.pop(flow, None)
            if launch is not None:
                launch(flow)

    def _open(self, now_ns: int, flows: list[int]) -> None:
        """Flows on idle links open an episode: replayed, mirrored, or simulated and recorded."""
        if any(map(self.host.memo_blocker, flows)):
            self.stats.unmemoizable += 1
            self._admit(self.table.new(now_ns, EpisodeMode.UNMEMOIZED), flows)
            return
        print_ = self._fingerprint(flows)
        order = list(print_.order)
        if GuardKind.ABSORB in self.allowed and self.merges.join_apart(now_ns, print_.key, order):
            return
        episode = self.table.new(now_ns, EpisodeMode.UNMEMOIZED)
        episode.key, episode.initial = print_.key, len(order)
        self.table.name_links(episode, order, first_index=0)
        signatures: list[AnySignature] = [self.ledger.signature(f, episode.names) for f in order]

        def opening(arrivals: Sequence[Arrival]) -> bool:
            return [a.signature for a in arrivals[: len(order)]] == signatures

        if GuardKind.RESUME not in self.allowed:
            self._admit(episode, order)
            return
        relearn = episode.key in self.continuations.relearn
        if not relearn and not self.continuations.trusted(now_ns, episode, order):
            self.stats.distrusted += 1
            self._admit(episode, order)
            return
        if self.futile is not None:
            # no lookup of the simulation can admit a course from now on: neither followed nor recorded
            self.stats.misses += 1
            episode.refusal = self.futile
            self._admit(episode, order)
            self.trace.emit(MemoDecision.MISS, Miss(episode.key, len(order), episode.left_out, relearn, self.futile,
                                                    recorded=False), now_ns, episode.id, tuple(order))
            return
        continuations = [] if relearn else self.continuations.of(episode.key)
        # the workload is asked once, as far ahead as the joiners foreseen and the longest record
        # reach, rather than for the one and then again for the other (moe-medium warm: 2,720
        # lookups, 0.4 ms a question)
        self.forecast.upcoming(now_ns, max([self.forecast.joining(order)[0], *(r.close_ns for r in continuations)]))
        due = self.forecast.due(now_ns, order)
        episode.foreseen = self.forecast.pattern(order, due)
        episode.left_out = self.ledger.left_out_on(order)
        unforeseeable = self.admission.unforeseeable()
        if unforeseeable:
            episode.refusal = unforeseeable
        if not relearn and not unforeseeable:
            records = self.admission.stored(now_ns, episode, order, due, continuations, opening, self.allowed,
                                            self.batch)
            if records:
                self.replays.start(now_ns, episode, [Course(episode, record=r) for r in records], order)
                return
            leaders = self.admission.live(episode, order, self.leaders.of(episode.key, order), opening,
                                          continuations, self.allowed)
            leader = (self.meetings.followed_leader(now_ns, episode, flows, leaders)
                      if leaders and self.continuations.mirroring_trusted(now_ns, episode) else None)
            if leader is not None:
                course = Course(episode, leader=leader, origin=leader)
                leader.followers.append(course)
                self.replays.start(now_ns, episode, [course], order)
                return
        self.stats.misses += 1
        if episode.draw_case is not DrawCase.DEPENDS:
            episode.draw_case = None
        else:
            self.stats.draw_dependent += 1
        episode.mode = EpisodeMode.RECORDING
        episode.arrivals = [Arrival(0, s) for s in signatures]
        self.leaders.add(episode)
        self._admit(episode, order)
        self.trace.emit(MemoDecision.MISS, Miss(episode.key, len(order), episode.left_out, relearn, episode.refusal),
                        now_ns, episode.id, tuple(order), draws=episode.draw_case)

    def _join(self, now_ns: int, episode: OpenEpisode, flows: list[int]) -> None:
        """Flows starting on links the episode holds join it: recorded, matched against its courses, or simulated."""
        if episode.mode is EpisodeMode.UNMEMOIZED:
            # simulated, neither recorded nor matched: what a joiner is (its signature) is never asked
            self._admit(episode, sorted(flows))
            return
        offset = now_ns - episode.t0_ns
        # joiners alike in all else need not run alike: the simulator breaks their ties in
        # the order they were created, so that order is part of what a joiner is (as it is
        # of an opening flow, in the key). Not for kinds matched in any order in a replay
        # (``TransportPolicy.rank_sensitive``): DCQCN's queue pairs are paced from their
        # first packet, and a step of moe-8x7b-64g over DCQCN whose 10 joiners came in
        # another order at each layer stopped 56 replays at its joiners and resumed their
        # queue pairs; matched by all but their order, the replays held, and every flow
        # ended within 0.07% of plain ns-3 (max, over 99,200). Joiners of one instant are
        # taken in the order of their stored signatures, as every record has them.
        created = {flow: rank for rank, flow in enumerate(sorted(flows))}
        queued = self.ledger.queues_of(flows)  # every joiner's links, in one crossing
        signature = {f: self.ledger.signature(f, episode.names, created[f], queued) for f in flows}
        ordered = sorted(flows, key=lambda f: (signature_text(signature[f]), f))
        blocker = next(filter(None, map(self.host.memo_blocker, ordered)), None)
        if episode.mode is EpisodeMode.RECORDING and blocker:
            # a flow the memo cannot replay: the episode is simulated, not recorded
            self.replays.lose_leadership(now_ns, episode, blocker)
            episode.mode = EpisodeMode.UNMEMOIZED
        if episode.mode is EpisodeMode.RECORDING and self._past_bound(episode, len(ordered)):
            self._stop_recording(now_ns, episode, len(ordered))
        if episode.mode is EpisodeMode.RECORDING:
            episode.left_out += self.ledger.left_out_on(ordered)
            for flow in ordered:
                episode.arrivals.append(Arrival(offset, self.ledger.signature(flow, episode.names, created[flow],
                                                                              queued)))
                episode.joined.append((offset, flow))
                self.table.name_links(episode, [flow], first_index=len(episode.flows))
                self._admit(episode, [flow])
            for follower in episode.followers:
                self.replays.check_later(follower.episode, offset)
            return
        if episode.mode is EpisodeMode.REPLAYING:
            for position, flow in enumerate(ordered):
                if not self._match_joiner(now_ns, episode, offset, flow, created[flow], blocker, queued):
                    self._admit(episode, ordered[position:])
                    return
            return
        self._admit(episode, ordered)

    def _match_joiner(self, now_ns: int, episode: OpenEpisode, offset: int, flow: int, created: int,
                      blocker: str | None, queued: dict[int, int]) -> bool:
        """A flow joins a replay: held where its courses have it join (True), else the replay diverges.

        Its signature is made as it joins, once the flows of its instant matched before
        it have named the links they brought (their queues as ``_join`` read them).
        """
        signature = None if blocker else self.ledger.signature(flow, episode.names, created, queued)
        survivors = []
        for course in episode.candidates:
            index = course.expected_at(offset, signature) if signature else None
            if index is None and signature and not self.host.flow_transport(flow).rank_sensitive:
                index = course.expected_at(offset, signature, any_order=True)
            if index is not None:
                survivors.append((course, index))
        if not survivors:
            self.replays.diverge(now_ns, episode, Cause.UNEXPECTED_JOINER,
                                 f"flow {flow} was not expected at +{offset} ns"
                                 + (f" ({blocker})" if blocker else self.replays.expectation(episode, offset)))
            return False
        self.replays.keep(episode, [c for c, _ in survivors])
        for course, index in survivors:
            course.match(flow, index)
        self.table.name_links(episode, [flow], first_index=survivors[0][1])
        self.table.hold(episode, flow)
        self.host.hold_flow(flow)
        self.stats.flows_replayed += 1
        self.replays.schedule_completion(episode, flow)
        return True

    def _past_bound(self, episode: OpenEpisode, joining: int) -> bool:
        """Whether a recording that ``joining`` flows join has grown past its bound while nothing paid for it.

        Not one a mirror follows: that one pays already.
        """
        return (len(episode.flows) + joining > RECORDING_BOUND and not episode.followers
                and not self.host.bets_paid())

    def _stop_recording(self, now_ns: int, episode: OpenEpisode, joining: int) -> None:
        """Simulate the rest of a recording that grew past its bound, and record none of it."""
        self.leaders.drop(episode)
        episode.mode = EpisodeMode.UNMEMOIZED
        self.trace.emit(MemoDecision.STOPPED, Stopped(episode.key, len(episode.flows), now_ns - episode.t0_ns, joining,
                                                      RECORDING_BOUND),
                        now_ns, episode.id, tuple(episode.flows))

    def _back_off(self, now_ns: int) -> None:
        """Stop recording once no lookup of the simulation can admit a course and nothing has paid for the bets.

        A recording is a bet on a later lookup of its key standing in for its
        simulation: it costs every flow's congestion state at each sample, its course
        read at its end, and the record stored. Once the run has created a flow from
        a callback on a delivery, every later lookup is refused to the simulation's end
        (``Admission.unforeseeable``), so none can pay in it. While the run's shortcuts
        have not paid for its bets (``core/backoff.py``), open recordings stop (not one
        a mirror follows: that one pays already) and episodes opening later are
        simulated, not recorded. What is simulated is the same: a recording only reads.
        """
        refusal = self.admission.unforeseeable()
        if refusal is None or self.host.bets_paid():
            return
        self.futile = refusal
        stopped = [e for e in self.table.episodes.values() if e.mode is EpisodeMode.RECORDING and not e.followers]
        for episode in stopped:
            self.leaders.drop(episode)
            episode.mode = EpisodeMode.UNMEMOIZED
        flows = tuple(f for e in stopped for f in e.flows)
        self.trace.emit(MemoDecision.STOPPED, Futile(refusal, len(stopped), len(flows)), now_ns,
                        stopped[0].id if stopped else -1, flows)

    def recording(self, flow: int) -> bool:
        """Whether the flow belongs to an episode being recorded (its course will be read at its end)."""
        episode = self.table.of(flow)
        return episode is not None and episode.mode is EpisodeMode.RECORDING

    def _admit(self, episode: OpenEpisode, flows: list[int]) -> None:
        """Flows simulated for real in the episode (recorded if it is recording)."""
        for flow in flows:
            self.table.hold(episode, flow)
            self.batch.launching[flow] = self.host.start_flow

    # ------------------------------------------------------- the host's calls
    def completing(self, now_ns: int, flow: int) -> bool:
        """A held flow's completion is due: True to inject it, False if the replay diverged instead."""
        return self.replays.completing(now_ns, flow)

    def resume_touched(self, now_ns: int, flows: Sequence[int]) -> None:
        """In a child checking a decision: replays these flows (started for real) touch resume for real too."""
        self.replays.resume_touched(now_ns, flows)

    def held_as(self, flows: Iterable[int]) -> dict[int, GuardKind]:
        """The shortcut standing in for each of these flows the memo held (``Replays.held_as``)."""
        return self.replays.held_as(flows)

    def save_track_records(self) -> None:
        """Add this run's completed and diverged replays to their keys' track records in the store."""
        self.continuations.save_track_records()

    # ----------------------------------------------------- finish and close
    def finished(self, now_ns: int, flow: int) -> None:
        """A flow simulated for real received its last byte."""
        episode = self.table.of(flow)
        if episode is None:
            return
        episode.unfinished.discard(flow)
        self.table.release_finished(episode, flow, now_ns)
        if episode.mode is EpisodeMode.RECORDING:
            self.host.recorded_flow()
            points = [
                TrajectoryPoint(p.offset_ns - episode.t0_ns, p.delivered, p.state)
                for p in self.host.trajectory(flow)
                if p.offset_ns >= episode.t0_ns
            ]
            episode.outcomes[flow] = FlowOutcome(now_ns - episode.t0_ns, _thin(points), rank=len(episode.outcomes),
                                                 trailing=tuple(self.host.link_queues(self.ledger.route(flow))))
            self.replays.watch_leader_draws(now_ns, episode)
            for course in episode.followers:
                shadow = course.flow_of.get(episode.flows.index(flow))
                if shadow is not None:
                    self.replays.schedule_completion(course.episode, shadow)
        if episode.unfinished or episode.mode is EpisodeMode.REPLAYING:
            return
        # every byte of the episode has arrived: its links carry only the last ACKs and
        # FINs, which a next episode's key sees as queued packets
        if episode.mode is EpisodeMode.RECORDING:
            record = self._record(now_ns, episode)
            self.continuations.store_recording(now_ns, episode, record)
            self.replays.follow_closed_leader(now_ns, episode, record)
            self.leaders.drop(episode)
        self.table.forget(episode, now_ns)

    def _record(self, now_ns: int, episode: OpenEpisode) -> EpisodeRecord:
        events, avoided = self.host.episode_events(episode.flows)
        draws = self.host.episode_draws(episode.flows)
        self.ledger.note_draws(self.ledger.links_of(episode.flows), draws)
        return EpisodeRecord(
            initial=episode.initial,
            arrivals=tuple(episode.arrivals),
            outcomes=tuple(episode.outcomes[f] for f in episode.flows),
            close_ns=now_ns - episode.t0_ns,
            events=events,
            events_avoided=avoided,
            foreseen=self.forecast.joined_pattern(episode),
            left_out=episode.left_out,
            draws=draws.count,
            draw_digests=(draws.digest,) if draws.drew else (),
        )

    def _fingerprint(self, flows: list[int]):
        """The key of flows opening an episode.

        Each flow's place in the order the flows were created is part of it. Flows
        alike in every other way (the steps of a ring) need not end alike: the
        simulator breaks their ties in the order they were created, so that order
        says which recorded outcome is whose.
        """
        descriptors = {}
        for position, flow in enumerate(sorted(flows)):
            data, ack = self.host.flow_route(flow)
            attributes = f"{self.host.flow_attributes(flow)} created {position}"
            descriptors[flow] = FlowDescriptor(attributes, 0, data, ack)
        # every link once, in the order the flows' paths name them; their queues read in one crossing
        order = list(dict.fromkeys(link for d in descriptors.values() for link in (*d.data_path, *d.ack_path)))
        links = {link: LinkDescriptor(self.ledger.link_attributes(link), queued)
                 for link, queued in zip(order, self.ledger.queues(order))}
        return self.fingerprints.of(Episode(descriptors, links, self.context))


def _components(flows: list[int], links_of: Callable[[int], frozenset[int]]) -> list[list[int]]:
    """Flows grouped by shared links (connected components), each sorted, in order of first flow."""
    groups: list[tuple[set[int], list[int]]] = []
    for flow in flows:
        links = set(links_of(flow))
        joined = [g for g in groups if g[0] & links]
        merged_links, merged_flows = links, [flow]
        for group in joined:
            merged_links |= group[0]
            merged_flows += group[1]
            groups.remove(group)
        groups.append((merged_links, sorted(merged_flows)))
    return sorted((flows for _, flows in groups), key=lambda g: g[0])


def _thin(points: list[TrajectoryPoint]) -> tuple[TrajectoryPoint, ...]:
    if len(points) <= TRAJECTORY_POINTS:
        return tuple(points)
    step = (len(points) - 1) / (TRAJECTORY_POINTS - 1)
    return tuple(points[round(i * step)] for i in range(TRAJECTORY_POINTS))
