"""What the memo stores for one episode, and how it is read back.

An episode starts when flows begin on idle links and ends when the last of
its flows (including every flow that joined it on its links) has finished and
its packets have drained. The record holds the episode as a trace: every
flow that took part, in the order it arrived, with its arrival offset and a
signature saying what it was and which of the episode's links it crossed;
and for each, when it finished and a thinned trajectory of its progress and
TCP sender state, from which a replay that must stop half-way (divergence)
puts the flow back where the recording had it.

Offsets are nanoseconds from the episode's start, so a record replays at any
absolute time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

#: Changes whenever the record layout or what a replay assumes changes.
RECORD_FORMAT = 1

#: TCP sender state fields, in the order a trajectory point stores them.
TCP_FIELDS = ("cwnd", "ssthresh", "alpha", "srtt", "rttvar", "rto")


class RecordError(ValueError):
    """A stored value that is not a record this version can replay."""


@dataclass(frozen=True)
class Arrival:
    """A flow joining the episode: when, and what it was (see ``episodes.signature``)."""

    offset_ns: int
    signature: str


@dataclass(frozen=True)
class TrajectoryPoint:
    """A flow's delivered bytes and TCP sender state at one sampling instant."""

    offset_ns: int
    delivered: int
    tcp: tuple[float, ...]  #: TCP_FIELDS, in order


@dataclass(frozen=True)
class FlowOutcome:
    """How a flow of the episode ended."""

    finish_ns: int
    trajectory: tuple[TrajectoryPoint, ...]

    def at(self, offset_ns: int) -> tuple[int, TrajectoryPoint | None]:
        """Delivered bytes at ``offset_ns`` (linear between recorded points) and the last point before it."""
        before = None
        for point in self.trajectory:
            if point.offset_ns > offset_ns:
                if before is None:
                    return 0, None
                span = point.offset_ns - before.offset_ns
                share = (offset_ns - before.offset_ns) / span if span > 0 else 0.0
                return before.delivered + int(share * (point.delivered - before.delivered)), before
            before = point
        return (before.delivered if before else 0), before


@dataclass(frozen=True)
class EpisodeRecord:
    """A recorded episode: ``arrivals[i]`` is the flow whose outcome is ``outcomes[i]``.

    The first ``initial`` arrivals are the flows that opened the episode, in the
    canonical order of its key; the others joined later, in arrival order.
    """

    initial: int
    arrivals: tuple[Arrival, ...]
    outcomes: tuple[FlowOutcome, ...]
    close_ns: int  #: when the episode's links were idle again
    events: int  #: events the recording executed for the episode's flows
    events_avoided: int  #: events the recording's steady skips avoided

    def to_bytes(self) -> bytes:
        document = {
            "format": RECORD_FORMAT,
            "initial": self.initial,
            "close_ns": self.close_ns,
            "events": self.events,
            "events_avoided": self.events_avoided,
            "flows": [
                [a.offset_ns, a.signature, o.finish_ns,
                 [[p.offset_ns, p.delivered, *p.tcp] for p in o.trajectory]]
                for a, o in zip(self.arrivals, self.outcomes)
            ],
        }
        return json.dumps(document, separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, value: bytes) -> EpisodeRecord:
        try:
            document = json.loads(value)
            if document["format"] != RECORD_FORMAT:
                raise RecordError(f"record format {document['format']}, expected {RECORD_FORMAT}")
            arrivals, outcomes = [], []
            for offset, signature, finish, points in document["flows"]:
                arrivals.append(Arrival(int(offset), str(signature)))
                outcomes.append(FlowOutcome(int(finish), tuple(
                    TrajectoryPoint(int(p[0]), int(p[1]), tuple(float(x) for x in p[2:]))
                    for p in points
                )))
            record = cls(
                initial=int(document["initial"]),
                arrivals=tuple(arrivals),
                outcomes=tuple(outcomes),
                close_ns=int(document["close_ns"]),
                events=int(document["events"]),
                events_avoided=int(document["events_avoided"]),
            )
        except RecordError:
            raise
        except (ValueError, KeyError, TypeError, IndexError) as problem:
            raise RecordError(f"not an episode record ({type(problem).__name__}: {problem})") from None
        if not 0 < record.initial <= len(record.arrivals):
            raise RecordError(f"record opens with {record.initial} of {len(record.arrivals)} flows")
        return record
