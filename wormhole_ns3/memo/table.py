"""The episodes open right now, and the links and flows each holds: the ``EpisodeTable``.

An *episode* opens when flows start on links no open episode holds (every
earlier flow on them has delivered its last byte). Every flow that later
starts on one of its links joins it; it closes when all its flows have
delivered their last byte. A link none of its unfinished flows uses is
released as soon as that is so (for kinds grouped into episodes,
``TransportPolicy.grouped``): what starts there later meets none of them.

An episode is recorded, replayed (following one or more ``Course``), or
simulated unmemoized. A ``Course`` follows a stored record, or a *leader*: a
recording of the same key being made right now. A mirror is a replay of such a
live course; once the leader's record is stored, the course follows the record
like any other.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum

from wormhole_ns3.core.draws import DrawCase
from wormhole_ns3.core.ports import MemoHost
from wormhole_ns3.memo.decisions import OneCourse, Refusal
from wormhole_ns3.memo.links import LinkLedger
from wormhole_ns3.memo.record import Arrival, EpisodeRecord, FlowOutcome
from wormhole_ns3.memo.signature import AnySignature, Direction, LinkName


class EpisodeMode(Enum):
    """What the memo does with an open episode."""

    RECORDING = "recording"  #: simulated, and recorded as a continuation of its key
    REPLAYING = "replaying"  #: held, its flows completed as the courses it follows say
    UNMEMOIZED = "unmemoized"  #: simulated, not recorded


class ReplayState(Enum):
    """Where a replay (or mirror) is: matching → holding → completed, or diverged from either."""

    MATCHING = "matching"  #: arrivals its courses have are still to come (or a leader may record more)
    HOLDING = "holding"  #: a course's every arrival came: only its held flows' completions remain
    COMPLETED = "completed"  #: its flows completed as a course had them
    DIVERGED = "diverged"  #: no course was left: its unfinished flows resumed for real


@dataclass
class OpenEpisode:
    """An episode between its first arrival and the moment its last byte arrives."""

    id: int
    t0_ns: int
    mode: EpisodeMode
    key: bytes = b""  #: empty until the episode is keyed (it never is if unmemoizable)
    initial: int = 0  #: how many flows opened it
    flows: list[int] = field(default_factory=list)  #: in arrival order
    links: set[int] = field(default_factory=set)
    names: dict[int, LinkName] = field(default_factory=dict)  #: link id -> its name inside the episode
    unfinished: set[int] = field(default_factory=set)
    # recording
    arrivals: list[Arrival] = field(default_factory=list)
    outcomes: dict[int, FlowOutcome] = field(default_factory=dict)  #: per flow
    followers: list[Course] = field(default_factory=list)  #: mirrors following this recording
    # replaying
    candidates: list[Course] = field(default_factory=list)  #: the courses it may be following
    mirror: bool = False  #: replaying a leader's recording rather than a stored one
    completing: dict[int, int] = field(default_factory=dict)  #: held flow -> its scheduled completion
    checked: set[int] = field(default_factory=set)  #: offsets whose arrivals a check verifies
    foreseen: str = ""  #: the flows known to join as it opened, as a pattern (``Forecast.pattern``)
    #: why stored continuations that open like it were not followed, for its trace row
    refusal: Refusal | None = None
    #: how the one course followed was chosen among alike ones (``Admission``), for its trace row
    chosen: OneCourse | None = None
    #: a replay's or mirror's case with respect to ns-3's random draws (``randomness.py``)
    draw_case: DrawCase | None = None
    #: packets a replay's completion left out of its links as it opened or a flow joined: it
    #: runs on emptier links than a plain run would, so its recording is not stored
    left_out: int = 0
    #: followed with joiners not known yet: how many recordings took that course (0: all known)
    confirmed: int = 0
    joined: list[tuple[int, int]] = field(default_factory=list)  #: (offset, flow) of each recorded joiner
    ended: ReplayState | None = None  #: how its replay ended, once it did

    @property
    def replay(self) -> ReplayState | None:
        """The state of its replay (None if it never replayed)."""
        if self.ended is None and self.mode is EpisodeMode.REPLAYING:
            return ReplayState.HOLDING if any(c.complete() for c in self.candidates) else ReplayState.MATCHING
        return self.ended

    def absorbable(self) -> bool:
        """An episode a recording can absorb: recording, and so far only its opening flows, unfinished."""
        return self.mode is EpisodeMode.RECORDING and len(self.arrivals) == self.initial and not self.outcomes


@dataclass
class Course:
    """One continuation a replay may be following, and which of its flows is which."""

    episode: OpenEpisode  #: the replaying episode this course belongs to
    record: EpisodeRecord | None = None
    leader: OpenEpisode | None = None
    #: the recording a mirror followed, kept once its record is stored (None: a stored record's replay)
    origin: OpenEpisode | None = None
    flow_of: dict[int, int] = field(default_factory=dict)  #: index in the record -> flow
    index_of: dict[int, int] = field(default_factory=dict)  #: flow -> index in the record

    @property
    def stored(self) -> EpisodeRecord:
        """The record followed (a course without a leader has one)."""
        assert self.record is not None, "a course follows a record or a leader"
        return self.record

    @property
    def arrivals(self) -> Sequence[Arrival]:
        return self.leader.arrivals if self.leader is not None else self.stored.arrivals

    @property
    def initial(self) -> int:
        return self.leader.initial if self.leader is not None else self.stored.initial

    def outcome(self, index: int) -> FlowOutcome | None:
        """How the course's flow ``index`` ended, if it has ended yet."""
        if self.leader is not None:
            return self.leader.outcomes.get(self.leader.flows[index])
        return self.stored.outcomes[index]

    def finish_of(self, flow: int) -> int:
        """The offset (ns) at which the course has ``flow`` end (one whose end it knows)."""
        outcome = self.outcome(self.index_of[flow])
        assert outcome is not None, "a completion is scheduled once every course knows it"
        return outcome.finish_ns

    def complete(self) -> bool:
        """True if every flow of the course has arrived (a leader's may still grow)."""
        return self.leader is None and len(self.flow_of) == len(self.stored.arrivals)

    def match(self, flow: int, index: int) -> None:
        self.flow_of[index] = flow
        self.index_of[flow] = index

    def expected_at(self, offset: int, signature: AnySignature, any_order: bool = False) -> int | None:
        """The unmatched arrival at ``offset`` with this signature, if the course has one.

        ``any_order``: with this signature but for its creation rank (``Signature.without_rank``).
        """
        wanted = signature.without_rank() if any_order else signature
        arrivals = self.arrivals
        for index in range(self.initial, len(arrivals)):
            arrival = arrivals[index]
            if (arrival.offset_ns == offset and index not in self.flow_of
                    and (arrival.signature.without_rank() if any_order else arrival.signature) == wanted):
                return index
        return None

    def missing_at(self, offset: int) -> bool:
        """Whether an arrival due by ``offset`` has not come (one absorbed after its time is due then too)."""
        return any(a.offset_ns <= offset and i not in self.flow_of for i, a in enumerate(self.arrivals))


@dataclass
class Batch:
    """The flows starting at one instant, while the memo decides them."""

    #: the groups of flows arriving in the batch, by each link they load
    group_of: dict[int, list[int]] = field(default_factory=dict)
    #: flows decided on, not yet started or held: they are, at the batch's end, in the
    #: batch's order (the order of a plain run's starts)
    launching: dict[int, Callable[[int], None]] = field(default_factory=dict)


class EpisodeTable:
    """The open episodes, by id, and which one holds each link and each flow."""

    def __init__(self, host: MemoHost, ledger: LinkLedger) -> None:
        self.host = host
        self.ledger = ledger
        self.episodes: dict[int, OpenEpisode] = {}
        self.of_link: dict[int, int] = {}
        self.of_flow: dict[int, int] = {}
        self._next_id = 0

    def new(self, now_ns: int, mode: EpisodeMode) -> OpenEpisode:
        episode = OpenEpisode(id=self._next_id, t0_ns=now_ns, mode=mode)
        self._next_id += 1
        self.episodes[episode.id] = episode
        return episode

    def of(self, flow: int) -> OpenEpisode | None:
        """The open episode a flow belongs to."""
        return self.episodes.get(self.of_flow.get(flow, -1))

    def touching(self, flow: int) -> set[int]:
        """The open episodes a flow's links belong to (all of them if its route is unknown)."""
        links = self.ledger.links(flow)
        if not links:
            return set(self.episodes)
        return {self.of_link[link] for link in links if link in self.of_link}

    def on_links_of(self, flows: Sequence[int]) -> list[int]:
        """The ids of the episodes holding a link of these flows, in order."""
        return sorted({self.of_link[link] for f in flows for link in self.ledger.links(f) if link in self.of_link})

    def hold(self, episode: OpenEpisode, flow: int) -> None:
        """The flow belongs to the episode, and so do its links."""
        if flow not in episode.flows:
            episode.flows.append(flow)
        episode.unfinished.add(flow)
        self.of_flow[flow] = episode.id
        for link in self.ledger.links(flow):
            episode.links.add(link)
            self.of_link[link] = episode.id

    def name_links(self, episode: OpenEpisode, flows: Iterable[int], first_index: int) -> None:
        """Name the links these flows bring to the episode after their arrival index and hop."""
        for index, flow in enumerate(flows, start=first_index):
            data, ack = self.host.flow_route(flow)
            for direction, path in ((Direction.DATA, data), (Direction.ACK, ack)):
                for hop, link in enumerate(path):
                    episode.names.setdefault(link, LinkName(index, direction, hop))

    def take_in(self, source: OpenEpisode, target: OpenEpisode) -> None:
        """Every flow and link of ``source`` belongs to ``target`` from now on, and ``source`` is closed."""
        for flow in source.flows:
            target.flows.append(flow)
            self.of_flow[flow] = target.id
        target.unfinished |= source.unfinished
        for link in source.links:
            target.links.add(link)
            self.of_link[link] = target.id
        del self.episodes[source.id]

    def release_finished(self, episode: OpenEpisode, flow: int, now_ns: int) -> None:
        """Release the links of a finished flow that no unfinished flow of its episode uses.

        Only the end of its transfer is left on them, as when a whole episode
        closes. A flow starting there later meets none of the episode's flows still
        running, so it opens an episode of its own instead of joining this one, or
        merging it with another: a replay is stopped only by a flow that shares a
        link with what it still holds. A recording releases links at the same
        offsets as its replays, so both see the same flows join.
        """
        if not episode.unfinished:
            return  # the episode closes, and releases all its links
        busy = self.ledger.links_of(episode.unfinished)
        for link in self.ledger.links(flow) - busy:
            if self.of_link.get(link) == episode.id:
                del self.of_link[link]
                self.ledger.released(link, now_ns)

    def forget(self, episode: OpenEpisode, now_ns: int) -> None:
        """The episode closed: its links are released, its flows belong to none."""
        for link in episode.links:
            if self.of_link.get(link) == episode.id:
                del self.of_link[link]
                self.ledger.released(link, now_ns)
        for flow in episode.flows:
            if self.of_flow.get(flow) == episode.id:
                del self.of_flow[flow]
        self.episodes.pop(episode.id, None)
