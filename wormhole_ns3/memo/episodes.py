"""Memoized episodes: recognise a repeated contention episode and replay it instead of simulating it.

An *episode* opens when flows start on links no open episode holds (the links
are idle: every earlier flow on them has finished and drained). Every flow
that later starts on one of its links joins it; it closes when all its flows
have finished and drained. While it is open nothing else touches its links,
so its course depends only on what its flows are, where they go, when they
start relative to one another, and the links' parameters: exactly what its
key and its arrival signatures contain.

The key is the canonical fingerprint of the flows that open the episode
(``fingerprint.py``). On a miss the episode is simulated (steady skips and
all) and *recorded*: each flow's arrival offset and signature, its finish
offset and a thinned trajectory of its progress and TCP state. On a hit it is
*replayed*: its flows never start; each completes, at its recorded offset, by
a completion the tracker injects (the sink's count and Rx trace, so a
workload waiting on it proceeds), and every flow that joins it must be the
one the record says joins at that offset, with the same signature. Anything
else (an unexpected flow on its links, an expected one that does not come, a
flow that also touches another episode) is a *divergence*: the replay stops
there and every unfinished flow is started for real, credited the bytes the
record says it had delivered by then and given its recorded TCP state.

Training also runs the same episode many times *at once* (every data-parallel
ring of a step, on its own rail). An episode whose key is being recorded right
now by another open episode (its *leader*) *mirrors* it: it is replayed from
the leader's record as the leader writes it, each of its flows completing
when the leader's counterpart does (shifted by the difference of their
starts), and it diverges if the leader stops being recordable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from .fingerprint import Episode, FlowDescriptor, LinkDescriptor, fingerprint
from .record import Arrival, EpisodeRecord, FlowOutcome, RecordError, TrajectoryPoint
from .store import MemoStore

RECORDING, REPLAYING, MIRRORING, UNMEMOIZED = "recording", "replaying", "mirroring", "unmemoized"
#: Modes whose flows do not run: their completions come from a record.
REPLAYED = (REPLAYING, MIRRORING)

#: Trajectory points kept per flow in a record (evenly thinned, last one kept).
TRAJECTORY_POINTS = 24

#: Episodes cheaper than this many events to simulate are not worth a store entry.
MIN_RECORDED_EVENTS = 500


class MemoHost(Protocol):
    """What the memo needs from the controller: facts about flows and links, and actions."""

    def flow_route(self, flow: int) -> tuple[tuple[int, ...], tuple[int, ...]]: ...
    def flow_attributes(self, flow: int) -> str: ...
    def link_attributes(self, link: int) -> str: ...
    def link_queue(self, link: int) -> int: ...
    def memo_blocker(self, flow: int) -> str | None: ...
    def trajectory(self, flow: int) -> list[TrajectoryPoint]: ...
    def episode_events(self, flows: Iterable[int]) -> tuple[int, int]: ...
    def start_flow(self, flow: int) -> None: ...
    def complete_flow_at(self, flow: int, time_ns: int) -> None: ...
    def cancel_completion(self, flow: int) -> None: ...
    def materialize_flow(self, flow: int, delivered: int, tcp: tuple[float, ...] | None) -> None: ...
    def call_at(self, time_ns: int, action: Callable[[], None]) -> None: ...


@dataclass
class OpenEpisode:
    """An episode between its first arrival and the moment its links are idle again.

    A replayed (or mirrored) episode follows a record: ``arrivals`` and
    ``outcome`` say what its flows are and when they end, indexed like the record.
    """

    id: int
    t0_ns: int
    mode: str
    key: bytes | None = None
    initial: int = 0  #: how many flows opened it
    flows: list[int] = field(default_factory=list)  #: in arrival (record) order
    links: set[int] = field(default_factory=set)
    names: dict[int, str] = field(default_factory=dict)  #: link id -> name inside the episode
    arrivals: list[Arrival] = field(default_factory=list)  #: recording: what arrived so far
    outcomes: dict[int, FlowOutcome] = field(default_factory=dict)  #: recording: per flow
    record: EpisodeRecord | None = None  #: replaying
    leader: OpenEpisode | None = None  #: mirroring: the episode recording the same key
    followers: list[OpenEpisode] = field(default_factory=list)  #: recording: who mirrors it
    replayed: dict[int, int] = field(default_factory=dict)  #: record index -> flow
    completing: set[int] = field(default_factory=set)  #: replayed flows with a completion scheduled
    checked: set[int] = field(default_factory=set)  #: offsets whose arrivals a check will verify
    unfinished: set[int] = field(default_factory=set)
    undrained: set[int] = field(default_factory=set)

    @property
    def expected(self) -> Sequence[Arrival]:
        """The arrivals of the record being followed (a leader's grow while it records)."""
        return self.leader.arrivals if self.leader is not None else self.record.arrivals

    def outcome(self, index: int) -> FlowOutcome | None:
        """How the record's flow ``index`` ended, if it has ended yet."""
        if self.leader is not None:
            return self.leader.outcomes.get(self.leader.flows[index])
        return self.record.outcomes[index]


@dataclass(frozen=True)
class MemoEvent:
    """One line of the memo's trace: a replay, a recording stored, or a divergence."""

    time: float
    episode: int
    kind: str  #: "replay", "recorded", "diverged"
    flows: tuple[int, ...]
    span: float  #: s of simulated time the record covers
    events_avoided: int
    detail: str


@dataclass
class MemoStats:
    hits: int = 0
    misses: int = 0
    recorded: int = 0
    diverged: int = 0
    unmemoizable: int = 0
    mirrored: int = 0
    flows_replayed: int = 0
    flows_materialized: int = 0
    events_avoided: int = 0


class Memoizer:
    """Opens, records, replays and closes episodes as flows arrive, finish and drain."""

    def __init__(self, store: MemoStore, context: str, host: MemoHost) -> None:
        self.store = store
        self.context = context
        self.host = host
        self.stats = MemoStats()
        self.trace: list[MemoEvent] = []
        self._episodes: dict[int, OpenEpisode] = {}
        self._episode_of_link: dict[int, int] = {}
        self._episode_of_flow: dict[int, int] = {}
        self._leaders: dict[bytes, OpenEpisode] = {}  #: key -> the open episode recording it
        self._next_id = 0

    # ------------------------------------------------------------ arrivals
    def arrive(self, now_ns: int, flows: Sequence[int]) -> None:
        """Flows that start now: join the open episodes they touch, or open new ones."""
        touching: dict[int, set[int]] = {}
        for flow in sorted(flows):
            links = self._links(flow)
            # a flow whose route is unknown may cross any open episode
            touching[flow] = (
                {self._episode_of_link[l] for l in links if l in self._episode_of_link}
                if links else set(self._episodes)
            )
        fresh = [f for f in sorted(flows) if not touching[f]]
        for component in _components(fresh, self._links):
            self._open(now_ns, component)
        joiners: dict[int, list[int]] = {}
        for flow in sorted(f for f in flows if touching[f]):
            episodes = touching[flow]
            if len(episodes) > 1:
                target = self._merge(now_ns, episodes, f"flow {flow} touches {len(episodes)} episodes")
            else:
                target = next(iter(episodes))
            joiners.setdefault(target, []).append(flow)
        for episode_id, joining in joiners.items():
            self._join(now_ns, self._episodes[episode_id], joining)

    def _open(self, now_ns: int, flows: list[int]) -> None:
        episode = self._new_episode(now_ns, UNMEMOIZED)
        blocked = [b for b in map(self.host.memo_blocker, flows) if b]
        if blocked:
            self.stats.unmemoizable += 1
            self._admit(episode, flows, now_ns)
            return
        print_ = self._fingerprint(flows)
        episode.key, episode.initial = print_.key, len(print_.order)
        self._name_links(episode, print_.order, first_index=0)
        signatures = [self._signature(episode, f) for f in print_.order]
        record = self._lookup(print_.key)
        if record is not None and [a.signature for a in record.arrivals[: record.initial]] == signatures:
            self._replay(episode, record, list(print_.order), now_ns)
            return
        leader = self._leaders.get(print_.key)
        if leader is not None and [a.signature for a in leader.arrivals[: leader.initial]] == signatures:
            self._mirror(episode, leader, list(print_.order), now_ns)
            return
        self.stats.misses += 1
        episode.mode = RECORDING
        episode.arrivals = [Arrival(0, s) for s in signatures]
        self._leaders[episode.key] = episode
        self._admit(episode, list(print_.order), now_ns)

    def _join(self, now_ns: int, episode: OpenEpisode, flows: list[int]) -> None:
        offset = now_ns - episode.t0_ns
        ordered = sorted(flows, key=lambda f: (self._signature(episode, f), f))
        blocker = next(filter(None, map(self.host.memo_blocker, ordered)), None)
        if episode.mode == RECORDING and blocker:
            # a flow the memo cannot replay: the episode is simulated, not recorded
            self._leader_lost(now_ns, episode, blocker)
            episode.mode = UNMEMOIZED
        if episode.mode == RECORDING:
            for flow in ordered:
                episode.arrivals.append(Arrival(offset, self._signature(episode, flow)))
                self._name_links(episode, [flow], first_index=len(episode.flows))
                self._admit(episode, [flow], now_ns)
            for follower in episode.followers:
                self._check_later(follower, offset)
            return
        if episode.mode in REPLAYED:
            for position, flow in enumerate(ordered):
                blocker = self.host.memo_blocker(flow)
                index = None if blocker else self._expected(episode, offset, self._signature(episode, flow))
                if index is None:
                    self._diverge(now_ns, episode, f"flow {flow} was not expected at +{offset} ns"
                                  + (f" ({blocker})" if blocker else ""))
                    self._admit(episode, ordered[position:], now_ns)
                    return
                self._name_links(episode, [flow], first_index=index)
                self._virtualize(episode, index, flow)
            return
        self._admit(episode, ordered, now_ns)

    def _admit(self, episode: OpenEpisode, flows: list[int], now_ns: int) -> None:
        """Flows simulated for real in the episode (recorded if it is recording)."""
        for flow in flows:
            if flow not in episode.flows:
                episode.flows.append(flow)
            self._hold(episode, flow)
            self.host.start_flow(flow)

    def _hold(self, episode: OpenEpisode, flow: int) -> None:
        episode.unfinished.add(flow)
        episode.undrained.add(flow)
        self._episode_of_flow[flow] = episode.id
        for link in self._links(flow):
            episode.links.add(link)
            self._episode_of_link[link] = episode.id

    # -------------------------------------------------------------- replay
    def _replay(self, episode: OpenEpisode, record: EpisodeRecord, order: list[int], now_ns: int) -> None:
        self.stats.hits += 1
        episode.mode, episode.record = REPLAYING, record
        for index, flow in enumerate(order):
            self._virtualize(episode, index, flow)
        for arrival in record.arrivals[record.initial:]:
            self._check_later(episode, arrival.offset_ns)
        self.host.call_at(episode.t0_ns + record.close_ns, lambda e=episode: self._close_replay(e))
        avoided = record.events + record.events_avoided
        self.trace.append(MemoEvent(
            now_ns * 1e-9, episode.id, "replay", tuple(order), record.close_ns * 1e-9, avoided,
            f"memo hit {episode.key.hex()[:12]}: {len(order)} flows opening on idle links match a "
            f"recorded episode of {len(record.arrivals)} flows (canonical key: same flows, routes, "
            f"link and transport parameters, versions); completions replayed, later arrivals checked",
        ))

    def _mirror(self, episode: OpenEpisode, leader: OpenEpisode, order: list[int], now_ns: int) -> None:
        self.stats.mirrored += 1
        episode.mode, episode.leader = MIRRORING, leader
        leader.followers.append(episode)
        for index, flow in enumerate(order):
            self._virtualize(episode, index, flow)
        for offset in {a.offset_ns for a in leader.arrivals[leader.initial:]}:
            self._check_later(episode, offset)
        self.trace.append(MemoEvent(
            now_ns * 1e-9, episode.id, "mirror", tuple(order), 0.0, 0,
            f"memo key {episode.key.hex()[:12]} is being recorded by episode {leader.id} "
            f"(started {(episode.t0_ns - leader.t0_ns) * 1e-9:.9f} s earlier): {len(order)} flows "
            f"on idle links follow it, completing when their counterparts do",
        ))

    def _virtualize(self, episode: OpenEpisode, index: int, flow: int) -> None:
        """A flow of a replayed episode: it never starts; it completes when the record says."""
        episode.replayed[index] = flow
        if flow not in episode.flows:
            episode.flows.append(flow)
        self._hold(episode, flow)
        self.stats.flows_replayed += 1
        self._schedule_completion(episode, index)

    def _schedule_completion(self, episode: OpenEpisode, index: int) -> None:
        """Complete replayed flow ``index`` at its recorded offset, once the record has it."""
        flow = episode.replayed.get(index)
        if flow is None or flow not in episode.unfinished or flow in episode.completing:
            return
        outcome = episode.outcome(index)
        if outcome is None:
            return
        episode.completing.add(flow)
        self.host.complete_flow_at(flow, episode.t0_ns + outcome.finish_ns)

    def virtual_finished(self, flow: int) -> None:
        """A replayed flow's completion was injected."""
        episode = self._episodes.get(self._episode_of_flow.get(flow, -1))
        if episode is not None:
            episode.unfinished.discard(flow)
            episode.completing.discard(flow)

    def _expected(self, episode: OpenEpisode, offset: int, signature: str) -> int | None:
        expected = episode.expected
        initial = episode.leader.initial if episode.leader is not None else episode.record.initial
        for index in range(initial, len(expected)):
            arrival = expected[index]
            if arrival.offset_ns == offset and index not in episode.replayed and arrival.signature == signature:
                return index
        return None

    def _check_later(self, episode: OpenEpisode, offset: int) -> None:
        """Verify, just after ``offset``, that every recorded arrival at that offset came."""
        if offset not in episode.checked:
            episode.checked.add(offset)
            self.host.call_at(episode.t0_ns + offset + 1, lambda e=episode, o=offset: self._check(e, o))

    def _check(self, episode: OpenEpisode, offset: int) -> None:
        if episode.mode not in REPLAYED:
            return
        expected = episode.expected
        missing = [i for i, a in enumerate(expected) if a.offset_ns == offset and i not in episode.replayed]
        if missing:
            self._diverge(episode.t0_ns + offset + 1, episode,
                          f"{len(missing)} recorded arrival(s) at +{offset} ns did not happen")

    def _close_replay(self, episode: OpenEpisode) -> None:
        if episode.mode not in REPLAYED:
            return
        record = episode.record
        self.stats.events_avoided += record.events + record.events_avoided
        self._forget(episode)

    def _leader_closed(self, leader: OpenEpisode, record: EpisodeRecord) -> None:
        """The leader's record is complete: its followers now replay it like a stored one."""
        for follower in leader.followers:
            if follower.mode != MIRRORING:
                continue
            follower.mode, follower.record, follower.leader = REPLAYING, record, None
            for index in range(len(record.arrivals)):
                self._schedule_completion(follower, index)
            self.host.call_at(follower.t0_ns + record.close_ns, lambda e=follower: self._close_replay(e))
        leader.followers = []

    def _leader_lost(self, now_ns: int, leader: OpenEpisode, why: str) -> None:
        """The leader can no longer be recorded: its followers stop following it."""
        if self._leaders.get(leader.key) is leader:
            del self._leaders[leader.key]
        for follower in leader.followers:
            if follower.mode == MIRRORING:
                self._diverge(now_ns, follower, f"the episode it mirrored diverged ({why})")
        leader.followers = []

    def _diverge(self, now_ns: int, episode: OpenEpisode, why: str) -> None:
        """Stop replaying: every unfinished replayed flow starts for real where the record had it."""
        offset = now_ns - episode.t0_ns
        resumed = []
        for index, flow in sorted(episode.replayed.items()):
            if flow not in episode.unfinished:
                continue
            if flow in episode.completing:
                self.host.cancel_completion(flow)
                episode.completing.discard(flow)
            delivered, point = self._progress(episode, index, offset)
            self.host.materialize_flow(flow, delivered, point.tcp if point else None)
            resumed.append(flow)
        if episode.leader is not None and episode in episode.leader.followers:
            episode.leader.followers.remove(episode)
        episode.mode, episode.leader = UNMEMOIZED, None
        self.stats.diverged += 1
        self.stats.flows_materialized += len(resumed)
        self.trace.append(MemoEvent(
            now_ns * 1e-9, episode.id, "diverged", tuple(resumed), offset * 1e-9, 0,
            f"{why}: replay stopped at +{offset} ns, {len(resumed)} flow(s) resumed from the "
            f"recorded trajectory",
        ))

    def _progress(self, episode: OpenEpisode, index: int, offset: int) -> tuple[int, TrajectoryPoint | None]:
        """Delivered bytes and TCP state of the record's flow ``index`` at ``offset``."""
        outcome = episode.outcome(index)
        if outcome is None:  # a leader's flow still running: its trajectory so far
            leader = episode.leader
            flow = leader.flows[index]
            points = tuple(
                TrajectoryPoint(p.offset_ns - leader.t0_ns, p.delivered, p.tcp)
                for p in self.host.trajectory(flow) if p.offset_ns >= leader.t0_ns
            )
            outcome = FlowOutcome(finish_ns=offset, trajectory=points)
        return outcome.at(offset)

    def _merge(self, now_ns: int, episode_ids: Iterable[int], why: str) -> int:
        """Several open episodes meet: from now on they are one, simulated for real."""
        ids = sorted(episode_ids)
        target = self._episodes[ids[0]]
        for episode_id in ids:
            episode = self._episodes[episode_id]
            if episode.mode in REPLAYED:
                self._diverge(now_ns, episode, why)
            elif episode.mode == RECORDING:
                self._leader_lost(now_ns, episode, why)
            episode.mode = UNMEMOIZED
            if episode is target:
                continue
            for flow in episode.flows:
                target.flows.append(flow)
                self._episode_of_flow[flow] = target.id
            target.unfinished |= episode.unfinished
            target.undrained |= episode.undrained
            for link in episode.links:
                target.links.add(link)
                self._episode_of_link[link] = target.id
            del self._episodes[episode_id]
        return target.id

    # ----------------------------------------------------- finish and close
    def finished(self, now_ns: int, flow: int) -> None:
        """A flow simulated for real received its last byte."""
        episode = self._episodes.get(self._episode_of_flow.get(flow, -1))
        if episode is None:
            return
        episode.unfinished.discard(flow)
        if episode.mode == RECORDING:
            points = [
                TrajectoryPoint(p.offset_ns - episode.t0_ns, p.delivered, p.tcp)
                for p in self.host.trajectory(flow)
                if p.offset_ns >= episode.t0_ns
            ]
            episode.outcomes[flow] = FlowOutcome(now_ns - episode.t0_ns, _thin(points))
            index = episode.flows.index(flow)
            for follower in episode.followers:
                self._schedule_completion(follower, index)

    def drained(self, now_ns: int, flow: int) -> None:
        """A finished flow's last packets left its links: close its episode once all have."""
        episode = self._episodes.get(self._episode_of_flow.get(flow, -1))
        if episode is None or episode.mode in REPLAYED:
            return
        episode.undrained.discard(flow)
        if episode.unfinished or episode.undrained:
            return
        if episode.mode == RECORDING:
            record = self._record(now_ns, episode)
            self._store(now_ns, episode, record)
            self._leader_closed(episode, record)
            if self._leaders.get(episode.key) is episode:
                del self._leaders[episode.key]
        self._forget(episode)

    def _record(self, now_ns: int, episode: OpenEpisode) -> EpisodeRecord:
        events, avoided = self.host.episode_events(episode.flows)
        return EpisodeRecord(
            initial=episode.initial,
            arrivals=tuple(episode.arrivals),
            outcomes=tuple(episode.outcomes[f] for f in episode.flows),
            close_ns=now_ns - episode.t0_ns,
            events=events,
            events_avoided=avoided,
        )

    def _store(self, now_ns: int, episode: OpenEpisode, record: EpisodeRecord) -> None:
        """Keep a closed recording, if it was worth simulating."""
        total = record.events + record.events_avoided
        if total < MIN_RECORDED_EVENTS:
            return
        meta = {"flows": len(episode.flows), "span_ns": record.close_ns, "events": total}
        if self.store.put(episode.key, record.to_bytes(), meta):
            self.stats.recorded += 1
            self.trace.append(MemoEvent(
                now_ns * 1e-9, episode.id, "recorded", tuple(episode.flows), record.close_ns * 1e-9, 0,
                f"stored {episode.key.hex()[:12]}: {len(episode.flows)} flows, {total} events to simulate",
            ))

    def _forget(self, episode: OpenEpisode) -> None:
        for link in episode.links:
            if self._episode_of_link.get(link) == episode.id:
                del self._episode_of_link[link]
        for flow in episode.flows:
            if self._episode_of_flow.get(flow) == episode.id:
                del self._episode_of_flow[flow]
        self._episodes.pop(episode.id, None)

    # ------------------------------------------------------------- helpers
    def _new_episode(self, now_ns: int, mode: str) -> OpenEpisode:
        episode = OpenEpisode(id=self._next_id, t0_ns=now_ns, mode=mode)
        self._next_id += 1
        self._episodes[episode.id] = episode
        return episode

    def _links(self, flow: int) -> frozenset[int]:
        data, ack = self.host.flow_route(flow)
        return frozenset(data) | frozenset(ack)

    def _fingerprint(self, flows: list[int]):
        descriptors = {}
        links = {}
        for flow in flows:
            data, ack = self.host.flow_route(flow)
            descriptors[flow] = FlowDescriptor(self.host.flow_attributes(flow), 0, data, ack)
            for link in (*data, *ack):
                links[link] = LinkDescriptor(self.host.link_attributes(link), self.host.link_queue(link))
        return fingerprint(Episode(descriptors, links, self.context))

    def _name_links(self, episode: OpenEpisode, flows: Iterable[int], first_index: int) -> None:
        """Name the links these flows bring to the episode after their arrival index and hop."""
        for index, flow in enumerate(flows, start=first_index):
            data, ack = self.host.flow_route(flow)
            for direction, path in (("d", data), ("a", ack)):
                for hop, link in enumerate(path):
                    episode.names.setdefault(link, f"{index}{direction}{hop}")

    def _signature(self, episode: OpenEpisode, flow: int) -> str:
        """What a flow is and which of the episode's links it crosses, in the episode's own names.

        A link the episode does not hold yet is named by its place in the flow's
        own path, with its parameters and queue, so the signature never depends
        on link ids.
        """
        data, ack = self.host.flow_route(flow)
        parts = [_digest(self.host.flow_attributes(flow))]
        for direction, path in (("d", data), ("a", ack)):
            parts.append(",".join(
                episode.names.get(link)
                or f"x{direction}{hop}:{_digest(self.host.link_attributes(link))}:{self.host.link_queue(link)}"
                for hop, link in enumerate(path)
            ))
        return "|".join(parts)

    def _lookup(self, key: bytes) -> EpisodeRecord | None:
        value = self.store.get(key)
        if value is None:
            return None
        try:
            return EpisodeRecord.from_bytes(value)
        except RecordError:
            return None  # a record of another layout: simulate (and re-record) instead


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


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]
