"""What the memo decided, as typed facts, and the trace rows rendered from them (``MemoTrace``).

Each decision carries the facts it was made on (``Miss``, ``Replayed``, ...);
the prose of its trace row is rendered from them, so a test asserts on the
facts and the wording may change freely.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from wormhole_ns3.core.backoff import BackOff
from wormhole_ns3.core.draws import DrawCase
from wormhole_ns3.core.trace import Facts, TraceKind
from wormhole_ns3.core.vocabulary import Label
from wormhole_ns3.memo.randomness import DependsOnDraws, describe_case


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
    #: A recording met another episode it could not absorb: simulated from then on, never stored.
    MERGED = "merged"
    #: A recording that cannot pay stopped (it grew past ``RECORDING_BOUND`` flows without closing,
    #: or no lookup of the simulation can admit it any more): simulated, no longer recorded.
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
    MemoDecision.MERGED: TraceKind.MEMO_MERGED,
    MemoDecision.STOPPED: TraceKind.BACK_OFF,
}


def short(key: bytes) -> str:
    """A key as trace rows name it."""
    return key.hex()[:12]


def _case(case: DrawCase | None) -> str:
    return f"; {describe_case(case)}" if case and case is not DrawCase.DREW_NOTHING else ""


@dataclass(frozen=True)
class UnforeseeableFlows:
    """The run starts flows from callbacks on deliveries, which no oracle foresees (``Admission.unforeseeable``)."""

    created: str  #: the first such flow, described by the host

    def render(self) -> str:
        return (f"the run starts flows from callbacks on what flows deliver ({self.created}): no workload "
                f"tells what may meet a replay or mirror before it ends, and a resumed flow is not exact")


@dataclass(frozen=True)
class Intruders:
    """A flow the run cannot foresee yet may reach a course of a kind not resumed exactly."""

    links: int  #: of its links, those such a flow may reach
    horizon_ns: int  #: before the course ends

    def render(self) -> str:
        return (f"a flow the run cannot foresee yet may reach {self.links} of its links "
                f"within +{self.horizon_ns} ns, and a paced resume is not exact")


@dataclass(frozen=True)
class CoursesPart:
    """Stored courses nothing at the opening tells apart end otherwise, beyond the kind's end tolerance."""

    courses: int

    def render(self) -> str:
        return f"its {self.courses} stored continuations end otherwise, and a paced resume is not exact"


#: Why the courses that open like an episode were not followed.
Refusal = UnforeseeableFlows | DependsOnDraws | Intruders | CoursesPart


@dataclass(frozen=True)
class Miss:
    key: bytes
    flows: int
    left_out: int  #: packets replays ending as it opened left out of its links (0: it ran as a plain run)
    relearn: bool  #: recorded again after a divergence of its key
    refusal: Refusal | None  #: why courses that open like it may not stand in (None when none does)
    #: False once recording backed off (``Futile``): simulated only
    recorded: bool = True

    def render(self) -> str:
        why = ("recorded again after a divergence" if self.relearn
               else self.refusal.render() if self.refusal else "no stored continuation opens like it")
        if not self.recorded:
            return (f"memo miss {short(self.key)}: {self.flows} flows simulated, not recorded: recording backed "
                    f"off ({why})")
        kept = (f"recorded, kept only until one like a plain run is: replays just ended on its links left "
                f"out {self.left_out} queued packets a plain run has there" if self.left_out else "recorded")
        return f"memo miss {short(self.key)}: {self.flows} flows simulated and {kept} ({why})"


@dataclass(frozen=True)
class Stopped:
    key: bytes
    flows: int
    since_ns: int  #: how long ago it opened
    joining: int
    bound: int

    def render(self) -> str:
        return (f"recording of {short(self.key)} stopped: {self.flows} flows since it opened "
                f"{self.since_ns * 1e-9:.6f} s ago and {self.joining} joining, past {self.bound} without "
                f"closing, while the run's shortcuts have not paid for its bets: simulated, not recorded")


@dataclass(frozen=True)
class Futile:
    """Recording backed off: no lookup of the simulation can admit what it would record (``Memoizer._back_off``)."""

    refusal: UnforeseeableFlows  #: the refusal that stands to the simulation's end
    recordings: int  #: open recordings stopped (those no mirror follows)
    flows: int  #: their flows

    def render(self) -> str:
        return (f"recording stopped: {self.refusal.render()}; every later lookup of this simulation is refused, "
                f"so nothing recorded can stand in, and the run's shortcuts have not paid for its bets: "
                f"{self.recordings} open recording(s) of {self.flows} flows stopped, and every episode opening "
                f"from now on is simulated, not recorded")


@dataclass(frozen=True)
class OneCourse:
    """How the one continuation followed was chosen among alike ones (``admission.one_course``)."""

    alike: int  #: continuations that differ only in their ends
    spread_ns: int  #: the most one flow's end differs between them
    share: float  #: of their span, the most the spread may be
    seen: int  #: recordings that took the one followed

    def render(self) -> str:
        return (f"its {self.alike} stored continuations differ only in ends at most {self.spread_ns} ns "
                f"apart (under {self.share:.1%} of their span): the one {self.seen} recording(s) took is followed")


@dataclass(frozen=True)
class Replayed:
    key: bytes
    flows: int
    courses: int  #: the stored continuations followed
    confirmed: int  #: recordings that had the joiners the run cannot foresee yet (0: all known)
    chosen: OneCourse | None
    case: DrawCase | None

    def render(self) -> str:
        return (f"memo hit {short(self.key)}: {self.flows} flows opening on idle links match "
                f"{self.courses} recorded continuation(s) (canonical key: same flows, routes, link "
                f"and transport parameters, versions); completions replayed, later arrivals checked"
                + (f"; joiners the run cannot foresee yet are followed as {self.confirmed} recordings had them"
                   if self.confirmed else "")
                + (f"; {self.chosen.render()}" if self.chosen else "")
                + _case(self.case))


@dataclass(frozen=True)
class JoinedApart:
    key: bytes
    flows: int
    offset_ns: int  #: into the replay it joins
    replay: int  #: the episode id of that replay

    def render(self) -> str:
        return (f"memo hit {short(self.key)}: {self.flows} flows opening on idle links at +{self.offset_ns} ns are "
                f"the ones episode {self.replay}'s record has open apart there, before they meet it; held "
                f"and replayed with it")


@dataclass(frozen=True)
class Mirrored:
    key: bytes
    leader: int  #: the episode id of the recording followed
    lead_ns: int  #: how much earlier the leader opened
    flows: int
    case: DrawCase | None

    def render(self) -> str:
        return (f"memo key {short(self.key)} is being recorded by episode {self.leader} "
                f"(started {self.lead_ns * 1e-9:.9f} s earlier): {self.flows} "
                f"flows on idle links follow it, completing when their counterparts do" + _case(self.case))


@dataclass(frozen=True)
class NotMirrored:
    key: bytes
    joiners: int  #: flows due that bring it into another episode
    horizon_ns: int
    links: int  #: the links where that meeting would be
    paced: bool  #: judged by the paced rule (``meetings.paced_meetings``)
    shift_ns: int  #: how long after its leader it opened

    def render(self) -> str:
        where = ("where other flows due or an episode still open will be" if self.paced
                 else f"beyond them, {self.shift_ns} ns after its leader opened" if self.shift_ns > 0
                 else "another episode holds")
        return (f"memo key {short(self.key)} not mirrored: {self.joiners} flow(s) will start on its "
                f"links or theirs within +{self.horizon_ns} ns, before it can end, and reach {self.links} link(s) "
                f"{where}; recorded instead")


@dataclass(frozen=True)
class MirroringPaused:
    diverged: int
    completed: int
    needed: int  #: completed mirrors needed per divergence

    def render(self) -> str:
        return (f"mirroring paused: this run's mirrors diverged {self.diverged} time(s) and "
                f"completed {self.completed} (a mirror needs {self.needed} "
                f"completed per divergence); episodes are recorded instead until replays catch up")


@dataclass(frozen=True)
class Distrusted:
    key: bytes
    diverged: int
    completed: int
    needed: int  #: completed replays needed per divergence

    def render(self) -> str:
        return (f"memo key {short(self.key)} simulated, not replayed: its replays merged with other "
                f"episodes {self.diverged} time(s) and completed {self.completed} (a replay needs "
                f"{self.needed} completed per divergence)")


class Cause(Enum):
    """Why a replay or mirror stopped."""

    UNEXPECTED_JOINER = "unexpected joiner"  #: a flow joined that no continuation has there
    MISSING_ARRIVALS = "missing arrivals"  #: the arrivals recorded at an offset did not come
    DISAGREE = "disagree"  #: continuations nothing told apart disagree on an end
    GUARD_CHECK = "guard check"  #: flows the error guard's check simulates for real meet it
    MERGE = "merge"  #: it met another open episode
    LEADER_DIVERGED = "leader diverged"  #: the recording it mirrored stopped being recordable
    LEADER_DREW = "leader drew"  #: the recording it mirrored drew random numbers
    ABSORBED_UNMET = "absorbed unmet"  #: its leader was absorbed, and no mirror took it in

    @property
    def merged(self) -> bool:
        """It met another episode (or its leader did), which no record of its key can hold."""
        return self in (Cause.MERGE, Cause.LEADER_DIVERGED, Cause.ABSORBED_UNMET)


@dataclass(frozen=True)
class Diverged:
    cause: Cause
    why: str  #: the cause, said with its particulars
    offset_ns: int  #: into the replay
    resumed: int  #: flows resumed

    def render(self) -> str:
        return (f"{self.why}: replay stopped at +{self.offset_ns} ns, {self.resumed} flow(s) resumed from the "
                f"recorded trajectory; the next episodes with this key are recorded again")


@dataclass(frozen=True)
class Absorbed:
    why: str  #: the meeting
    key: bytes
    offsets_ns: tuple[int, ...]  #: when each absorbed episode opened, after the recording

    def render(self) -> str:
        return (f"{self.why}: recording {short(self.key)} goes on with {len(self.offsets_ns)} episode(s) that opened "
                f"apart (at +{', +'.join(map(str, self.offsets_ns))} ns) and simulated only "
                f"their opening flows; nothing else touched them, so together they are one isolated episode")


@dataclass(frozen=True)
class Merged:
    """A recording lost to a meeting it could not absorb: its key's next lookups find nothing it would have stored."""

    why: str  #: the meeting
    key: bytes
    flows: int  #: the recording's flows so far
    met: int  #: the other episodes the meeting made one with it
    apart: bool  #: its flows' kinds are not all absorbed alike (paced and unpaced)

    def render(self) -> str:
        because = ("flows of kinds not absorbed alike are never absorbed" if self.apart
                   else "only a recording meeting episodes that simulated nothing but their openings absorbs them")
        return (f"{self.why}: recording {short(self.key)} of {self.flows} flows merges with {self.met} other "
                f"episode(s) ({because}): simulated from now on and never stored, so its key's next "
                f"lookups miss")


@dataclass(frozen=True)
class MirrorsAbsorbed:
    why: str  #: the meeting
    key: bytes
    mirrors: int  #: the mirrors taken in

    def render(self) -> str:
        return (f"{self.why}: mirror of {short(self.key)} takes in {self.mirrors} mirror(s) of what its leader "
                f"absorbed, met at the same shift as their leaders met; they follow its record as one")


@dataclass(frozen=True)
class Recorded:
    key: bytes
    seen: int  #: recordings that took its course before (0: a new course)
    flows: int
    events: int  #: to simulate it
    draws: int  #: random numbers it drew

    def render(self) -> str:
        what = (f"confirmed {short(self.key)}: a stored course, now taken by {self.seen + 1} recordings"
                if self.seen else f"stored {short(self.key)}")
        drew = f", drew {self.draws} random numbers" if self.draws else ""
        return f"{what}: {self.flows} flows, {self.events} events to simulate{drew}"


@dataclass(frozen=True)
class MemoEvent:
    """One line of the memo's trace: a replay, a mirror, a recording stored, or a divergence."""

    time: float
    episode: int
    kind: MemoDecision
    flows: tuple[int, ...]
    span: float  #: s of simulated time the record covers
    events_avoided: int
    facts: Facts
    #: for a replay, a mirror or an episode simulated for its draws: its case (``core.draws``)
    draws: DrawCase | None = None

    @property
    def detail(self) -> str:
        """The row's prose."""
        return self.facts.render()


class MemoTrace(list[MemoEvent]):
    """The memo's trace so far, in the order of its decisions."""

    def emit(self, decision: MemoDecision, facts: Facts, now_ns: int, episode: int, flows: tuple[int, ...],
             span_ns: int = 0, events_avoided: int = 0, draws: DrawCase | None = None) -> None:
        self.append(MemoEvent(now_ns * 1e-9, episode, decision, flows, span_ns * 1e-9, events_avoided, facts, draws))


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
    #: replayed completions' ends of transfer (``memo/owed.py``): left owed, sent at once, paid in the
    #: instant to a flow simulated on their links, met late (after their instant, before they drained)
    ends_owed: int = 0
    ends_sent: int = 0
    ends_paid: int = 0
    ends_late: int = 0
