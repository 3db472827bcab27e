"""Memoized episodes: recognise a repeated contention episode and replay it instead of simulating it.

An *episode* opens when flows start on links no open episode holds (every
earlier flow on them has delivered its last byte). Every flow that later
starts on one of its links joins it; it closes when all its flows have
delivered their last byte. A link none of its unfinished flows uses is
released as soon as that is so: what starts there later meets none of them.
While it is open nothing else touches the links it holds, so its course
depends only on what its flows are, where they go, when they start relative
to one another, and the links' parameters: exactly what its key and its
arrival signatures contain.

The key is the canonical fingerprint of the flows that open the episode
(``fingerprint.py``). On a miss the episode is simulated (steady skips and
all) and *recorded*: each flow's arrival offset and signature, its finish
offset and a thinned trajectory of its progress and congestion state. A key keeps
several such *continuations* (``record.py``): what joins an episode later
comes from the rest of the run.

On a hit the episode is *replayed*: its flows connect but are *held* (their
sockets take no data, so no data packet is simulated); each completes, at
its recorded offset, by a completion the tracker injects (the sink's count
and Rx trace, so a workload waiting on it proceeds), which also puts the end
of the transfer on the wire: the receiver's last ACK and FIN, and the
sender's ACK of that. A flow the completion starts (the next step of a
collective) meets them, as in a plain run; without them it started on
emptier links and ran differently (on moe-medium, 4% off at the first mirror). What it leaves
out are the packets of other flows queued behind the last byte (the ACKs a ring's host
sends behind its own data: 587 on gpt-medium, 2.5 us of a 470 us step). An episode opening
at that instant is keyed with the queues the replayed completion's record had there
(``FlowOutcome.trailing``), as if after a simulated step, and replays what a plain run
does; recorded there instead, it ran on emptier links than a plain run, so its record
(``left_out``) stands in only until one recorded after a simulated step replaces it. The replay follows
every continuation that agrees with what it has seen: a flow that joins must
be one a continuation has joining at that offset, with the same signature,
and a continuation whose next joiner does not come is dropped.

Episodes that open apart and later meet (overlapping all-to-alls: a flow
between them starts) are one episode from then on. A recording that meets
episodes which have only simulated their opening flows *absorbs* them: nothing
else touched any of them, so the union is still isolated, and the record has
the absorbed openings arrive *apart*, under their own key, at their offsets. A
replay of it holds flows that open apart with that key at that offset
(``_join_apart``), and the flow that met them is then an expected joiner.

When no continuation is left (an unexpected flow on its links, an expected
one that does not come, a meeting no record holds) the replay *diverges*: every
unfinished flow resumes for real, already connected, credited the bytes the
record had it deliver by then and given its recorded congestion state; and the next
episodes with that key are recorded again, so the continuation that
happened is learned. How a key's replays went is kept with it in the store
(``record.TrackRecord``): a key whose replays end in merges more than rarely
(its episodes keep meeting others in ways no record holds) is simulated
instead, because every resumed flow is close to, not exactly, what a plain run
does.

Training also runs the same episode many times *at once* (every
data-parallel ring of a step, on its own rail). An episode whose key is being
recorded right now by another open episode (its *leader*) *mirrors* it: it
follows the leader's record as the leader writes it, each of its flows
completing when the leader's counterpart does (shifted by the difference of
their starts), and it diverges if the leader stops being recordable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Protocol

from wormhole_ns3.core.backoff import BackOff
from wormhole_ns3.core.draws import DrawCase, Draws, Fidelity, RandomSource, port_loads
from wormhole_ns3.core.flows import FlowKind
from wormhole_ns3.core.shortcuts import MEMO_KINDS, GuardKind
from wormhole_ns3.core.trace import TraceKind
from wormhole_ns3.core.vocabulary import Label
from wormhole_ns3.memo.fingerprint import Episode, FlowDescriptor, LinkDescriptor, fingerprint
from wormhole_ns3.memo.randomness import DrawHistory, admit_mirror, admit_records, describe_case
from wormhole_ns3.memo.record import (
    MIN_COMPLETED_PER_DIVERGENCE,
    Arrival,
    EpisodeRecord,
    FlowOutcome,
    RecordError,
    TrackRecord,
    TrajectoryPoint,
    add_continuation,
    add_replays,
    decode_value,
)
from wormhole_ns3.memo.store import MemoStore

RECORDING, REPLAYING, UNMEMOIZED = "recording", "replaying", "unmemoized"

#: Trajectory points kept per flow in a record (evenly thinned, last one kept).
TRAJECTORY_POINTS = 24

#: Episodes cheaper than this many events to simulate are not worth a store entry.
MIN_RECORDED_EVENTS = 500

#: How many times a lookup may ask the workload what a replay would release (``_released_by_replay``).
MAX_RELEASE_QUERIES = 32

#: Recordings that must have taken a continuation's course before it is followed with
#: joiners the run does not know of yet (``_foreseen``).
CONFIRMED_COURSE = 2

#: Stored continuations of paced flows with the same arrivals whose every flow ends within
#: this share of their span of the others' are one course to a replay (``_one_course``).
ALIKE_ENDS_SHARE = 1e-3

#: Paced (RDMA) kinds whose flows group into episodes, and free a finished flow's links, as
#: TCP flows do (``_arrive``, ``_release_finished_links``); their replays and mirrors are
#: then only taken where no flow the run cannot foresee may reach them (``_intruding``).
#: On moe-8x7b-64g-dcqcn the rest of an all-to-all joins the two flows that open it 50 ns
#: earlier, and a pipeline send starts on a host whose all-to-all flows are done while the
#: others still run: each all-to-all was simulated. HPCC is not among them: grouped so, on
#: moe-small-hpcc replays that nothing disturbed ended pipeline sends beside them up to 30%
#: off. Why is not known yet; the first suspect is state that outlives an episode and no key
#: holds (the switches' in-band telemetry).
GROUPED_PACED_KINDS = frozenset({FlowKind.RDMA_DCQCN})

#: How many drain times ahead a paced mirror looks for flows the run cannot foresee yet
#: (``_intruding``): a mirror has no record to say when it ends, and an all-to-all of
#: DCQCN flows lasts 3.3 drain times on moe-8x7b-64g-dcqcn.
PACED_REACH = 8

#: A recording that has grown past this many flows without closing, while the run's shortcuts
#: have not paid for its bets (``core/backoff.py``), stops: its links never went idle, so no
#: opening of its key can come while it is stored, and the course its joiners took is one a
#: replay must match joiner by joiner. The interleaved all-to-alls of
#: ``experiments/zoo/moe_alltoall.py`` make one episode of the whole run: 896 flows recorded.
RECORDING_BOUND = 256

#: A link an episode released less than this long ago still carries its last ACKs and
#: FINs (on the wire, not only in queues): how long ago is part of the link's state.
RECENT_NS = 1_000_000


class MemoHost(Protocol):
    """What the memo needs from the controller: facts about flows and links, and actions."""

    def flow_route(self, flow: int) -> tuple[tuple[int, ...], tuple[int, ...]]: ...
    def flow_attributes(self, flow: int) -> str: ...
    def link_attributes(self, link: int) -> str: ...
    def link_queue(self, link: int) -> int: ...
    def flow_nodes(self, flow: int) -> tuple[int, int]: ...
    def memo_blocker(self, flow: int) -> str | None: ...
    def flow_paced(self, flow: int) -> bool: ...
    def paced_grouped(self, flow: int) -> bool: ...
    def trajectory(self, flow: int) -> list[TrajectoryPoint]: ...
    def upcoming(self, now_ns: int, horizon_ns: int) -> list[tuple[int, frozenset[int], tuple[int, int]]]: ...
    def releases(self, now_ns: int, horizon_ns: int, flow_ends: dict[int, int], coming_ends: list[tuple[Any, int]],
                 ) -> list[tuple[int, frozenset[int], tuple[int, int], int, Any]]: ...
    def earliest(self, now_ns: int, horizon_ns: int, flow_ends: dict[int, int], coming_ends: list[tuple[Any, int]],
                 ) -> list[tuple[int, frozenset[int], int]]: ...
    def drain_time_ns(self, flows: Iterable[int]) -> int: ...
    def episode_events(self, flows: Iterable[int]) -> tuple[int, int]: ...
    def episode_draws(self, flows: Sequence[int]) -> Draws: ...
    def link_random_sources(self, link: int) -> tuple[RandomSource, ...]: ...
    def link_rate(self, link: int) -> float: ...
    def drawn_nodes(self) -> frozenset[int]: ...
    def delivery_started(self) -> str | None: ...
    def start_flow(self, flow: int) -> None: ...
    def hold_flow(self, flow: int) -> None: ...
    def complete_flow_at(self, flow: int, time_ns: int) -> None: ...
    def complete_flow_now(self, flow: int) -> None: ...
    def cancel_completion(self, flow: int) -> None: ...
    def resume_flow(self, flow: int, delivered: int, state: tuple[float, ...] | None) -> None: ...
    def call_at(self, time_ns: int, action: Callable[[], None]) -> None: ...
    def bets_paid(self) -> bool: ...
    def recorded_flow(self) -> None: ...


@dataclass
class OpenEpisode:
    """An episode between its first arrival and the moment its last byte arrives."""

    id: int
    t0_ns: int
    mode: str
    key: bytes = b""  #: empty until the episode is keyed (it never is if unmemoizable)
    initial: int = 0  #: how many flows opened it
    flows: list[int] = field(default_factory=list)  #: in arrival order
    links: set[int] = field(default_factory=set)
    names: dict[int, str] = field(default_factory=dict)  #: link id -> name inside the episode
    unfinished: set[int] = field(default_factory=set)
    # recording
    arrivals: list[Arrival] = field(default_factory=list)
    outcomes: dict[int, FlowOutcome] = field(default_factory=dict)  #: per flow
    followers: list[Candidate] = field(default_factory=list)  #: mirrors following this recording
    # replaying
    candidates: list[Candidate] = field(default_factory=list)
    mirror: bool = False  #: replaying a leader's recording rather than a stored one
    completing: dict[int, int] = field(default_factory=dict)  #: held flow -> its scheduled completion
    checked: set[int] = field(default_factory=set)  #: offsets whose arrivals a check verifies
    foreseen: str = ""  #: the flows known to join as it opened, as a pattern (see Memoizer._pattern)
    #: why stored continuations that open like it were not followed (grouped paced flows), for its trace row
    refusal: str = ""
    #: how the one continuation followed was chosen among alike ones (``_one_course``), for its trace row
    chosen: str = ""
    #: a replay's or mirror's case with respect to ns-3's random draws (``randomness.py``)
    draw_case: DrawCase | None = None
    #: packets a replay's completion left out of its links as it opened or a flow joined: it
    #: runs on emptier links than a plain run would, so its recording is not stored
    left_out: int = 0
    #: followed with joiners not known yet: how many recordings took that course (0: all known)
    confirmed: int = 0
    joined: list[tuple[int, int]] = field(default_factory=list)  #: (offset, flow) of each recorded joiner


@dataclass
class Candidate:
    """One continuation a replay may be following, and which of its flows is which.

    It follows a stored record, or a leader that is recording it right now.
    """

    episode: OpenEpisode  #: the replaying episode this candidate belongs to
    record: EpisodeRecord | None = None
    leader: OpenEpisode | None = None
    #: the recording a mirror followed, kept once its record is stored (None: a stored record's replay)
    origin: OpenEpisode | None = None
    flow_of: dict[int, int] = field(default_factory=dict)  #: index in the record -> flow
    index_of: dict[int, int] = field(default_factory=dict)  #: flow -> index in the record

    @property
    def stored(self) -> EpisodeRecord:
        """The record followed (a candidate without a leader has one)."""
        assert self.record is not None, "a candidate follows a record or a leader"
        return self.record

    @property
    def arrivals(self) -> Sequence[Arrival]:
        return self.leader.arrivals if self.leader is not None else self.stored.arrivals

    @property
    def initial(self) -> int:
        return self.leader.initial if self.leader is not None else self.stored.initial

    def outcome(self, index: int) -> FlowOutcome | None:
        """How the continuation's flow ``index`` ended, if it has ended yet."""
        if self.leader is not None:
            return self.leader.outcomes.get(self.leader.flows[index])
        return self.stored.outcomes[index]

    def finish_of(self, flow: int) -> int:
        """The offset (ns) at which the continuation has ``flow`` end (one whose end it knows)."""
        outcome = self.outcome(self.index_of[flow])
        assert outcome is not None, "a completion is scheduled once every continuation knows it"
        return outcome.finish_ns

    def complete(self) -> bool:
        """True if every flow of the continuation has arrived (a leader's may still grow)."""
        return self.leader is None and len(self.flow_of) == len(self.stored.arrivals)

    def match(self, flow: int, index: int) -> None:
        self.flow_of[index] = flow
        self.index_of[flow] = index

    def expected_at(self, offset: int, signature: str, any_order: bool = False) -> int | None:
        """The unmatched arrival at ``offset`` with this signature, if the continuation has one.

        ``any_order``: with this signature but for its creation rank (``_without_rank``).
        """
        same = _without_rank if any_order else (lambda s: s)
        wanted = same(signature)
        arrivals = self.arrivals
        for index in range(self.initial, len(arrivals)):
            arrival = arrivals[index]
            if arrival.offset_ns == offset and same(arrival.signature) == wanted and index not in self.flow_of:
                return index
        return None

    def missing_at(self, offset: int) -> bool:
        """Whether an arrival due by ``offset`` has not come (one absorbed after its time is due then too)."""
        return any(a.offset_ns <= offset and i not in self.flow_of for i, a in enumerate(self.arrivals))


class MemoDecision(Label):
    """What the memo decided about an episode: a line of its trace."""

    #: No stored continuation opens like it (or it is learned again): simulated and recorded.
    MISS = "miss"
    #: Stored continuations open like it: its completions are replayed.
    REPLAY = "replay"
    #: Another open episode records its key right now: it follows that recording.
    MIRROR = "mirror"
    #: A recording was stored as a continuation of its key.
    RECORDED = "recorded"
    #: A replay (or mirror) stopped: its flows resumed for real.
    DIVERGED = "diverged"
    #: Its key's replays kept merging with other episodes: simulated, not replayed.
    DISTRUSTED = "distrusted"
    #: Not mirrored (this run's mirrors diverge, or flows will join from beyond its links).
    NO_MIRROR = "no-mirror"
    #: A recording met episodes opened apart from it and records them as one.
    ABSORBED = "absorbed"
    #: A recording grew past ``RECORDING_BOUND`` flows without closing: simulated, no longer recorded.
    STOPPED = BackOff.RECORDING.value

    @property
    def trace_kind(self) -> TraceKind:
        """The kind of the skip-trace row that reports it."""
        return _TRACE_KINDS[self]


_TRACE_KINDS = {
    MemoDecision.MISS: TraceKind.MEMO_MISS,
    MemoDecision.REPLAY: TraceKind.MEMO_REPLAY,
    MemoDecision.MIRROR: TraceKind.MEMO_MIRROR,
    MemoDecision.RECORDED: TraceKind.MEMO_RECORDED,
    MemoDecision.DIVERGED: TraceKind.MEMO_DIVERGED,
    MemoDecision.DISTRUSTED: TraceKind.MEMO_DISTRUSTED,
    MemoDecision.NO_MIRROR: TraceKind.MEMO_NO_MIRROR,
    MemoDecision.ABSORBED: TraceKind.MEMO_ABSORBED,
    MemoDecision.STOPPED: TraceKind.BACK_OFF,
}


@dataclass(frozen=True)
class MemoEvent:
    """One line of the memo's trace: a replay, a mirror, a recording stored, or a divergence."""

    time: float
    episode: int
    kind: MemoDecision
    flows: tuple[int, ...]
    span: float  #: s of simulated time the record covers
    events_avoided: int
    detail: str
    #: for a replay, a mirror or an episode simulated for its draws: its case (``core.draws``)
    draws: DrawCase | None = None


@dataclass
class MemoStats:
    hits: int = 0
    mirrored: int = 0
    misses: int = 0
    recorded: int = 0
    diverged: int = 0
    foreseen: int = 0  #: lookups that knew of flows about to join
    distrusted: int = 0  #: episodes simulated because their key's replays kept diverging
    #: episodes simulated because their course depends on random draws (``randomness.py``)
    draw_dependent: int = 0
    unmemoizable: int = 0
    flows_replayed: int = 0
    flows_resumed: int = 0
    events_avoided: int = 0


class Memoizer:
    """Opens, records, replays and closes episodes as flows arrive and finish."""

    def __init__(self, store: MemoStore, context: str, host: MemoHost,
                 fidelity: Fidelity = Fidelity.SAME_SEED) -> None:
        self.store = store
        self.context = context
        self.host = host
        self.fidelity = fidelity
        self.stats = MemoStats()
        self.trace: list[MemoEvent] = []
        self._episodes: dict[int, OpenEpisode] = {}
        self._episode_of_link: dict[int, int] = {}
        self._episode_of_flow: dict[int, int] = {}
        self._leaders: dict[bytes, OpenEpisode] = {}  #: key -> the open episode recording it
        #: key -> the recordings of it opened at the instant of the arrivals being handled (``_leaders_of``)
        self._recording_now: dict[bytes, list[OpenEpisode]] = {}
        self._relearn: set[bytes] = set()  #: keys whose replay diverged: record them again
        self._records: dict[bytes, list[EpisodeRecord]] = {}  #: continuations read this run
        self._tracks: dict[bytes, TrackRecord] = {}  #: track records read this run
        self._replays: dict[bytes, TrackRecord] = {}  #: this run's replays of each key, not yet stored
        #: how this run's mirrors went: mirroring follows a recording no store has vetted,
        #: so once mirrors diverge more than rarely, episodes are recorded rather than mirrored
        self._mirrors = TrackRecord()
        self._mirroring_stopped = False
        #: The kinds of shortcut the error guard (accel/verify.py) still allows. Once it stops
        #: resumes (what any replay may end in), new episodes are simulated, neither replayed
        #: nor recorded, and still seen by the open ones they touch.
        self.allowed: frozenset[GuardKind] = frozenset(MEMO_KINDS)
        #: True in a forked child checking a decision (accel/verify.py): the decisions made
        #: before it forked go on (replays complete, mirrors follow their leaders), nothing is
        #: written to the store (it belongs to the parent), and new flows start for real
        #: flow -> the shortcut standing in for it, for every flow held (``held_as`` of a batch)
        self._held_as: dict[int, GuardKind] = {}
        self.inert = False
        #: which kinds of link this run's recordings crossed with or without random draws
        self._draw_history = DrawHistory()
        self._released: dict[int, int] = {}  #: link -> when an episode last released it
        self._flow_links: dict[int, frozenset[int]] = {}  #: flow -> the links it loads (``_links``)
        self._flow_digests: dict[int, str] = {}  #: flow -> its attributes' digest (``_attributes_digest``)
        #: link -> (when, how many): the packets the recordings of the completions replayed
        #: then had queued there (``FlowOutcome.trailing``), which the replays did not queue
        self._recorded_queue: dict[int, tuple[int, int]] = {}
        self._now_ns = 0  #: the time of the arrivals being handled
        #: the groups of flows arriving in the batch being decided, by each link they load
        self._batch_group_of: dict[int, list[int]] = {}
        #: flows decided on in this batch of arrivals, not yet started or held: they are,
        #: at the batch's end, in the batch's order (the order of a plain run's starts)
        self._launching: dict[int, Callable[[int], None]] = {}
        self._next_id = 0
        #: the last answer of host.upcoming: when, for how far ahead, and what
        self._upcoming_cache: tuple[int, int, list[tuple[int, frozenset[int], tuple[int, int]]]] = (-1, -1, [])
        #: an absorbed episode's id -> the id of the recording that absorbed it, and its first flow's index there
        self._absorbed_into: dict[int, tuple[int, int]] = {}

    # ------------------------------------------------------------ arrivals
    def arrive(self, now_ns: int, flows: Sequence[int]) -> None:
        """Flows that start now: join the open episodes they touch, or open new ones."""
        if now_ns != self._now_ns:
            self._recording_now.clear()
        self._now_ns = now_ns
        self._upcoming_cache = (-1, -1, [])  # flows created since are known now
        self._complete_due(now_ns, flows)
        # flows starting together on shared links are one group: a flow on fresh links
        # that shares one with a flow joining an episode joins it too (opened apart, the
        # two would merge at once, and a merge is never replayed)
        # groups meeting a recording go first: a mirror's meeting in the same instant follows its leader's
        groups = _components(sorted(flows), self._links)
        self._batch_group_of = {link: group for group in groups for link in self._links_of(group)}
        groups.sort(key=lambda group: not any(self._episodes[e].mode == RECORDING
                                              for f in group for e in self._touching(f)))
        for group in groups:
            if any(map(self._kept_apart, group)):
                self._arrive_paced(now_ns, group)
                continue
            touched = set().union(*map(self._touching, group))
            if not touched:
                self._open(now_ns, group)
                continue
            if len(touched) > 1:
                toucher = next(f for f in group if self._touching(f))
                target = self._merge(now_ns, touched, f"flow {toucher} and the {len(group) - 1} flow(s) starting "
                                     f"with it on shared links touch {len(touched)} episodes")
            else:
                target = next(iter(touched))
            self._join(now_ns, self._episodes[target], group)
        for flow in flows:
            self._launch(flow)

    def _kept_apart(self, flow: int) -> bool:
        """A paced flow whose kind is not grouped (``GROUPED_PACED_KINDS``): it arrives by ``_arrive_paced``."""
        return self.host.flow_paced(flow) and not self.host.paced_grouped(flow)

    def _arrive_paced(self, now_ns: int, group: list[int]) -> None:
        """Paced (RDMA) flows not grouped: those on fresh links open episodes, the others join the ones they touch.

        Grouped like other flows, the overlapping all-to-alls of an HPCC run are
        recorded and replayed, and replays that nothing disturbed ended pipeline sends
        beside them up to 30% off on moe-small-hpcc (what the key leaves out shows).
        Until that is understood, HPCC flows meeting at once merge, and a merge is
        simulated.
        """
        fresh = [flow for flow in group if not self._touching(flow)]
        for component in _components(fresh, self._links):
            self._open(now_ns, component)
        for flow in group:
            if flow in fresh:
                continue
            episodes = self._touching(flow)
            target = (self._merge(now_ns, episodes, f"flow {flow} touches {len(episodes)} episodes")
                      if len(episodes) > 1 else next(iter(episodes)))
            self._join(now_ns, self._episodes[target], [flow])

    def _launch(self, flow: int) -> None:
        """Start or hold a flow decided on in this batch, unless that happened already."""
        launch = self._launching.pop(flow, None)
        if launch is not None:
            launch(flow)

    def _touching(self, flow: int) -> set[int]:
        """The open episodes a flow's links belong to (all of them if its route is unknown)."""
        links = self._links(flow)
        if not links:
            return set(self._episodes)
        return {self._episode_of_link[link] for link in links if link in self._episode_of_link}

    def _open(self, now_ns: int, flows: list[int]) -> None:
        if any(map(self.host.memo_blocker, flows)):
            self.stats.unmemoizable += 1
            self._admit(self._new_episode(now_ns, UNMEMOIZED), flows)
            return
        print_ = self._fingerprint(flows)
        order = list(print_.order)
        if GuardKind.ABSORB in self.allowed and self._join_apart(now_ns, print_.key, order):
            return
        episode = self._new_episode(now_ns, UNMEMOIZED)
        episode.key, episode.initial = print_.key, len(order)
        self._name_links(episode, order, first_index=0)
        signatures = [self._signature(episode, f) for f in order]
        opening = lambda arrivals: [a.signature for a in arrivals[: len(order)]] == signatures  # noqa: E731
        if GuardKind.RESUME not in self.allowed:
            self._admit(episode, order)
            return
        if episode.key not in self._relearn and not self._trusted(now_ns, episode, order):
            self.stats.distrusted += 1
            self._admit(episode, order)
            return
        continuations = [] if episode.key in self._relearn else self._continuations(episode.key)
        # the workload is asked once, as far ahead as the joiners foreseen and the longest record
        # reach, rather than for the one and then again for the other (moe-medium warm: 2,720
        # lookups, 0.4 ms a question)
        self._upcoming(now_ns, max([self._joining(order)[0], *(r.close_ns for r in continuations)]))
        due = self._due(now_ns, order)
        episode.foreseen = self._pattern(order, due)
        episode.left_out = self._left_out_on(order)
        unforeseeable = self._delivery_started()
        if unforeseeable:
            episode.refusal = unforeseeable
        if episode.key not in self._relearn and not unforeseeable:
            # a recording that lacked packets at its opening stands in only where a plain-like
            # one cannot be made: an opening like a plain run's is recorded instead, and replaces it
            records = [r for r in continuations if r.initial == len(order) and opening(r.arrivals)
                       and (episode.left_out or not r.left_out)]
            admission = admit_records(records, self.fidelity)
            records = admission.records if GuardKind.REPLAY in self.allowed else []
            if admission.refusal:
                episode.refusal = admission.refusal
                episode.draw_case = DrawCase.DEPENDS if not records else None
            if records:
                records = self._foreseen(now_ns, episode, order, due, records)
            if records:
                episode.draw_case = admission.case if any(r.draws for r in records) else DrawCase.DREW_NOTHING
                self._replay(now_ns, episode, [Candidate(episode, record=r) for r in records], order)
                return
            leaders = [leader for leader in self._leaders_of(episode.key, order)
                       if opening(leader.arrivals) and leader.foreseen == episode.foreseen
                       and (not leader.left_out or episode.left_out)]
            if GuardKind.MIRROR not in self.allowed:
                leaders = []
            if leaders:
                mirroring = self._mirror_admission(episode.key, order)
                if mirroring.case is DrawCase.DEPENDS:
                    episode.refusal, episode.draw_case, leaders = mirroring.refusal, DrawCase.DEPENDS, []
                else:
                    episode.draw_case = mirroring.case
            leader = (self._followed_leader(now_ns, episode, flows, leaders)
                      if leaders and self._mirroring_trusted(now_ns, episode) else None)
            if leader is not None:
                candidate = Candidate(episode, leader=leader, origin=leader)
                leader.followers.append(candidate)
                self._replay(now_ns, episode, [candidate], order)
                return
        self.stats.misses += 1
        if episode.draw_case is not DrawCase.DEPENDS:
            episode.draw_case = None
        else:
            self.stats.draw_dependent += 1
        episode.mode = RECORDING
        episode.arrivals = [Arrival(0, s) for s in signatures]
        self._leaders.setdefault(episode.key, episode)
        self._recording_now.setdefault(episode.key, []).append(episode)
        self._admit(episode, order)
        why = ("recorded again after a divergence" if episode.key in self._relearn
               else episode.refusal or "no stored continuation opens like it")
        kept = (f"recorded, kept only until one like a plain run is: replays just ended on its links left "
                f"out {episode.left_out} queued packets a plain run has there" if episode.left_out else "recorded")
        self.trace.append(MemoEvent(
            now_ns * 1e-9, episode.id, MemoDecision.MISS, tuple(order), 0.0, 0,
            f"memo miss {episode.key.hex()[:12]}: {len(order)} flows simulated and {kept} ({why})",
            draws=episode.draw_case,
        ))

    def _delivery_started(self) -> str:
        """Why no replay or mirror can stand in any more, if the run starts flows from callbacks on deliveries.

        A replay or a mirror is taken where no flow the run knows of will meet it, and
        a workload's oracle (``host.upcoming``, ``host.earliest``) says which flows may
        come. A flow that a callback on a flow's delivery creates (a PacketSink's Rx
        trace, in a user's script) is known to no oracle: it may start on any link at
        any instant, and one that does resumes the replay, which is never exact. Nor can
        a replay give such a callback what it reads: a held flow delivers nothing until
        its completion, so a callback on the bytes of two flows into one sink fires
        later than in a plain run. Once the run has created such a flow, episodes are
        simulated and recorded (doc/changelog.md: the user scripts that showed it).
        """
        created = self.host.delivery_started()
        return (f"the run starts flows from callbacks on what flows deliver ({created}): no workload "
                f"tells what may meet a replay or mirror before it ends, and a resumed flow is not exact"
                if created else "")

    def _join(self, now_ns: int, episode: OpenEpisode, flows: list[int]) -> None:
        offset = now_ns - episode.t0_ns
        # joiners alike in all else need not run alike: the simulator breaks their ties in
        # the order they were created, so that order is part of what a joiner is (as it is
        # of an opening flow, in the key). Not for grouped paced flows in a replay: their
        # queue pairs are paced from their first packet, and a step of moe-8x7b-64g over
        # DCQCN whose 10 joiners came in another order at each layer stopped 56 replays at
        # its joiners and resumed their queue pairs; matched by all but their order, the
        # replays held, and every flow ended within 0.07% of plain ns-3 (max, over 99,200)
        created = {flow: rank for rank, flow in enumerate(sorted(flows))}
        sign = lambda f: f"{self._signature(episode, f)} created {created[f]}"  # noqa: E731
        ordered = sorted(flows, key=lambda f: (sign(f), f))
        blocker = next(filter(None, map(self.host.memo_blocker, ordered)), None)
        if episode.mode == RECORDING and blocker:
            # a flow the memo cannot replay: the episode is simulated, not recorded
            self._lose_leadership(now_ns, episode, blocker)
            episode.mode = UNMEMOIZED
        if episode.mode == RECORDING and self._past_bound(episode, len(ordered)):
            self._stop_recording(now_ns, episode, len(ordered))
        if episode.mode == RECORDING:
            episode.left_out += self._left_out_on(ordered)
            for flow in ordered:
                episode.arrivals.append(Arrival(offset, sign(flow)))
                episode.joined.append((offset, flow))
                self._name_links(episode, [flow], first_index=len(episode.flows))
                self._admit(episode, [flow])
            for follower in episode.followers:
                self._check_later(follower.episode, offset)
            return
        if episode.mode == REPLAYING:
            for position, flow in enumerate(ordered):
                signature = None if blocker else sign(flow)
                survivors = []
                for candidate in episode.candidates:
                    index = candidate.expected_at(offset, signature) if signature else None
                    if index is None and signature and self.host.paced_grouped(flow):
                        index = candidate.expected_at(offset, signature, any_order=True)
                    if index is not None:
                        survivors.append((candidate, index))
                if not survivors:
                    self._diverge(now_ns, episode, f"flow {flow} was not expected at +{offset} ns"
                                  + (f" ({blocker})" if blocker else self._expectation(episode, offset)))
                    self._admit(episode, ordered[position:])
                    return
                self._keep(episode, [c for c, _ in survivors])
                for candidate, index in survivors:
                    candidate.match(flow, index)
                self._name_links(episode, [flow], first_index=survivors[0][1])
                self._hold(episode, flow)
                self.host.hold_flow(flow)
                self.stats.flows_replayed += 1
                self._schedule_completion(episode, flow)
            return
        self._admit(episode, ordered)

    def _past_bound(self, episode: OpenEpisode, joining: int) -> bool:
        """Whether a recording that ``joining`` flows join has grown past its bound while nothing paid for it.

        Not one a mirror follows: that one pays already.
        """
        return (len(episode.flows) + joining > RECORDING_BOUND and not episode.followers
                and not self.host.bets_paid())

    def _stop_recording(self, now_ns: int, episode: OpenEpisode, joining: int) -> None:
        """Simulate the rest of a recording that grew past its bound, and record none of it."""
        self._drop_leader(episode)
        episode.mode = UNMEMOIZED
        self.trace.append(MemoEvent(
            now_ns * 1e-9, episode.id, MemoDecision.STOPPED, tuple(episode.flows), 0.0, 0,
            f"recording of {episode.key.hex()[:12]} stopped: {len(episode.flows)} flows since it opened "
            f"{(now_ns - episode.t0_ns) * 1e-9:.6f} s ago and {joining} joining, past {RECORDING_BOUND} without "
            f"closing, while the run's shortcuts have not paid for its bets: simulated, not recorded",
        ))

    def _admit(self, episode: OpenEpisode, flows: list[int]) -> None:
        """Flows simulated for real in the episode (recorded if it is recording)."""
        for flow in flows:
            self._hold(episode, flow)
            self._launching[flow] = self.host.start_flow

    def _hold(self, episode: OpenEpisode, flow: int) -> None:
        """The flow belongs to the episode, and so do its links."""
        if flow not in episode.flows:
            episode.flows.append(flow)
        episode.unfinished.add(flow)
        self._episode_of_flow[flow] = episode.id
        for link in self._links(flow):
            episode.links.add(link)
            self._episode_of_link[link] = episode.id

    # -------------------------------------------------------------- replay
    def _replay(self, now_ns: int, episode: OpenEpisode, candidates: list[Candidate], order: list[int]) -> None:
        mirrored = candidates[0].leader is not None
        if mirrored:
            self.stats.mirrored += 1
        else:
            self.stats.hits += 1
        episode.mode, episode.candidates, episode.mirror = REPLAYING, candidates, mirrored
        for index, flow in enumerate(order):
            for candidate in candidates:
                candidate.match(flow, index)
        self._hold_replayed(episode, order, GuardKind.MIRROR if mirrored else GuardKind.REPLAY)
        for candidate in candidates:
            for arrival in candidate.arrivals[candidate.initial:]:
                self._check_later(episode, arrival.offset_ns)
        leader = candidates[0].leader
        case = episode.draw_case
        if leader is not None:
            detail = (f"memo key {episode.key.hex()[:12]} is being recorded by episode {leader.id} "
                      f"(started {(episode.t0_ns - leader.t0_ns) * 1e-9:.9f} s earlier): {len(order)} "
                      f"flows on idle links follow it, completing when their counterparts do"
                      + (f"; {describe_case(case)}" if case and case is not DrawCase.DREW_NOTHING else ""))
            self.trace.append(MemoEvent(now_ns * 1e-9, episode.id, MemoDecision.MIRROR, tuple(order), 0.0, 0, detail,
                                        draws=case))
            return
        longest = max(c.stored.close_ns for c in candidates)
        self.trace.append(MemoEvent(
            now_ns * 1e-9, episode.id, MemoDecision.REPLAY, tuple(order), longest * 1e-9,
            max(c.stored.events + c.stored.events_avoided for c in candidates),
            f"memo hit {episode.key.hex()[:12]}: {len(order)} flows opening on idle links match "
            f"{len(candidates)} recorded continuation(s) (canonical key: same flows, routes, link "
            f"and transport parameters, versions); completions replayed, later arrivals checked"
            + (f"; joiners the run cannot foresee yet are followed as {episode.confirmed} recordings had them"
               if episode.confirmed else "")
            + (f"; {episode.chosen}" if episode.chosen else "")
            + (f"; {describe_case(case)}" if case and case is not DrawCase.DREW_NOTHING else ""),
            draws=case,
        ))

    def _hold_replayed(self, episode: OpenEpisode, flows: list[int], kind: GuardKind) -> None:
        """Flows a replay holds (at the batch's end), completed in the order their record has them finish."""
        for flow in flows:
            self._hold(episode, flow)
            self._launching[flow] = self.host.hold_flow
            self._held_as[flow] = kind
            self.stats.flows_replayed += 1
        self._schedule_completions(episode, flows)

    def resume_touched(self, now_ns: int, flows: Sequence[int]) -> None:
        """In a child checking a decision: replays these flows (started for real) touch resume for real too.

        The child simulates what the parent held; a real flow meeting flows still
        held would meet links empty of their packets. Resumed from their recorded
        trajectories, they are what a divergence would make of them.
        """
        touched = {self._episode_of_link[link] for f in flows for link in self._links(f)
                   if link in self._episode_of_link}
        for episode_id in sorted(touched):
            episode = self._episodes.get(episode_id)
            if episode is not None and episode.mode == REPLAYING:
                self._diverge(now_ns, episode, "flows the error guard's check simulates for real meet it")

    def held_as(self, flows: Iterable[int]) -> dict[int, GuardKind]:
        """The shortcut standing in for each of these flows the memo held as they opened an episode, or
        opened apart where a replay's record has them, and how it stands in now (resumed, if it diverged).

        Joiners of a replay are left out: what they would do depends on the replay's
        flows, which a check forked as they join cannot simulate for real (it forks
        at an opening, and simulates the joiners then).
        """
        return {flow: self._held_as[flow] for flow in flows if flow in self._held_as}

    def _schedule_completions(self, episode: OpenEpisode, flows: list[int]) -> None:
        for flow in sorted(flows, key=partial(self._completion_order, episode)):
            self._schedule_completion(episode, flow)

    def _join_apart(self, now_ns: int, key: bytes, order: list[int]) -> bool:
        """Flows opening on idle links that a replay's record has open apart right now, then meet it.

        A recording that met an episode opened apart from it went on recording the
        two as one (``_absorb``): its record has the other episode's opening flows
        arrive apart, under their own key, at their offset. When a replay of it
        sees flows with that key open at that offset, they are those flows: they
        join the replay, held, instead of opening an episode that would meet it.
        """
        signatures = [_apart(key, index) for index in range(len(order))]
        for episode in list(self._episodes.values()):
            if episode.mode != REPLAYING:
                continue
            offset = now_ns - episode.t0_ns
            matches: list[tuple[Candidate, list[int]]] = []
            for candidate in episode.candidates:
                expected = [candidate.expected_at(offset, signature) for signature in signatures]
                indices = [index for index in expected if index is not None]
                if len(indices) == len(signatures):
                    matches.append((candidate, indices))
            if not matches:
                continue
            self._keep(episode, [candidate for candidate, _ in matches])
            for candidate, indices in matches:
                for flow, index in zip(order, indices):
                    candidate.match(flow, index)
            for flow, index in zip(order, matches[0][1]):
                self._name_links(episode, [flow], first_index=index)
            self._hold_replayed(episode, order, GuardKind.ABSORB)
            if episode.mirror:
                self.stats.mirrored += 1
            else:
                self.stats.hits += 1
            self.trace.append(MemoEvent(
                now_ns * 1e-9, episode.id, MemoDecision.REPLAY, tuple(order), 0.0, 0,
                f"memo hit {key.hex()[:12]}: {len(order)} flows opening on idle links at +{offset} ns are "
                f"the ones episode {episode.id}'s record has open apart there, before they meet it; held "
                f"and replayed with it",
            ))
            return True
        return False

    def _foreseen(self, now_ns: int, episode: OpenEpisode, order: list[int], due: list[tuple[int, tuple[int, int]]],
                  records: list[EpisodeRecord]) -> list[EpisodeRecord]:
        """The continuations whose joiners are flows the run already knows will start, and have them all.

        Some flows' start times are known in advance (released by compute that is
        running or by completions a replay scheduled, or waiting for their start,
        or starting now in this batch, or released by the replay's own completions:
        ``_released_by_replay``): a continuation without such a flow, at that
        offset, cannot be the one that happens, and replaying it would only
        diverge. A continuation with a joiner the run does not know of yet cannot
        be checked before that joiner comes, and a joiner's course depends on the
        order it is created in among the flows starting with it, which only its
        arrival tells. On moe-medium the next step of an all-to-all, started by the
        last completion of the step before it, came in another order at each layer:
        replaying the continuation another layer recorded put flows up to 64% off,
        or stopped the replay at its first joiner, and a resumed flow is never exact.
        Such a continuation is not replayed; if none is left, the episode is
        recorded (and its twins on other rails mirror it). A continuation is also
        replayed only if the flows due to join it, those its own replay releases
        included, make the pattern its joiners made (``_pattern``).
        """
        links = self._links_of(order)
        horizon = max(r.close_ns for r in records)
        coming = [(start - now_ns, route) for start, route, _ in self._upcoming(now_ns, horizon) if start > now_ns]
        known = {offset for offset, _ in coming}
        if any(flow not in order for group in self._batch_group_of.values() for flow in group):
            known.add(0)  # flows of this batch open apart now: a record may have them meet it later
        joining = {offset for offset, route in coming if route & links}
        if joining:
            self.stats.foreseen += 1
        kept = []
        _, joins = self._joining(order)
        paced = any(map(self.host.flow_paced, order))
        grouped = any(map(self.host.paced_grouped, order))
        for r in records:
            if not {offset for offset in joining if offset < r.close_ns} <= {a.offset_ns for a in r.arrivals}:
                continue
            pattern = episode.foreseen
            if not {a.offset_ns for a in r.arrivals[r.initial:]} <= known:
                if grouped:
                    # joiners the replay itself would release come in an order only their arrival
                    # tells: on moe-small-dcqcn four such replays met them in another order
                    continue
                released = self._released_by_replay(now_ns, episode, order, r, known)
                if released is None:
                    if r.seen >= CONFIRMED_COURSE and not paced:
                        # the same course came in every recording: its joiners come from
                        # beyond what the workload tells (flows of other rails' episodes)
                        # and are checked as they come, like any joiner. Not for paced
                        # flows: a joiner that comes otherwise resumes them, and a paced
                        # resume is not exact (on moe-small-hpcc, joiners 4 ns later than
                        # recorded resumed two queue pairs 54 ns late, and pipeline sends
                        # beside them ended up to 38% off)
                        episode.confirmed = max(episode.confirmed, r.seen)
                        kept.append(r)
                    continue
                pattern = self._pattern(order, due + [(offset, nodes) for offset, nodes, route in released
                                                      if joins(offset, route)])
            if pattern != r.foreseen:
                continue
            ends = {flow: now_ns + r.outcomes[i].finish_ns for i, flow in enumerate(order)}
            reached = self._intruding(now_ns, links, r.close_ns, ends, order) if grouped else set()
            if reached:
                episode.refusal = (f"a flow the run cannot foresee yet may reach {len(reached)} of its links "
                                   f"within +{r.close_ns} ns, and a paced resume is not exact")
                continue
            kept.append(r)
        if grouped and len({tuple(o.finish_ns for o in r.outcomes) for r in kept}) > 1:
            # continuations nothing at the opening tells apart, ending otherwise: a replay would
            # stop when they part and resume its queue pairs (rdma_dag_ring.py, 2.7% off)
            chosen = _one_course(kept)
            if chosen is None:
                episode.refusal = (f"its {len(kept)} stored continuations end otherwise, and a paced resume "
                                   f"is not exact")
                return []
            spread = _ends_spread(kept)
            episode.chosen = (f"its {len(kept)} stored continuations differ only in ends at most {spread} ns "
                              f"apart (under {ALIKE_ENDS_SHARE:.1%} of their span): the one {chosen.seen} "
                              f"recording(s) took is followed")
            return [chosen]
        return kept

    def _intruding(self, now_ns: int, links: frozenset[int], horizon_ns: int, ends: dict[int, int],
                   own: Iterable[int]) -> set[int]:
        """The links a flow the run cannot foresee yet may reach within the horizon, of ``links`` and its joiners'.

        For grouped paced flows, whose resume is never exact, a replay or mirror is taken only
        where nothing can come that its record does not hold. The workload tells when
        every flow may start at the earliest (``host.earliest``: a running flow ending
        now, a flow to come ending as it starts), taking the episode's own flows
        (``own``) and the flows due to join it to end beyond the horizon, and
        ``ends`` as given (a replay's recorded ends). A flow there that the known ends
        do not release as well (``host.releases``) could come sooner than any lookup
        can tell. On moe-small-dcqcn such flows met three replays and a mirror, and
        the queue pairs resumed ended up to 16% off.
        """
        return set().union(*(reached for _, reached in self._unforeseeable(now_ns, links, horizon_ns, ends, own)))

    def _unforeseeable(self, now_ns: int, links: frozenset[int], horizon_ns: int, ends: dict[int, int],
                       own: Iterable[int]) -> list[tuple[int, frozenset[int]]]:
        """``_intruding``'s flows: when each may start at the earliest, and which of the links it reaches."""
        beyond = now_ns + 2 * horizon_ns + 1
        released = self.host.releases(now_ns, horizon_ns, ends, [])
        foreseen = {(task, start) for start, _, _, task, _ in released}
        joiners = [(route, handle) for _, route, _, _, handle in released if route & links]
        held = set(links).union(*(route for route, _ in joiners))
        own_ends = {flow: beyond for flow in own} | ends
        earliest = self.host.earliest(now_ns, horizon_ns, own_ends, [(handle, beyond) for _, handle in joiners])
        return [(start, route & held) for start, route, task in earliest if (task, start) not in foreseen
                and route & held]

    def _unforeseen(self, now_ns: int, links: frozenset[int], horizon_ns: int, own: Iterable[int],
                    ) -> list[tuple[int, int]]:
        """The shape of the flows that may reach ``links`` unforeseen: each one's offset and how many links.

        A twin and its leader with the same shape meet such flows alike.
        """
        return sorted((start - now_ns, len(reached))
                      for start, reached in self._unforeseeable(now_ns, links, horizon_ns, {}, own))

    def _released_by_replay(self, now_ns: int, episode: OpenEpisode, order: list[int], record: EpisodeRecord,
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
        if any(record.arrivals[i].signature.startswith(_APART) for i in unknown):
            return None  # an episode opening apart: what releases it is not followed here
        wanted = {i: _named_links(record.arrivals[i].signature) for i in range(record.initial, len(record.arrivals))
                  if not record.arrivals[i].signature.startswith(_APART)}
        opening = {link: _index_of(name) for link, name in episode.names.items()}
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

    def _upcoming(self, now_ns: int, horizon_ns: int) -> list[tuple[int, frozenset[int], tuple[int, int]]]:
        """``host.upcoming``, asked once per batch for the widest horizon yet (a workload scans its tasks)."""
        cached_at, cached_horizon, known = self._upcoming_cache
        if cached_at != now_ns or cached_horizon < horizon_ns:
            known = self.host.upcoming(now_ns, horizon_ns)
            self._upcoming_cache = (now_ns, horizon_ns, known)
        return [entry for entry in known if entry[0] <= now_ns + horizon_ns]

    def _joining(self, order: list[int]) -> tuple[int, Callable[[int, frozenset[int]], bool]]:
        """How far ahead a flow can join the opening ``order`` before it can end, and whether one does.

        "Before it can end": before its busiest link could carry all its flows' bytes at
        line rate; a flow at that offset (ns) joins if it loads one of their links. The
        flows foreseen (``_due``), those a replay would release (``_foreseen``) and those
        that did join a recording (``_joined_pattern``) are all judged by this one rule,
        so that their patterns compare.
        """
        links = self._links_of(order)
        horizon = self.host.drain_time_ns(order)
        return horizon, lambda offset, route: 0 < offset <= horizon and bool(route & links)

    def _due(self, now_ns: int, order: list[int]) -> list[tuple[int, tuple[int, int]]]:
        """The flows the run knows will join the opening ``order`` before it can end: (offset, their nodes).

        Known: started by compute that is running, or waiting for their start, or
        released when replayed flows complete.
        """
        horizon, joins = self._joining(order)
        return [(start - now_ns, nodes) for start, route, nodes in self._upcoming(now_ns, horizon)
                if joins(start - now_ns, route)]

    def _joined_pattern(self, episode: OpenEpisode) -> str:
        """The pattern (``_pattern``) of the flows that did join a recording before it could
        end: what a lookup that foresaw them all would see.

        A recording whose joiners were released by flows it could not foresee (simulated
        ones) is then found by the lookup that foresees them (the same step replayed, its
        joiners released by replayed completions): on moe-small, 14 episodes of the second
        iteration were recorded again for want of it.
        """
        order = episode.flows[: episode.initial]
        _, joins = self._joining(order)
        return self._pattern(order, [(offset, self.host.flow_nodes(flow)) for offset, flow in episode.joined
                                     if joins(offset, self._links(flow))])

    def _pattern(self, order: list[int], due: list[tuple[int, tuple[int, int]]]) -> str:
        """Which flows join the opening ``order`` (``due``: their offsets and nodes), and in what order they are made.

        Joiners alike in all else do not run alike when they are created in another
        order (the simulator breaks ties between simultaneous events in that order), and
        a joiner's order is only known when it arrives: a continuation recorded with
        other joiners to come is replayed into a divergence. Where the run knows the
        joiners (``_due``), a continuation must have seen the same pattern join it
        (``_joined_pattern``): each joiner's offset, and the ends of every opening and
        joining flow ranked by node id (a workload creates its flows in the order of
        their ranks, so the ranks stand for that order). Empty if there is none.
        """
        if not due:
            return ""
        due = sorted(due)
        ends = [self.host.flow_nodes(flow) for flow in order]
        rank = {node: i for i, node in enumerate(sorted({n for pair in ends + [p for _, p in due] for n in pair}))}
        opening = " ".join(f"{rank[src]}>{rank[dst]}" for src, dst in ends)
        joining = " ".join(f"+{offset}:{rank[src]}>{rank[dst]}" for offset, (src, dst) in due)
        return f"{opening} then {joining}"

    def _followed_leader(self, now_ns: int, episode: OpenEpisode, flows: list[int], leaders: list[OpenEpisode],
                         ) -> OpenEpisode | None:
        """The first of ``leaders`` whose meetings the episode's flows would follow (``_unfollowable_meetings``).

        None, and a trace row saying why the first was refused, when there is none.
        """
        first_refusal = None
        for leader in leaders:
            refusal = self._unfollowable_meetings(now_ns, flows, leader)
            if not refusal[0]:
                return leader
            first_refusal = first_refusal or refusal
        assert first_refusal is not None, "called with leaders to try"
        taken, joiners, horizon, where = first_refusal
        self.stats.foreseen += 1
        self.trace.append(MemoEvent(
            now_ns * 1e-9, episode.id, MemoDecision.NO_MIRROR, tuple(flows), 0.0, 0,
            f"memo key {episode.key.hex()[:12]} not mirrored: {len(joiners)} flow(s) will start on its "
            f"links or theirs within +{horizon} ns, before it can end, and reach {len(taken)} link(s) "
            f"{where}; recorded instead",
        ))
        return None

    def _unfollowable_meetings(self, now_ns: int, flows: list[int], leader: OpenEpisode,
                               ) -> tuple[set[int], set[int], int, str]:
        """The links where flows the run knows are coming will bring the episode into another one before it can end.

        With the due flows that reach them, the horizon, and where those links are.

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
        (``_absorb_mirrors``, ``_followable``). On moe-small, two pipeline sends
        633 ns apart each had a twin on another rail; the second twin, recorded
        for fear of the first, was met by it at once, and the first twin diverged
        (2.4% mean FCT error over the run).

        A mirror opened ``shift`` ns after its leader keeps the old rule (any
        joiner beyond its links rules it out): joiners a common event releases at
        one instant come at offsets that differ by the shift (gpt-medium: a mirror
        4,934 ns behind its leader met its joiner 4,934 ns early and diverged).
        Paced flows opened with their leader follow ``_paced_meetings``; for DCQCN,
        links that ``_followable`` or ``_absorbs`` accepts are no meeting, and flows
        the run cannot foresee yet (``_intruding``) rule a twin out only where they
        would not reach it as they reach its leader (``_unforeseen``): they then
        join both alike, and the mirror checks its joiners against its leader's.
        On moe-8x7b-64g-dcqcn a stage's last pipeline sends, on every rail, meet
        its gradient all-reduce: recorded on each rail, they and the ring steps
        that join them ran most of the run's events.
        """
        shift = now_ns - leader.t0_ns
        links = self._links_of(flows)
        horizon = self.host.drain_time_ns(flows)
        span, joiners = self._span(now_ns, links, horizon)
        if shift == 0 and any(map(self.host.flow_paced, flows)):
            leader_links = self._links_of(leader.flows)
            grouped = all(map(self.host.paced_grouped, flows))
            mine = self._paced_meetings(now_ns, links, horizon, grouped)
            theirs = self._paced_meetings(now_ns, leader_links, horizon, grouped)
            if not grouped:
                taken = set(mine) | set(theirs)
            else:
                # DCQCN recordings absorb as TCP ones do (``_merge``) and their mirrors follow, so a
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
            if not taken and any(map(self.host.paced_grouped, flows)) and (
                    links & leader_links or self._unforeseen(now_ns, links, reach, flows)
                    != self._unforeseen(now_ns, leader_links, reach, leader.unfinished)):
                taken = self._intruding(now_ns, links | leader_links, reach, {}, [*flows, *leader.unfinished])
            where = "where other flows due or an episode still open will be"
        else:
            taken = {link for link in span - links if shift > 0 or not self._followable(now_ns, link, leader)}
            where = f"beyond them, {shift} ns after its leader opened" if shift > 0 else "another episode holds"
        return taken, joiners, horizon, where

    def _paced_meetings(self, now_ns: int, links: frozenset[int], horizon_ns: int, grouped: bool,
                        ) -> dict[int, int | None]:
        """The links where paced flows on ``links`` would meet another episode through their joiners.

        Each with the offset at which another flow due loads it first, or None
        where an episode holds it.

        Paced flows kept apart (HPCC) are never absorbed (``_arrive_paced``): where a flow due to
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
        run executed 21.8 M events so, 10.4 M with them joining. Paced flows kept
        apart (HPCC) keep the first rule: a flow starting with their joiner on fresh
        links opens an episode of its own, which the joiner then merges with.
        """
        due = self._due_routes(now_ns, horizon_ns)
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
        holder = self._episode_of_link.get(link)
        if holder is None:
            return link not in self._batch_group_of
        episode = self._episodes[holder]
        return (episode.mode == REPLAYING and bool(episode.unfinished)
                and set(episode.unfinished) <= set(episode.completing)
                and episode.t0_ns + max(episode.completing.values()) < time_ns)

    def _due_routes(self, now_ns: int, horizon_ns: int) -> list[tuple[int, frozenset[int]]]:
        """The flows due to start after now and within the horizon: (start, links), in ``_upcoming``'s order."""
        return [(start, route) for start, route, _ in self._upcoming(now_ns, horizon_ns)
                if now_ns < start <= now_ns + horizon_ns]

    def _span(self, now_ns: int, links: frozenset[int], horizon_ns: int) -> tuple[set[int], set[int]]:
        """The links an episode on ``links`` will span within the horizon, and the due flows that bring it there.

        Its links, and those of every flow due on them, transitively (due flows by
        their index in ``_upcoming``).
        """
        due = [route for _, route in self._due_routes(now_ns, horizon_ns)]
        span, joiners = set(links), set[int]()
        while True:
            joining = {i for i, route in enumerate(due) if i not in joiners and route & span}
            if not joining:
                return span, joiners
            joiners |= joining
            for i in joining:
                span |= due[i]

    def _followable(self, now_ns: int, link: int, leader: OpenEpisode) -> bool:
        """Whether a would-be mirror of ``leader`` that reaches ``link`` can follow its leader there.

        An idle link: yes (the mirror's usual check against its leader decides).
        A link another episode holds: only if that episode is a mirror opened with
        its own leader, which ``leader`` will meet (``_leaders_meet``). A link of
        flows starting in this same instant, not decided yet: only if they open
        like a leader opened now, which ``leader`` will meet (they will mirror it).
        """
        holder = self._episode_of_link.get(link)
        if holder is not None:
            episode = self._episodes[holder]
            if episode.mode != REPLAYING or len(episode.candidates) != 1:
                return False
            origin = episode.candidates[0].origin
            return (origin is not None and episode.t0_ns == origin.t0_ns
                    and self._episodes.get(origin.id) is origin and self._leaders_meet(now_ns, leader, origin))
        group = self._batch_group_of.get(link)
        if group is None:
            return True
        if any(map(self.host.memo_blocker, group)) or any(map(self._kept_apart, group)):
            return False  # simulated as it is, or paced apart (see _arrive_paced): it will not mirror
        twins = self._leaders_of(self._fingerprint(group).key, group)
        return any(twin.t0_ns == now_ns and self._leaders_meet(now_ns, leader, twin) for twin in twins)

    def _absorbs(self, now_ns: int, link: int, leader: OpenEpisode) -> bool:
        """Whether the episode holding ``link`` is a DCQCN recording whose meeting with ``leader`` is an absorb.

        Either it opened before ``leader`` (so it is the one ``_merge`` keeps) and
        ``leader`` still holds only its opening flows, or it opened in this instant
        after ``leader``, which will meet it and absorb it. ``leader``'s mirrors
        then absorb the mirrors of the holder's, or are absorbed by them
        (``_absorb_mirrors``).
        """
        holder = self._episodes.get(self._episode_of_link.get(link, -1))
        if (holder is None or holder is leader or holder.mode != RECORDING
                or not all(map(self.host.paced_grouped, [*holder.flows, *leader.flows]))):
            return False
        if holder.id < leader.id:
            return _absorbable(leader)
        return holder.t0_ns == now_ns and _absorbable(holder) and self._leaders_meet(now_ns, leader, holder)

    def _leaders_meet(self, now_ns: int, leader: OpenEpisode, other: OpenEpisode) -> bool:
        """Whether two recordings will meet: flows due on ``leader``'s links reach ``other``'s."""
        if other.mode != RECORDING or other is leader:
            return False
        span, _ = self._span(now_ns, self._links_of(leader.flows), self.host.drain_time_ns(leader.flows))
        return bool(span & other.links)

    def _schedule_completion(self, episode: OpenEpisode, flow: int) -> None:
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
        self._upcoming_cache = (-1, -1, [])  # what the completion releases is known now

    def _cancel_completion(self, flow: int) -> None:
        self.host.cancel_completion(flow)
        self._upcoming_cache = (-1, -1, [])  # what the completion would release is not known any more

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
        episode = self._episodes.get(self._episode_of_flow.get(flow, -1))
        if episode is None or episode.mode != REPLAYING:
            return False
        offset = episode.completing.pop(flow)
        agreeing = [c for c in episode.candidates if c.finish_of(flow) == offset]
        if len(agreeing) < len(episode.candidates):
            # continuations that nothing observed could tell apart disagree: the run is not
            # deterministic enough to replay
            self._diverge(now_ns, episode, f"continuations disagree on when flow {flow} ends")
            return False
        self._note_recorded_queues(now_ns, flow, agreeing[0].outcome(agreeing[0].index_of[flow]))
        episode.unfinished.discard(flow)
        self._release_finished_links(episode, flow, now_ns)
        self._close_if_done(episode, now_ns)
        return True

    def _close_if_done(self, episode: OpenEpisode, now_ns: int) -> None:
        """A replay ends when its flows have completed and a continuation has no joiner left."""
        if episode.unfinished:
            return
        done = [c for c in episode.candidates if c.complete()]
        if done:
            record = done[0].stored
            self._replays[episode.key] = self._replays.get(episode.key, TrackRecord()).plus(1, 0)
            if episode.mirror:
                self._mirrors = self._mirrors.plus(1, 0)
            self.stats.events_avoided += record.events + record.events_avoided
            self._forget(episode, now_ns)

    @staticmethod
    def _expectation(episode: OpenEpisode, offset: int) -> str:
        """What the continuations expected next, to explain a divergence."""
        pending = sorted({
            a.offset_ns for c in episode.candidates for i, a in enumerate(c.arrivals)
            if i not in c.flow_of
        })
        later = [o for o in pending if o >= offset][:3]
        return (f" (next recorded arrivals at +{', +'.join(map(str, later))} ns)" if later
                else " (no more arrivals recorded)")

    def _complete_due(self, now_ns: int, flows: Sequence[int]) -> None:
        """Replayed flows that end right now end before these arrivals are looked at.

        Simultaneous events are ordered by the simulator; a flow the recording saw
        start just after an episode's last byte must find it closed in the replay too.
        """
        touched = {self._episode_of_link[link] for f in flows for link in self._links(f)
                   if link in self._episode_of_link}
        for episode_id in sorted(touched):
            episode = self._episodes.get(episode_id)
            if episode is None or episode.mode != REPLAYING:
                continue
            for flow, offset in sorted(episode.completing.items()):
                if episode.t0_ns + offset == now_ns:
                    self._cancel_completion(flow)
                    if self.completing(now_ns, flow):
                        self.host.complete_flow_now(flow)

    def _check_later(self, episode: OpenEpisode, offset: int) -> None:
        """Verify, just after ``offset``, that the recorded arrivals at that offset came."""
        if offset not in episode.checked:
            episode.checked.add(offset)
            self.host.call_at(episode.t0_ns + offset + 1, partial(self._check, episode, offset))

    def _check(self, episode: OpenEpisode, offset: int) -> None:
        if episode.mode != REPLAYING:
            return
        kept = [c for c in episode.candidates if not c.missing_at(offset)]
        if not kept:
            self._diverge(episode.t0_ns + offset + 1, episode,
                          f"the recorded arrivals at +{offset} ns did not happen")
        else:
            self._keep(episode, kept)
            self._close_if_done(episode, episode.t0_ns + offset + 1)

    def _keep(self, episode: OpenEpisode, kept: list[Candidate]) -> None:
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
            self._schedule_completion(episode, flow)

    def _follow_closed_leader(self, now_ns: int, leader: OpenEpisode, record: EpisodeRecord) -> None:
        """A leader's record is complete: its followers now replay it like a stored one."""
        for candidate in leader.followers:
            candidate.record, candidate.leader = record, None
            for flow in list(candidate.episode.unfinished):
                self._schedule_completion(candidate.episode, flow)
            self._close_if_done(candidate.episode, now_ns)
        leader.followers = []

    def _leaders_of(self, key: bytes, flows: list[int]) -> list[OpenEpisode]:
        """The recordings that an episode of these flows opening with this key may mirror.

        The key's first recording still open; for grouped paced (DCQCN) flows, those
        opened at this same instant, since twins open together. On
        moe-8x7b-64g-dcqcn a stage's last pipeline sends open on every rail at two
        instants 58 ns apart: each instant's twins follow that instant's recording,
        not the first instant's, which is 58 ns away and would be refused. Several
        recordings of one key may open in one instant (moe-small-dcqcn: four single
        pipeline sends, two on each rail), and a twin mirrors the one whose meetings
        it meets alike.
        """
        now = self._recording_now.get(key)
        if now and all(map(self.host.paced_grouped, flows)):
            return now
        first = self._leaders.get(key)
        return [] if first is None else [first]

    def _mirror_admission(self, key: bytes, order: list[int]):
        """Whether twins of ``order`` may follow a recording of ``key`` being made now (``admit_mirror``)."""
        links = self._links_of(order)
        sources = {link: self.host.link_random_sources(link) for link in links}
        loads = port_loads([self.host.flow_route(f)[0] for f in order], self.host.link_rate)
        return admit_mirror(self._continuations(key), links, sources, self.host.drawn_nodes(), self.fidelity,
                            queueless=lambda link: loads.get(link, 0.0) <= self.host.link_rate(link),
                            quiet=lambda link: self._draw_history.quiet_so_far(self._link_kind(link)))

    def _link_kind(self, link: int) -> str:
        """What a link is, whichever link it is: the digest of its parameters."""
        return _digest(self.host.link_attributes(link))

    def _watch_leader_draws(self, now_ns: int, leader: OpenEpisode) -> None:
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
            if candidate.episode.mode == REPLAYING:
                candidate.episode.draw_case = DrawCase.DEPENDS
                self._diverge(now_ns, candidate.episode,
                              f"the episode it mirrored {draws.describe()}, and its course depends on draws of "
                              f"its own")

    def _drop_leader(self, episode: OpenEpisode) -> None:
        """No episode opening from now on mirrors this one."""
        if self._leaders.get(episode.key) is episode:
            del self._leaders[episode.key]
        now = self._recording_now.get(episode.key, [])
        if episode in now:
            now.remove(episode)

    def _lose_leadership(self, now_ns: int, leader: OpenEpisode, why: str) -> None:
        """A recording that stops being recordable: whoever mirrors it must stop too."""
        self._drop_leader(leader)
        for candidate in list(leader.followers):
            if candidate.episode.mode == REPLAYING:
                self._diverge(now_ns, candidate.episode, f"the episode it mirrored diverged ({why})",
                              merged=True)
        leader.followers = []

    def _diverge(self, now_ns: int, episode: OpenEpisode, why: str, merged: bool = False) -> None:
        """Stop replaying: every unfinished held flow resumes for real where the record had it.

        ``merged``: the episode met another one (or its leader did), which no record of
        the key can hold; such divergences count against the key's track record. A
        joiner the continuations lack only teaches the key one more continuation.
        """
        offset = now_ns - episode.t0_ns
        candidate = episode.candidates[0]
        resumed = []
        for flow in [f for f in episode.flows if f in episode.unfinished]:
            if flow in episode.completing:
                self._cancel_completion(flow)
                del episode.completing[flow]
            if flow in self._launching:
                # decided on in this very batch, not held yet: it just starts, in the batch's order
                self._launching[flow] = self.host.start_flow
                self._held_as.pop(flow, None)
            else:
                delivered, point = self._progress(candidate, candidate.index_of[flow], offset)
                self.host.resume_flow(flow, delivered, point.state if point else None)
                self._held_as[flow] = GuardKind.RESUME
            resumed.append(flow)
        for other in episode.candidates:
            if other.leader is not None:
                other.leader.followers.remove(other)
        episode.mode, episode.candidates = UNMEMOIZED, []
        self._relearn.add(episode.key)
        if merged:
            self._replays[episode.key] = self._replays.get(episode.key, TrackRecord()).plus(0, 1)
        if episode.mirror:
            self._mirrors = self._mirrors.plus(0, 1)
        self.stats.diverged += 1
        self.stats.flows_resumed += len(resumed)
        self.trace.append(MemoEvent(
            now_ns * 1e-9, episode.id, MemoDecision.DIVERGED, tuple(resumed), offset * 1e-9, 0,
            f"{why}: replay stopped at +{offset} ns, {len(resumed)} flow(s) resumed from the "
            f"recorded trajectory; the next episodes with this key are recorded again",
            draws=episode.draw_case if episode.draw_case is DrawCase.DEPENDS else None,
        ))

    def _progress(self, candidate: Candidate, index: int, offset: int) -> tuple[int, TrajectoryPoint | None]:
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

    def _merge(self, now_ns: int, episode_ids: Iterable[int], why: str) -> int:
        """Several open episodes meet: from now on they are one, simulated for real."""
        ids = sorted(episode_ids)
        target = self._episodes[ids[0]]
        absorbed = [self._episodes[i] for i in ids[1:]]
        flows = [flow for episode in (target, *absorbed) for flow in episode.flows]
        # paced flows kept apart (HPCC) are never absorbed; grouped ones (DCQCN) are, as TCP ones
        kept_apart = any(map(self.host.flow_paced, flows)) and not all(map(self.host.paced_grouped, flows))
        if target.mode == RECORDING and not kept_apart and all(map(_absorbable, absorbed)):
            self._absorb(now_ns, target, absorbed, why)
            return target.id
        if self._mirrors_absorbable(target, absorbed):
            self._absorb_mirrors(now_ns, target, absorbed, why)
            return target.id
        for episode_id in ids:
            episode = self._episodes[episode_id]
            if episode.mode == REPLAYING:
                self._diverge(now_ns, episode, why, merged=True)
            elif episode.mode == RECORDING:
                self._lose_leadership(now_ns, episode, why)
            episode.mode = UNMEMOIZED
            if episode is target:
                continue
            for flow in episode.flows:
                target.flows.append(flow)
                self._episode_of_flow[flow] = target.id
            target.unfinished |= episode.unfinished
            for link in episode.links:
                target.links.add(link)
                self._episode_of_link[link] = target.id
            del self._episodes[episode_id]
        return target.id

    def _absorb(self, now_ns: int, target: OpenEpisode, absorbed: list[OpenEpisode], why: str) -> None:
        """A recording meets episodes opened apart from it that only simulate their opening flows.

        Nothing else has touched any of them: together they are still one isolated
        episode, so the recording goes on, holding the others' opening flows as
        arrivals *apart* (at their offset, under their own key, which is what a
        replay can recognise when they open: ``_join_apart``). No episode mirrors
        either key from now on (what opens like them need not meet like them);
        the mirrors they have already must meet as they did
        (``_await_mirror_absorbs``).
        """
        self._drop_leader(target)  # its record is no longer what opening like it promises
        for episode in absorbed:
            self._drop_leader(episode)
            offset, first = episode.t0_ns - target.t0_ns, len(target.flows)
            target.arrivals.extend(Arrival(offset, _apart(episode.key, index)) for index in range(len(episode.flows)))
            self._name_links(target, episode.flows, first_index=first)
            self._move(episode, target)
            self._absorbed_into[episode.id] = (target.id, first)
            self._await_mirror_absorbs(now_ns, target, episode, offset)
        self.trace.append(MemoEvent(
            now_ns * 1e-9, target.id, MemoDecision.ABSORBED, tuple(f for e in absorbed for f in e.flows), 0.0, 0,
            f"{why}: recording {target.key.hex()[:12]} goes on with {len(absorbed)} episode(s) that opened "
            f"apart (at +{', +'.join(str(e.t0_ns - target.t0_ns) for e in absorbed)} ns) and simulated only "
            f"their opening flows; nothing else touched them, so together they are one isolated episode",
        ))

    def _move(self, source: OpenEpisode, target: OpenEpisode) -> None:
        """Every flow and link of ``source`` belongs to ``target`` from now on (what it had pending lapses)."""
        source.mode, source.candidates = UNMEMOIZED, []
        for flow in source.flows:
            target.flows.append(flow)
            self._episode_of_flow[flow] = target.id
        target.unfinished |= source.unfinished
        for link in source.links:
            target.links.add(link)
            self._episode_of_link[link] = target.id
        del self._episodes[source.id]

    def _await_mirror_absorbs(self, now_ns: int, target: OpenEpisode, absorbed: OpenEpisode, offset: int) -> None:
        """The mirrors of a recording and of the episode it absorbed must meet as their leaders did.

        Training runs the same overlap many times at once: a mirror of the target
        meets a mirror of the absorbed episode when its own meeting flow starts,
        and takes it in then (``_absorb_mirrors``); a mirror of the target whose
        counterpart opens later takes it in when it opens (``_join_apart``). A
        mirror of the absorbed episode that nobody takes in by the time its
        meeting was due diverges: its leader no longer completes its flows.
        """
        for candidate in target.followers:
            if candidate.episode.t0_ns + offset > now_ns:
                self._check_later(candidate.episode, offset)
        met = now_ns - absorbed.t0_ns
        for candidate in absorbed.followers:
            due = candidate.episode.t0_ns + met + 1
            self.host.call_at(due, partial(self._absorbed_or_diverged, candidate, due))

    def _absorbed_or_diverged(self, candidate: Candidate, now_ns: int) -> None:
        episode = candidate.episode
        if self._episodes.get(episode.id) is episode and episode.mode == REPLAYING:
            self._diverge(now_ns, episode, "the episode it mirrored was absorbed by another one, and no "
                          "mirror of that one met it when the recording's meeting came", merged=True)

    def _mirrors_absorbable(self, target: OpenEpisode, others: list[OpenEpisode]) -> bool:
        """Whether a mirror meets mirrors of the episodes its leader absorbed, at the same shift."""
        if target.mode != REPLAYING or len(target.candidates) != 1 or target.candidates[0].origin is None:
            return False
        origin = target.candidates[0].origin
        for other in others:
            if other.mode != REPLAYING or len(other.candidates) != 1 or other.candidates[0].origin is None:
                return False
            absorbed = other.candidates[0].origin
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
                self._name_links(target, [flow], first_index=index)
            self._move(other, target)
            moved += flows
        self._schedule_completions(target, moved)
        self.trace.append(MemoEvent(
            now_ns * 1e-9, target.id, MemoDecision.ABSORBED, tuple(moved), 0.0, 0,
            f"{why}: mirror of {target.key.hex()[:12]} takes in {len(others)} mirror(s) of what its leader "
            f"absorbed, met at the same shift as their leaders met; they follow its record as one",
        ))

    # ----------------------------------------------------- finish and close
    def finished(self, now_ns: int, flow: int) -> None:
        """A flow simulated for real received its last byte."""
        episode = self._episodes.get(self._episode_of_flow.get(flow, -1))
        if episode is None:
            return
        episode.unfinished.discard(flow)
        self._release_finished_links(episode, flow, now_ns)
        if episode.mode == RECORDING:
            self.host.recorded_flow()
            points = [
                TrajectoryPoint(p.offset_ns - episode.t0_ns, p.delivered, p.state)
                for p in self.host.trajectory(flow)
                if p.offset_ns >= episode.t0_ns
            ]
            episode.outcomes[flow] = FlowOutcome(now_ns - episode.t0_ns, _thin(points), rank=len(episode.outcomes),
                                                 trailing=tuple(map(self.host.link_queue, self._route(flow))))
            self._watch_leader_draws(now_ns, episode)
            for candidate in episode.followers:
                shadow = candidate.flow_of.get(episode.flows.index(flow))
                if shadow is not None:
                    self._schedule_completion(candidate.episode, shadow)
        if episode.unfinished or episode.mode == REPLAYING:
            return
        # every byte of the episode has arrived: its links carry only the last ACKs and
        # FINs, which a next episode's key sees as queued packets
        if episode.mode == RECORDING:
            record = self._record(now_ns, episode)
            self._store(now_ns, episode, record)
            self._follow_closed_leader(now_ns, episode, record)
            self._drop_leader(episode)
        self._forget(episode, now_ns)

    def _record(self, now_ns: int, episode: OpenEpisode) -> EpisodeRecord:
        events, avoided = self.host.episode_events(episode.flows)
        draws = self.host.episode_draws(episode.flows)
        self._draw_history.note({link: self._link_kind(link) for link in self._links_of(episode.flows)}, draws)
        return EpisodeRecord(
            initial=episode.initial,
            arrivals=tuple(episode.arrivals),
            outcomes=tuple(episode.outcomes[f] for f in episode.flows),
            close_ns=now_ns - episode.t0_ns,
            events=events,
            events_avoided=avoided,
            foreseen=self._joined_pattern(episode),
            left_out=episode.left_out,
            draws=draws.count,
            draw_digests=(draws.digest,) if draws.drew else (),
        )

    def _store(self, now_ns: int, episode: OpenEpisode, record: EpisodeRecord) -> None:
        """Keep a closed recording as a continuation of its key, if it was worth simulating."""
        total = record.events + record.events_avoided
        if total < MIN_RECORDED_EVENTS or self.inert:
            return
        # one more recording of the key is what a diverged replay asked for: whether its
        # course is new or not, replays of the key resume (a context that does not
        # recur must not keep a key from being replayed for the rest of the run)
        self._relearn.discard(episode.key)
        meta = {"flows": len(episode.flows), "span_ns": record.close_ns, "events": total}
        seen = next((r.seen for r in self._continuations(episode.key) if record.same_course(r)), 0)
        if self._update(episode.key, lambda value: add_continuation(value, record), meta):
            self._records.pop(episode.key, None)
            if not seen:
                self.stats.recorded += 1
            what = (f"confirmed {episode.key.hex()[:12]}: a stored course, now taken by {seen + 1} recordings"
                    if seen else f"stored {episode.key.hex()[:12]}")
            drew = f", drew {record.draws} random numbers" if record.draws else ""
            self.trace.append(MemoEvent(
                now_ns * 1e-9, episode.id, MemoDecision.RECORDED, tuple(episode.flows), record.close_ns * 1e-9, 0,
                f"{what}: {len(episode.flows)} flows, {total} events to simulate{drew}",
            ))

    def _release_finished_links(self, episode: OpenEpisode, flow: int, now_ns: int) -> None:
        """Release the links of a finished flow that no unfinished flow of its episode uses.

        Only the end of its transfer is left on them, as when a whole episode
        closes. A flow starting there later meets none of the episode's flows still
        running, so it opens an episode of its own instead of joining this one, or
        merging it with another: a replay is stopped only by a flow that shares a
        link with what it still holds. A recording releases links at the same
        offsets as its replays, so both see the same flows join.

        Paced (RDMA) flows not grouped (HPCC) keep theirs to the end: they arrive
        by ``_arrive_paced``, so pipeline sends opening apart beside an all-to-all
        would merge with it, and the mirrors of what merged diverge (moe-small-hpcc).
        """
        if not episode.unfinished or self._kept_apart(flow):
            return  # the episode closes, and releases all its links
        busy = self._links_of(episode.unfinished)
        for link in self._links(flow) - busy:
            if self._episode_of_link.get(link) == episode.id:
                del self._episode_of_link[link]
                self._released[link] = now_ns

    def _forget(self, episode: OpenEpisode, now_ns: int) -> None:
        for link in episode.links:
            if self._episode_of_link.get(link) == episode.id:
                del self._episode_of_link[link]
                self._released[link] = now_ns
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
        """The links a flow loads, data and ACK paths (its route is the host's first answer, kept)."""
        links = self._flow_links.get(flow)
        if links is None:
            data, ack = self.host.flow_route(flow)
            links = self._flow_links[flow] = frozenset(data) | frozenset(ack)
        return links

    def _links_of(self, flows: Iterable[int]) -> frozenset[int]:
        """Every link the flows load, data and ACK paths."""
        return frozenset().union(*map(self._links, flows))

    def _fingerprint(self, flows: list[int]):
        """The key of flows opening an episode.

        Each flow's place in the order the flows were created is part of it. Flows
        alike in every other way (the steps of a ring) need not end alike: the
        simulator breaks their ties in the order they were created, so that order
        says which recorded outcome is whose.
        """
        descriptors = {}
        links = {}
        for position, flow in enumerate(sorted(flows)):
            data, ack = self.host.flow_route(flow)
            attributes = f"{self.host.flow_attributes(flow)} created {position}"
            descriptors[flow] = FlowDescriptor(attributes, 0, data, ack)
            for link in (*data, *ack):
                links[link] = LinkDescriptor(self._link_attributes(link), self._queue(link))
        return fingerprint(Episode(descriptors, links, self.context))

    def _route(self, flow: int) -> tuple[int, ...]:
        """A flow's links in order: its data path, then its ACK path."""
        data, ack = self.host.flow_route(flow)
        return (*data, *ack)

    def _note_recorded_queues(self, now_ns: int, flow: int, outcome: FlowOutcome | None) -> None:
        """A replayed completion of ``flow``: what the recorded one had queued on its links then.

        A flow's last byte arrives with the ACKs of the flows it shared hosts with
        still queued behind it (hundreds, on a ring's hosts); the next step meets
        them. A replay puts only the flow's own last ACK and FIN on the wire.
        """
        if outcome is None or not outcome.trailing:
            return
        for link, recorded in zip(self._route(flow), outcome.trailing):
            when, before = self._recorded_queue.get(link, (-1, 0))
            self._recorded_queue[link] = (now_ns, max(recorded, before) if when == now_ns else recorded)

    def _recorded(self, link: int) -> int:
        """What the recordings of the completions replayed at this very instant had queued on the link."""
        when, queued = self._recorded_queue.get(link, (-1, 0))
        return queued if when == self._now_ns else 0

    def _left_out_on(self, flows: Iterable[int]) -> int:
        """Packets replays ending at this instant left out of these flows' links."""
        return sum(max(0, self._recorded(link) - self.host.link_queue(link)) for link in self._links_of(flows))

    def _queue(self, link: int) -> int:
        """The link's queue as a plain run has it now, as far as the memo knows.

        It counts the packets replays ending at this instant left out, so that a
        step opening right after a replayed step is keyed as after a simulated one:
        it then replays what a plain run does there (469.9 us, not 467.4, for a
        gpt-medium ring step behind 587 queued ACKs). Packets left out earlier are
        not counted (they drain in microseconds, and how far they drained depends on
        their sizes): the key then sees the emptier links, as it always did.
        """
        return max(self.host.link_queue(link), self._recorded(link))

    def _link_attributes(self, link: int) -> str:
        """A link's parameters, and how recently an episode released it (its last packets)."""
        since = self._now_ns - self._released.get(link, -RECENT_NS)
        recent = f" released {since} ns ago" if since < RECENT_NS else ""
        return self.host.link_attributes(link) + recent

    def _name_links(self, episode: OpenEpisode, flows: Iterable[int], first_index: int) -> None:
        """Name the links these flows bring to the episode after their arrival index and hop."""
        for index, flow in enumerate(flows, start=first_index):
            data, ack = self.host.flow_route(flow)
            for direction, path in (("d", data), ("a", ack)):
                for hop, link in enumerate(path):
                    episode.names.setdefault(link, f"{index}{direction}{hop}")

    def _attributes_digest(self, flow: int) -> str:
        """A digest of what a flow is, made once: a joiner's signature is made two or three times."""
        digest = self._flow_digests.get(flow)
        if digest is None:
            digest = self._flow_digests[flow] = _digest(self.host.flow_attributes(flow))
        return digest

    def _signature(self, episode: OpenEpisode, flow: int) -> str:
        """What a flow is and which of the episode's links it crosses, in the episode's own names.

        A link the episode does not hold yet is named by its place in the flow's
        own path, with its parameters and queue, so the signature never depends
        on link ids.
        """
        data, ack = self.host.flow_route(flow)
        parts = [self._attributes_digest(flow)]
        for direction, path in (("d", data), ("a", ack)):
            parts.append(",".join(
                episode.names.get(link)
                or f"x{direction}{hop}:{_digest(self._link_attributes(link))}:{self._queue(link)}"
                for hop, link in enumerate(path)
            ))
        return "|".join(parts)

    def _continuations(self, key: bytes) -> list[EpisodeRecord]:
        """The continuations stored for a key (read once per run, and again after a store)."""
        if key not in self._records:
            value = self.store.get(key)
            try:
                records, track = decode_value(value) if value is not None else ([], TrackRecord())
            except (RecordError, RecursionError) as problem:
                # sealed, yet nothing a replay can read (the record format is part of the key,
                # so no other version wrote it): set aside, and the episode simulated and recorded
                self.store.quarantine(key, _unreadable(problem), value)
                records, track = [], TrackRecord()
            self._records[key], self._tracks[key] = records, track
        return self._records[key]

    def _track(self, key: bytes) -> TrackRecord:
        """The key's track record: the store's, plus this run's replays not stored yet."""
        self._continuations(key)
        run = self._replays.get(key, TrackRecord())
        return self._tracks[key].plus(run.completed, run.diverged)

    def _trusted(self, now_ns: int, episode: OpenEpisode, order: list[int]) -> bool:
        """Whether the key's replays went well enough to replay (or mirror) it; says why not."""
        track = self._track(episode.key)
        if track.trusted():
            return True
        self.trace.append(MemoEvent(
            now_ns * 1e-9, episode.id, MemoDecision.DISTRUSTED, tuple(order), 0.0, 0,
            f"memo key {episode.key.hex()[:12]} simulated, not replayed: its replays merged with other "
            f"episodes {track.diverged} time(s) and completed {track.completed} (a replay needs "
            f"{MIN_COMPLETED_PER_DIVERGENCE} completed per divergence)",
        ))
        return False

    def _mirroring_trusted(self, now_ns: int, episode: OpenEpisode) -> bool:
        """Whether this run's mirrors went well enough to mirror another episode; says when not."""
        if self._mirrors.trusted():
            self._mirroring_stopped = False
            return True
        if not self._mirroring_stopped:
            self._mirroring_stopped = True
            self.trace.append(MemoEvent(
                now_ns * 1e-9, episode.id, MemoDecision.NO_MIRROR, (), 0.0, 0,
                f"mirroring paused: this run's mirrors diverged {self._mirrors.diverged} time(s) and "
                f"completed {self._mirrors.completed} (a mirror needs {MIN_COMPLETED_PER_DIVERGENCE} "
                f"completed per divergence); episodes are recorded instead until replays catch up",
            ))
        return False

    def save_track_records(self) -> None:
        """Add this run's completed and diverged replays to their keys' track records in the store."""
        if self.inert:
            return
        replays, self._replays = self._replays, {}
        for key, run in sorted(replays.items()):
            self._update(key, partial(add_replays, completed=run.completed, diverged=run.diverged))
            if key in self._tracks:
                self._tracks[key] = self._tracks[key].plus(run.completed, run.diverged)


    def _update(self, key: bytes, change: Callable[[bytes | None], bytes | None], meta: dict | None = None) -> bool:
        """``store.update``; a stored value no replay can read is quarantined, and the update made afresh."""
        unreadable: list[tuple[bytes | None, BaseException]] = []

        def guarded(value: bytes | None) -> bytes | None:
            try:
                return change(value)
            except (RecordError, RecursionError) as problem:
                unreadable.append((value, problem))
                raise

        for _ in range(2):
            try:
                return self.store.update(key, guarded, meta)
            except (RecordError, RecursionError):
                value, problem = unreadable[-1]
                self.store.quarantine(key, _unreadable(problem), value)
        return False


def _unreadable(problem: BaseException) -> str:
    """Why a stored value is no record a replay can read, as a quarantine reason."""
    if isinstance(problem, RecursionError):
        return "is not an episode record (nested too deeply)"
    return f"is {problem}" if str(problem).startswith("not ") else f"is not a readable record ({problem})"


def _without_rank(signature: str) -> str:
    """A joiner's signature without its creation rank among the flows of its instant (``Memoizer._join``)."""
    return signature.rsplit(" created ", 1)[0]


def _ends_spread(records: Sequence[EpisodeRecord]) -> int:
    """The most any one flow's recorded end differs between the records, ns (same flows, same order)."""
    return max(max(ends) - min(ends) for ends in zip(*([o.finish_ns for o in r.outcomes] for r in records)))


def _one_course(records: Sequence[EpisodeRecord]) -> EpisodeRecord | None:
    """The continuation to follow among ones that part only by a few ns in their ends, or None.

    Recordings of one key can end a few ns apart (moe-8x7b-64g over DCQCN: two courses
    of 12 queue pairs, the same arrivals, two flows' ends 4 ns apart and two alike flows'
    ends swapped, 50 ns apart, over 279 us): the plain run's own spread with what
    the key leaves out, such as where other flows' packets are on nearby links.
    Following all of them, a replay stopped where they part and resumed its queue
    pairs, which is not exact. Following one, each end is within that spread of
    the other's, so the one most recordings took (the first stored on a tie) is
    followed, if they have the same arrivals and every end is within
    ``ALIKE_ENDS_SHARE`` of their span of the others'.
    """
    first = records[0]
    if any((r.initial, r.arrivals, r.foreseen) != (first.initial, first.arrivals, first.foreseen)
           or len(r.outcomes) != len(first.outcomes) for r in records):
        return None
    if _ends_spread(records) > ALIKE_ENDS_SHARE * max(r.close_ns for r in records):
        return None
    return max(records, key=lambda r: r.seen)


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


def _absorbable(episode: OpenEpisode) -> bool:
    """An episode a recording can absorb: recording, and so far only its opening flows, unfinished."""
    return episode.mode == RECORDING and len(episode.arrivals) == episode.initial and not episode.outcomes


_APART = "apart "


def _apart(key: bytes, index: int) -> str:
    """The signature of an absorbed episode's opening flow ``index``: its own key and place."""
    return f"{_APART}{key.hex()} {index}"


def _index_of(name: str) -> int:
    """The arrival index in a link's name inside an episode (``Memoizer._name_links``: index, direction, hop)."""
    return int(name[: len(name) - len(name.lstrip("0123456789"))])


def _named_links(signature: str) -> tuple[tuple[int, ...], int]:
    """What a joiner's signature says of its links: the arrival indices naming those the
    episode held (sorted), and how many were new to it (``Memoizer._signature``)."""
    names = [name for path in signature.split(" created ")[0].split("|")[1:] for name in path.split(",") if name]
    held = sorted(_index_of(name) for name in names if not name.startswith("x"))
    return tuple(held), len(names) - len(held)


def _thin(points: list[TrajectoryPoint]) -> tuple[TrajectoryPoint, ...]:
    if len(points) <= TRAJECTORY_POINTS:
        return tuple(points)
    step = (len(points) - 1) / (TRAJECTORY_POINTS - 1)
    return tuple(points[round(i * step)] for i in range(TRAJECTORY_POINTS))


def _digest(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:16]
