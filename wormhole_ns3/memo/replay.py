"""Replaying an episode: holding its flows, completing them as the courses say, and diverging when they cannot.

A replay is in one of a few states. While arrivals are still to come it is
*matching*: a flow that joins must be one a course has joining at that offset,
with the same signature, and a course whose next joiner does not come is dropped
(checked just after each recorded offset). Its flows are *held* (their sockets
take no data, so no data packet is simulated); each completes, at its recorded
offset, by a completion the host injects once every course knows when it
ends. It is *completed* when its flows have completed and a course has no
joiner left; it *diverges* when no course is left (an unexpected flow on its
links, an expected one that does not come, a meeting no record holds): every
unfinished flow resumes for real, credited the bytes the record had it deliver
by then and given its recorded congestion state, and the next episodes with
its key are recorded again.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial

from wormhole_ns3.core.draws import DrawCase
from wormhole_ns3.core.flows import TrajectoryPoint
from wormhole_ns3.core.ports import MemoHost
from wormhole_ns3.core.shortcuts import GuardKind
from wormhole_ns3.memo.continuations import Continuations
from wormhole_ns3.memo.decisions import Cause, Diverged, MemoDecision, MemoStats, MemoTrace, Mirrored, Replayed
from wormhole_ns3.memo.forecast import Forecast
from wormhole_ns3.memo.links import LinkLedger
from wormhole_ns3.memo.meetings import Leaders
from wormhole_ns3.memo.owed import OwedEnds
from wormhole_ns3.memo.record import EpisodeRecord, FlowOutcome
from wormhole_ns3.memo.table import Batch, Course, EpisodeMode, EpisodeTable, OpenEpisode, ReplayState


class Replays:
    """The replays and mirrors open in the run: their held flows, completions, checks and divergences."""

    def __init__(self, host: MemoHost, ledger: LinkLedger, table: EpisodeTable, forecast: Forecast,
                 leaders: Leaders, continuations: Continuations, batch: Batch, stats: MemoStats,
                 trace: MemoTrace) -> None:
        self.host = host
        self.ledger = ledger
        self.table = table
        self.forecast = forecast
        self.leaders = leaders
        self.continuations = continuations
        self.batch = batch
        self.stats = stats
        self.trace = trace
        #: flow -> the shortcut standing in for it, for every flow held (``held_as``)
        self.held: dict[int, GuardKind] = {}
        #: the ends of transfer the replayed completions owe
        self.owed = OwedEnds(host, ledger, stats)

    def start(self, now_ns: int, episode: OpenEpisode, candidates: list[Course], order: list[int]) -> None:
        """The episode opening with ``order`` follows these courses (stored records, or one live recording)."""
        mirrored = candidates[0].leader is not None
        if mirrored:
            self.stats.mirrored += 1
        else:
            self.stats.hits += 1
        episode.mode, episode.candidates, episode.mirror = EpisodeMode.REPLAYING, candidates, mirrored
        for index, flow in enumerate(order):
            for candidate in candidates:
                candidate.match(flow, index)
        self.hold(episode, order, GuardKind.MIRROR if mirrored else GuardKind.REPLAY)
        for candidate in candidates:
            for arrival in candidate.arrivals[candidate.initial:]:
                self.check_later(episode, arrival.offset_ns)
        leader = candidates[0].leader
        case = episode.draw_case
        if leader is not None:
            self.trace.emit(MemoDecision.MIRROR, Mirrored(episode.key, leader.id, episode.t0_ns - leader.t0_ns,
                                                          len(order), case),
                            now_ns, episode.id, tuple(order), draws=case)
            return
        self.trace.emit(MemoDecision.REPLAY,
                        Replayed(episode.key, len(order), len(candidates), episode.confirmed, episode.chosen, case),
                        now_ns, episode.id, tuple(order), span_ns=max(c.stored.close_ns for c in candidates),
                        events_avoided=max(c.stored.events + c.stored.events_avoided for c in candidates), draws=case)

    def hold(self, episode: OpenEpisode, flows: list[int], kind: GuardKind) -> None:
        """Flows a replay holds (at the batch's end), completed in the order their record has them finish."""
        for flow in flows:
            self.table.hold(episode, flow)
            self.batch.launching[flow] = self.host.hold_flow
            self.held[flow] = kind
            self.stats.flows_replayed += 1
        self.schedule_completions(episode, flows)

    def resume_touched(self, now_ns: int, flows: Sequence[int]) -> None:
        """In a child checking a decision: replays these flows (started for real) touch resume for real too.

        The child simulates what the parent held; a real flow meeting flows still
        held would meet links empty of their packets. Resumed from their recorded
        trajectories, they are what a divergence would make of them.
        """
        touched = {self.table.of_link[link] for f in flows for link in self.ledger.links(f)
                   if link in self.table.of_link}
        for episode_id in sorted(touched):
            episode = self.table.episodes.get(episode_id)
            if episode is not None and episode.mode is EpisodeMode.REPLAYING:
                self.diverge(now_ns, episode, Cause.GUARD_CHECK,
                             "flows the error guard's check simulates for real meet it")
        self.owed.meet(now_ns, flows)

    def held_as(self, flows: Iterable[int]) -> dict[int, GuardKind]:
        """The shortcut standing in for each of these flows the memo held as they opened an episode, or
        opened apart where a replay's record has them, and how it stands in now (resumed, if it diverged).

        Joiners of a replay are left out: what they would do depends on the replay's
        flows, which a check forked as they join cannot simulate for real (it forks
        at an opening, and simulates the joiners then).
        """
        return {flow: self.held[flow] for flow in flows if flow in self.held}

    def schedule_completions(self, episode: OpenEpisode, flows: list[int]) -> None:
        for flow in sorted(flows, key=partial(self._completion_order, episode)):
            self.schedule_completion(episode, flow)

    def schedule_completion(self, episode: OpenEpisode, flow: int) -> None:
        """Complete a held flow when the continuations say, once all of them know it."""
        if flow not in episode.unfinished or flow in episode.completing:
            return
        finishes = set()
        for candidate in episode.candidates:
            outcome = candidate.outcome(candidate.index_of[flow])
            if outcome is None:
                return  # a leader still simulating it: it says when
            finishes.add(outcome.finish_ns)
        episode.completing[flow] = min(finishes)
        self.host.complete_flow_at(flow, episode.t0_ns + min(finishes))
        self.forecast.forget()  # what the completion releases is known now

    def _cancel_completion(self, flow: int) -> None:
        self.host.cancel_completion(flow)
        self.forecast.forget()  # what the completion would release is not known any more

    @staticmethod
    def _completion_order(episode: OpenEpisode, flow: int) -> tuple[int, int]:
        """When the continuations have a held flow finish, and its rank among finishes then.

        Completions due at the same instant run in the order they are scheduled; in
        this order they run as recorded (flows a leader has not finished yet come last,
        and are scheduled when it finishes them, in its order).
        """
        known = [o for c in episode.candidates if (o := c.outcome(c.index_of[flow])) is not None]
        if len(known) < len(episode.candidates):
            return (2**63, 0)
        return (min(o.finish_ns for o in known), min(o.rank for o in known))

    def completing(self, now_ns: int, flow: int) -> bool:
        """A held flow's completion is due: True to inject it, False if the replay diverged instead."""
        episode = self.table.episodes.get(self.table.of_flow.get(flow, -1))
        if episode is None or episode.mode is not EpisodeMode.REPLAYING:
            return False
        offset = episode.completing.pop(flow)
        agreeing = [c for c in episode.candidates if c.finish_of(flow) == offset]
        if len(agreeing) < len(episode.candidates):
            # continuations that nothing observed could tell apart disagree: the run is not
            # deterministic enough to replay
            self.diverge(now_ns, episode, Cause.DISAGREE, f"continuations disagree on when flow {flow} ends")
            return False
        self.ledger.note_recorded_queues(now_ns, flow, agreeing[0].outcome(agreeing[0].index_of[flow]))
        self.owed.complete(now_ns, flow)
        episode.unfinished.discard(flow)
        self.table.release_finished(episode, flow, now_ns)
        self.close_if_done(episode, now_ns)
        return True

    def simulated_from_now(self, now_ns: int, flows: Sequence[int]) -> None:
        """These flows are simulated packet by packet from now on: what the replays owe on their links
        goes on the wire before them."""
        self.owed.meet(now_ns, flows)

    def close_if_done(self, episode: OpenEpisode, now_ns: int) -> None:
        """A replay ends when its flows have completed and a continuation has no joiner left."""
        done = [c for c in episode.candidates if c.complete()]  # holding, and none of its flows left
        if episode.unfinished or not done:
            return
        record = done[0].stored
        self.continuations.replayed(episode.key, 1, 0)
        if episode.mirror:
            self.continuations.mirrored(1, 0)
        self.stats.events_avoided += record.events + record.events_avoided
        episode.ended = ReplayState.COMPLETED
        self.table.forget(episode, now_ns)

    @staticmethod
    def expectation(episode: OpenEpisode, offset: int) -> str:
        """What the continuations expected next, to explain a divergence."""
        pending = sorted({
            a.offset_ns for c in episode.candidates for i, a in enumerate(c.arrivals)
            if i not in c.flow_of
        })
        later = [o for o in pending if o >= offset][:3]
        return (f" (next recorded arrivals at +{', +'.join(map(str, later))} ns)" if later
                else " (no more arrivals recorded)")

    def complete_due(self, now_ns: int, flows: Sequence[int]) -> None:
        """Replayed flows that end right now end before these arrivals are looked at.

        Simultaneous events are ordered by the simulator; a flow the recording saw
        start just after an episode's last byte must find it closed in the replay too.
        """
        touched = {self.table.of_link[link] for f in flows for link in self.ledger.links(f)
                   if link in self.table.of_link}
        for episode_id in sorted(touched):
            episode = self.table.episodes.get(episode_id)
            if episode is None or episode.mode is not EpisodeMode.REPLAYING:
                continue
            for flow, offset in sorted(episode.completing.items()):
                if episode.t0_ns + offset == now_ns:
                    self._cancel_completion(flow)
                    if self.completing(now_ns, flow):
                        self.host.complete_flow_now(flow)

    def check_later(self, episode: OpenEpisode, offset: int) -> None:
        """Verify, just after ``offset``, that the recorded arrivals at that offset came."""
        if offset not in episode.checked:
            episode.checked.add(offset)
            self.host.call_at(episode.t0_ns + offset + 1, partial(self._check, episode, offset))

    def _check(self, episode: OpenEpisode, offset: int) -> None:
        if episode.mode is not EpisodeMode.REPLAYING:
            return
        kept = [c for c in episode.candidates if not c.missing_at(offset)]
        if not kept:
            self.diverge(episode.t0_ns + offset + 1, episode, Cause.MISSING_ARRIVALS,
                          f"the recorded arrivals at +{offset} ns did not happen")
        else:
            self.keep(episode, kept)
            self.close_if_done(episode, episode.t0_ns + offset + 1)

    def keep(self, episode: OpenEpisode, kept: list[Course]) -> None:
        """Drop the continuations what was seen rules out; their schedule may move later."""
        if len(kept) == len(episode.candidates):
            return
        for dropped in episode.candidates:
            if dropped not in kept and dropped.leader is not None:
                dropped.leader.followers.remove(dropped)
        episode.candidates = kept
        for flow, _ in list(episode.completing.items()):
            self._cancel_completion(flow)
            del episode.completing[flow]
            self.schedule_completion(episode, flow)

    def follow_closed_leader(self, now_ns: int, leader: OpenEpisode, record: EpisodeRecord) -> None:
        """A leader's record is complete: its followers now replay it like a stored one."""
        for candidate in leader.followers:
            candidate.record, candidate.leader = record, None
            for flow in list(candidate.episode.unfinished):
                self.schedule_completion(candidate.episode, flow)
            self.close_if_done(candidate.episode, now_ns)
        leader.followers = []

    def watch_leader_draws(self, now_ns: int, leader: OpenEpisode) -> None:
        """Before a leader's finish reaches its followers: a leader that drew leaves the twins it may not lead.

        A mirror taken because no model on its links was known to draw (or its
        key's recordings drew nothing) stands for a deterministic course; a leader
        that drew after all (a model drawing through a variable of its own) ran a
        course its twins would not, under draws of their own.
        """
        watched = [c for c in leader.followers
                   if c.episode.draw_case in (DrawCase.NO_SOURCE, DrawCase.QUIET_SO_FAR, DrawCase.DREW_NOTHING)]
        if not watched:
            return
        draws = self.host.episode_draws(leader.flows)
        if not draws.drew:
            return
        for candidate in watched:
            if candidate.episode.mode is EpisodeMode.REPLAYING:
                candidate.episode.draw_case = DrawCase.DEPENDS
                self.diverge(now_ns, candidate.episode, Cause.LEADER_DREW,
                             f"the episode it mirrored {draws.describe()}, and its course depends on draws of its own")

    def lose_leadership(self, now_ns: int, leader: OpenEpisode, why: str) -> None:
        """A recording that stops being recordable: whoever mirrors it must stop too."""
        self.leaders.drop(leader)
        for candidate in list(leader.followers):
            if candidate.episode.mode is EpisodeMode.REPLAYING:
                self.diverge(now_ns, candidate.episode, Cause.LEADER_DIVERGED,
                             f"the episode it mirrored diverged ({why})")
        leader.followers = []

    def diverge(self, now_ns: int, episode: OpenEpisode, cause: Cause, why: str) -> None:
        """Stop replaying: every unfinished held flow resumes for real where the record had it.

        ``why`` says the ``cause`` with its particulars. A merge (the episode met another
        one, or its leader did: ``Cause.merged``) is what no record of the key can hold;
        such divergences count against the key's track record. A joiner the
        continuations lack only teaches the key one more continuation.
        """
        offset = now_ns - episode.t0_ns
        candidate = episode.candidates[0]
        resumed = []
        for flow in [f for f in episode.flows if f in episode.unfinished]:
            if flow in episode.completing:
                self._cancel_completion(flow)
                del episode.completing[flow]
            if flow in self.batch.launching:
                # decided on in this very batch, not held yet: it just starts, in the batch's order
                self.batch.launching[flow] = self.host.start_flow
                self.held.pop(flow, None)
            else:
                delivered, point = self._progress(candidate, candidate.index_of[flow], offset)
                self.owed.meet(now_ns, (flow,))
                self.host.resume_flow(flow, delivered, point.state if point else None)
                self.held[flow] = GuardKind.RESUME
            resumed.append(flow)
        for other in episode.candidates:
            if other.leader is not None:
                other.leader.followers.remove(other)
        episode.mode, episode.candidates, episode.ended = EpisodeMode.UNMEMOIZED, [], ReplayState.DIVERGED
        self.continuations.relearn.add(episode.key)
        if cause.merged:
            self.continuations.replayed(episode.key, 0, 1)
        if episode.mirror:
            self.continuations.mirrored(0, 1)
        self.stats.diverged += 1
        self.stats.flows_resumed += len(resumed)
        self.trace.emit(MemoDecision.DIVERGED, Diverged(cause, why, offset, len(resumed)), now_ns, episode.id,
                        tuple(resumed), span_ns=offset,
                        draws=episode.draw_case if episode.draw_case is DrawCase.DEPENDS else None)

    def _progress(self, candidate: Course, index: int, offset: int) -> tuple[int, TrajectoryPoint | None]:
        """Delivered bytes and congestion state of the continuation's flow ``index`` at ``offset``."""
        outcome = candidate.outcome(index)
        if outcome is None:  # a leader's flow still running: its trajectory so far
            leader = candidate.leader
            assert leader is not None, "a stored record knows how each of its flows ends"
            points = tuple(
                TrajectoryPoint(p.offset_ns - leader.t0_ns, p.delivered, p.state)
                for p in self.host.trajectory(leader.flows[index]) if p.offset_ns >= leader.t0_ns
            )
            outcome = FlowOutcome(finish_ns=offset, trajectory=points)
        return outcome.at(offset)
