"""Which recorded courses may stand in for an episode, given ns-3's random draws.

A key holds what shapes an episode's course (flows, routes, links, transport,
versions) but not the random numbers its packets make models draw: RED
marking between its thresholds, PIE, an application's jitter. Without draws
a course is deterministic, and every episode of the key that meets the same
joiners takes it again. With draws it is one sample: plain ns-3 under the
same seed draws other numbers there (another iteration, another group's
queues), and may end elsewhere; a user's MoE layers, mirrored across two
groups, ended up to 76% off so.

So, under same-seed fidelity (the default), no shortcut leaves out a draw:
replaying or mirroring a course that drew would leave out the numbers plain
ns-3 draws there, move its random streams, and every later draw would come out
other than under the same seed (``doc/randomness.md``). A recording that drew
is never replayed, and a mirror follows a recording still being made, whose
draws are not known yet, only where the key's recordings drew nothing, or
where none exists yet and no model on its links can draw and none drew there
so far (its leader's draws are then watched, ``Memoizer``). Under statistical
fidelity every course may stand in, those that recordings under different
draws agreed on first, and the run is judged against ns-3's seed-to-seed
spread instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from wormhole_ns3.core.draws import DrawCase, Draws, Fidelity, RandomSource
from wormhole_ns3.core.links import link_node
from wormhole_ns3.memo.record import EpisodeRecord

#: How far apart two recordings' flows may end, as a share of each flow's FCT, and still
#: be one course (the error guard's default bound).
AGREEMENT_BOUND = 0.01


@dataclass(frozen=True)
class StoredCoursesDrew:
    """Stored continuations that open like the episode drew: a replay would leave their draws out."""

    drawing: int  #: the continuations that drew
    most: int  #: the draws of the one that drew most

    def render(self) -> str:
        return (f"{self.drawing} of its stored continuations drew random numbers (up to {self.most}): replaying "
                f"one would leave out the draws plain ns-3 makes there and move its random streams")


@dataclass(frozen=True)
class RecordingsDrew:
    """The key's recordings drew: a mirror of its twin would leave the twin's own draws out."""

    most: int  #: the draws of the recording that drew most

    def render(self) -> str:
        return (f"its key's recordings drew random numbers (up to {self.most}): following one would leave out "
                f"its twin's draws and move ns-3's random streams")


@dataclass(frozen=True)
class DrewAtItsNodes:
    """No recording of the key yet, and flows drew at nodes of the episode's links earlier in the run."""

    nodes: tuple[int, ...]

    def render(self) -> str:
        return (f"no recording of its key yet, and flows drew random numbers at node"
                f"{'s' if len(self.nodes) > 1 else ''} {', '.join(map(str, self.nodes))} of its links earlier "
                f"in this run")


@dataclass(frozen=True)
class MayDraw:
    """No recording of the key yet, and models on its links may draw where its flows make a queue."""

    models: tuple[str, ...]  #: what each such model is (``RandomSource.what``), sorted

    def render(self) -> str:
        return (f"no recording of its key yet, and models on its links may draw random numbers "
                f"({'; '.join(self.models)}) where its flows can make a queue, not yet seen quiet on links like "
                f"them: its twin's course may depend on draws of its own")


#: Why courses of an episode's key may not stand in for it, given the draws: its course depends on them.
DependsOnDraws = StoredCoursesDrew | RecordingsDrew | DrewAtItsNodes | MayDraw


@dataclass(frozen=True)
class Admission:
    """The courses that may stand in for an episode, the case they are in, and why the others may not."""

    records: list[EpisodeRecord]
    case: DrawCase
    #: why courses that open like it were not admitted (None when none was refused for its draws)
    refusal: DependsOnDraws | None = None


@dataclass
class DrawHistory:
    """What this run saw of random draws per kind of link: the evidence a first mirror goes on.

    A kind of link is its parameters (the digest of its attributes): each recording
    closed tells, for the kinds of its links, whether flows drew at their nodes.
    """

    quiet: set[str] = field(default_factory=set)  #: kinds of link recordings crossed with no draw
    drawn: set[str] = field(default_factory=set)  #: kinds of link at whose nodes a recording's flows drew

    def note(self, kinds: Mapping[int, str], draws: Draws) -> None:
        """A recording closed over links of these kinds (link -> kind), having drawn ``draws``."""
        for link, kind in kinds.items():
            (self.drawn if link_node(link) in draws.nodes else self.quiet).add(kind)

    def quiet_so_far(self, kind: str) -> bool:
        return kind in self.quiet and kind not in self.drawn


def agree(a: EpisodeRecord, b: EpisodeRecord, bound: float = AGREEMENT_BOUND) -> bool:
    """Two recordings of one situation whose flows arrive alike and each end within ``bound`` of its FCT."""
    if (a.initial, a.arrivals, a.foreseen) != (b.initial, b.arrivals, b.foreseen):
        return False
    for arrival, mine, theirs in zip(a.arrivals, a.outcomes, b.outcomes):
        fct = max(mine.finish_ns, theirs.finish_ns) - arrival.offset_ns
        if abs(mine.finish_ns - theirs.finish_ns) > bound * max(fct, 1):
            return False
    return True


def _confirmed(record: EpisodeRecord, drawing: Sequence[EpisodeRecord], bound: float) -> bool:
    """Recordings under different draws took this course: its own (several digests), or another within bound."""
    if len(record.draw_digests) >= 2:
        return True
    return any(other is not record and set(other.draw_digests) != set(record.draw_digests)
               and agree(record, other, bound) for other in drawing)


def _one_per_course(records: Iterable[EpisodeRecord]) -> list[EpisodeRecord]:
    """The first stored of recordings alike in their arrivals: one course, so a replay follows one end per flow."""
    kept: dict[tuple, EpisodeRecord] = {}
    for record in records:
        kept.setdefault((record.initial, record.arrivals, record.foreseen), record)
    return list(kept.values())


def admit_records(records: Sequence[EpisodeRecord], fidelity: Fidelity,
                  bound: float = AGREEMENT_BOUND) -> Admission:
    """Which stored continuations that open like an episode may be replayed for it."""
    drawing = [r for r in records if r.draws]
    if not drawing:
        return Admission(list(records), DrawCase.DREW_NOTHING)
    steady = [r for r in records if not r.draws]
    if fidelity is Fidelity.SAME_SEED:
        return Admission(steady, DrawCase.DREW_NOTHING if steady else DrawCase.DEPENDS,
                         StoredCoursesDrew(len(drawing), max(r.draws for r in drawing)))
    confirmed = [r for r in drawing if _confirmed(r, drawing, bound)]
    if confirmed:
        return Admission(steady + _one_per_course(confirmed), DrawCase.AGREED)
    return Admission(steady + _one_per_course(drawing), DrawCase.STATISTICAL)


def admit_mirror(records: Sequence[EpisodeRecord], links: Iterable[int],
                 sources: Mapping[int, Sequence[RandomSource]], drawn_nodes: frozenset[int],
                 fidelity: Fidelity, queueless: Callable[[int], bool] = lambda link: False,
                 quiet: Callable[[int], bool] = lambda link: False) -> Admission:
    """Whether an episode may follow a recording of its key being made now, whose draws are not known yet.

    ``records``: the key's stored continuations; ``sources``: per link of the
    episode, the models there that may draw (``FlowTracker::GetLinkRandomSources``);
    ``drawn_nodes``: the nodes where a flow's event drew so far this run;
    ``queueless``: whether the episode's flows cannot make a queue stand at a link
    (``port_loads``: it receives no more than it sends); ``quiet``: whether links like
    one were crossed without a draw so far (``DrawHistory``).
    """
    if fidelity is Fidelity.STATISTICAL:
        return Admission([], DrawCase.STATISTICAL)
    if records:
        drawing = [r for r in records if r.draws]
        if not drawing:
            return Admission([], DrawCase.DREW_NOTHING)
        return Admission([], DrawCase.DEPENDS, RecordingsDrew(max(r.draws for r in drawing)))
    links = sorted(set(links))
    drew = sorted({link_node(link) for link in links} & drawn_nodes)
    if drew:
        return Admission([], DrawCase.DEPENDS, DrewAtItsNodes(tuple(drew)))
    sourced = [link for link in links if sources.get(link)]
    if not sourced:
        return Admission([], DrawCase.NO_SOURCE)
    may_draw = sorted({source.what for link in sourced for source in sources[link]
                       if not (source.needs_queue and queueless(link)) and not quiet(link)})
    if may_draw:
        return Admission([], DrawCase.DEPENDS, MayDraw(tuple(may_draw)))
    return Admission([], DrawCase.QUIET_SO_FAR)


def describe_case(case: DrawCase) -> str:
    """What a replay's or a mirror's case says, for its trace row."""
    return {
        DrawCase.DREW_NOTHING: "its recordings drew no random number: the course is deterministic",
        DrawCase.NO_SOURCE: ("no model on its links is known to draw random numbers and none drew there yet "
                             "(its leader's draws are watched)"),
        DrawCase.QUIET_SO_FAR: ("models on its links may draw random numbers, but links like them were crossed "
                                "without a draw so far (its leader's draws are watched)"),
        DrawCase.AGREED: (f"statistical fidelity: its recordings drew random numbers, and recordings under other "
                          f"draws took its course within {AGREEMENT_BOUND:.0%}"),
        DrawCase.STATISTICAL: "statistical fidelity: a course recorded under other draws stands in",
        DrawCase.DEPENDS: "its course depends on random draws",
        DrawCase.STEADY_ACROSS_DRAWS: "its rates held steady across the random numbers its window drew",
    }[case]
