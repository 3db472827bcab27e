"""When a recorded or live course may stand in for an episode: the ``Admission``.

One rule, over four inputs: the arrivals the run expects (``Forecast``: a
course must have the joiners the run knows are coming, in the pattern they
come, and joiners it does not know of only if its own replay would release
them, or, for kinds resumed exactly, if recordings agreed on them); the links
flows the run cannot foresee may reach (for kinds not resumed exactly, a course
is taken only where none can); ns-3's random draws (``randomness.py``); and
whether the run starts flows from callbacks on deliveries, which no oracle
foresees (``MemoHost.delivery_started``: once it has, no course stands in).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from wormhole_ns3.core.draws import DrawCase, Fidelity, port_loads
from wormhole_ns3.core.ports import MemoHost
from wormhole_ns3.core.shortcuts import GuardKind
from wormhole_ns3.memo.decisions import (
    CoursesPart,
    Intruders,
    MemoStats,
    OneCourse,
    UnforeseeableFlows,
)
from wormhole_ns3.memo.forecast import Forecast, Joiner
from wormhole_ns3.memo.links import LinkLedger
from wormhole_ns3.memo.randomness import admit_mirror, admit_records
from wormhole_ns3.memo.record import Arrival, EpisodeRecord
from wormhole_ns3.memo.table import Batch, OpenEpisode

#: Recordings that must have taken a continuation's course before it is followed with
#: joiners the run does not know of yet (``Admission.foreseen``).
CONFIRMED_COURSE = 2


class Admission:
    """Which stored courses, and which recordings being made, may stand in for an episode opening."""

    def __init__(self, host: MemoHost, ledger: LinkLedger, forecast: Forecast, stats: MemoStats,
                 fidelity: Fidelity) -> None:
        self.host = host
        self.ledger = ledger
        self.forecast = forecast
        self.stats = stats
        self.fidelity = fidelity

    def unforeseeable(self) -> UnforeseeableFlows | None:
        """Why no replay or mirror can stand in any more, if the run starts flows from callbacks on deliveries.

        A replay or a mirror is taken where no flow the run knows of will meet it, and
        a workload's oracle (``host.upcoming``, ``host.unforeseeable``) says which flows may
        come. A flow that a callback on a flow's delivery creates (a PacketSink's Rx
        trace, in a user's script) is known to no oracle: it may start on any link at
        any instant, and one that does resumes the replay, which is never exact. Nor can
        a replay give such a callback what it reads: a held flow delivers nothing until
        its completion, so a callback on the bytes of two flows into one sink fires
        later than in a plain run. Once the run has created such a flow, episodes are
        simulated and recorded (doc/changelog.md: the user scripts that showed it).
        """
        created = self.host.delivery_started()
        return UnforeseeableFlows(created) if created else None

    def stored(self, now_ns: int, episode: OpenEpisode, order: list[int], due: list[Joiner],
               continuations: list[EpisodeRecord], opening: Callable[[Sequence[Arrival]], bool],
               allowed: frozenset[GuardKind], batch: Batch) -> list[EpisodeRecord]:
        """The stored courses that may stand in for the episode opening with ``order``; sets its draw case.

        A recording that lacked packets at its opening stands in only where a plain-like
        one cannot be made: an opening like a plain run's is recorded instead, and replaces it.
        """
        records = [r for r in continuations if r.initial == len(order) and opening(r.arrivals)
                   and (episode.left_out or not r.left_out)]
        admission = admit_records(records, self.fidelity)
        records = admission.records if GuardKind.REPLAY in allowed else []
        if admission.refusal is not None:
            episode.refusal = admission.refusal
            episode.draw_case = DrawCase.DEPENDS if not records else None
        if records:
            records = self.foreseen(now_ns, episode, order, due, records, batch)
        if records:
            episode.draw_case = admission.case if any(r.draws for r in records) else DrawCase.DREW_NOTHING
        return records

    def live(self, episode: OpenEpisode, order: list[int], leaders: list[OpenEpisode],
             opening: Callable[[Sequence[Arrival]], bool], continuations: list[EpisodeRecord],
             allowed: frozenset[GuardKind]) -> list[OpenEpisode]:
        """The recordings being made that the episode may mirror, before their meetings are judged; sets its draw case.

        A leader must open alike, foresee the same joiners, and not lack packets the
        episode has (``left_out``); under same-seed fidelity, a mirror follows a course
        whose draws are not known yet only where ``admit_mirror`` allows.
        """
        leaders = [leader for leader in leaders
                   if opening(leader.arrivals) and leader.foreseen == episode.foreseen
                   and (not leader.left_out or episode.left_out)]
        if GuardKind.MIRROR not in allowed:
            leaders = []
        if leaders:
            mirroring = self._mirror_draws(order, continuations)
            if mirroring.case is DrawCase.DEPENDS:
                episode.refusal, episode.draw_case, leaders = mirroring.refusal, DrawCase.DEPENDS, []
            else:
                episode.draw_case = mirroring.case
        return leaders

    def _mirror_draws(self, order: list[int], continuations: list[EpisodeRecord]):
        """Whether twins of ``order`` may follow a recording of their key being made now (``admit_mirror``)."""
        links = self.ledger.links_of(order)
        sources = {link: self.host.link_random_sources(link) for link in links}
        loads = port_loads([self.host.flow_route(f)[0] for f in order], self.host.link_rate)
        return admit_mirror(continuations, links, sources, self.host.drawn_nodes(), self.fidelity,
                            queueless=lambda link: loads.get(link, 0.0) <= self.host.link_rate(link),
                            quiet=self.ledger.quiet_so_far)

    def foreseen(self, now_ns: int, episode: OpenEpisode, order: list[int], due: list[Joiner],
                  records: list[EpisodeRecord], batch: Batch) -> list[EpisodeRecord]:
        """The continuations whose joiners are flows the run already knows will start, and have them all.

        Some flows' start times are known in advance (released by compute that is
        running or by completions a replay scheduled, or waiting for their start,
        or starting now in this batch, or released by the replay's own completions:
        ``Forecast.released_by_replay``): a continuation without such a flow, at that
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
        included, make the pattern its joiners made (``Forecast.pattern``).
        """
        links = self.ledger.links_of(order)
        horizon = max(r.close_ns for r in records)
        coming = [(start - now_ns, route) for start, route, _ in self.forecast.upcoming(now_ns, horizon)
                  if start > now_ns]
        known = {offset for offset, _ in coming}
        if any(flow not in order for group in batch.group_of.values() for flow in group):
            known.add(0)  # flows of this batch open apart now: a record may have them meet it later
        joining = {offset for offset, route in coming if route & links}
        if joining:
            self.stats.foreseen += 1
        kept = []
        _, joins = self.forecast.joining(order)
        policies = [self.host.flow_transport(flow) for flow in order]
        paced = not all(policy.exact_resume for policy in policies)
        grouped = any(policy.guarded for policy in policies)
        for r in records:
            if not {offset for offset in joining if offset < r.close_ns} <= {a.offset_ns for a in r.arrivals}:
                continue
            pattern = episode.foreseen
            if not {a.offset_ns for a in r.arrivals[r.initial:]} <= known:
                if grouped:
                    # joiners the replay itself would release come in an order only their arrival
                    # tells: on moe-small-dcqcn four such replays met them in another order
                    continue
                released = self.forecast.released_by_replay(now_ns, episode, order, r, known)
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
                joining_too = [(offset, nodes, route) for offset, nodes, route in released if joins(offset, route)]
                pattern = self.forecast.pattern(order, due + joining_too)
            if pattern != r.foreseen:
                continue
            ends = {flow: now_ns + r.outcomes[i].finish_ns for i, flow in enumerate(order)}
            reached = self.forecast.intruding(now_ns, links, r.close_ns, ends, order) if grouped else set()
            if reached:
                episode.refusal = Intruders(len(reached), r.close_ns)
                continue
            kept.append(r)
        tolerance = max(policy.end_tolerance for policy in policies)
        if tolerance and len({tuple(o.finish_ns for o in r.outcomes) for r in kept}) > 1:
            # continuations nothing at the opening tells apart, ending otherwise: a replay would
            # stop when they part and resume its queue pairs (rdma_dag_ring.py, 2.7% off)
            chosen = one_course(kept, tolerance)
            if chosen is None:
                episode.refusal = CoursesPart(len(kept))
                return []
            episode.chosen = OneCourse(len(kept), ends_spread(kept), tolerance, chosen.seen)
            return [chosen]
        return kept


def ends_spread(records: Sequence[EpisodeRecord]) -> int:
    """The most any one flow's recorded end differs between the records, ns (same flows, same order)."""
    return max(max(ends) - min(ends) for ends in zip(*([o.finish_ns for o in r.outcomes] for r in records)))


def one_course(records: Sequence[EpisodeRecord], tolerance: float) -> EpisodeRecord | None:
    """The continuation to follow among ones that part only by a few ns in their ends, or None.

    Recordings of one key can end a few ns apart (moe-8x7b-64g over DCQCN: two courses
    of 12 queue pairs, the same arrivals, two flows' ends 4 ns apart and two alike flows'
    ends swapped, 50 ns apart, over 279 us): the plain run's own spread with what
    the key leaves out, such as where other flows' packets are on nearby links.
    Following all of them, a replay stopped where they part and resumed its queue
    pairs, which is not exact. Following one, each end is within that spread of
    the other's, so the one most recordings took (the first stored on a tie) is
    followed, if they have the same arrivals and every end is within
    ``tolerance`` of their span of the others'.
    """
    first = records[0]
    if any((r.initial, r.arrivals, r.foreseen) != (first.initial, first.arrivals, first.foreseen)
           or len(r.outcomes) != len(first.outcomes) for r in records):
        return None
    if ends_spread(records) > tolerance * max(r.close_ns for r in records):
        return None
    return max(records, key=lambda r: r.seen)
