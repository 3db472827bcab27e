"""What the memo stores for one episode key, and how it is read back.

An episode starts when flows begin on idle links and ends when the last of
its flows (including every flow that joined it on its links) has finished and
its packets have drained. The record holds the episode as a trace: every
flow that took part, in the order it arrived, with its arrival offset and a
signature saying what it was and which of the episode's links it crossed;
and for each, when it finished and a thinned trajectory of its progress and
congestion state (TCP's window and RTT estimates, DCQCN's rates and alpha),
from which a replay that must stop half-way (divergence) puts the flow back
where the recording had it.

Offsets are nanoseconds from the episode's start, so a record replays at any
absolute time.

One key can have several records (*continuations*): the flows that open an
episode determine its course only until a flow from outside joins it, and
what joins, and when, depends on the rest of the run (the same first flow of
a pipeline send may be followed by another send in one part of an iteration
and not in another). All continuations of a key agree up to the first
arrival where they differ; a replay follows all that agree with what it has
seen so far.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from wormhole_ns3.core.flows import FlowKind, TrajectoryPoint
from wormhole_ns3.memo.signature import (
    AnySignature,
    ApartSignature,
    Direction,
    LinkName,
    LinkState,
    PathLink,
    Signature,
)

#: Changes whenever the record layout or what a replay assumes changes.
#: 2: each flow's rank among the episode's completions.
#: 3: a replayed completion puts the end of its transfer on the wire (the receiver's
#: ACK and FIN, ApplicationFlow::SendEndOfTransfer), so what later episodes record
#: after a replay is what a plain run has there; links are released as their flows
#: end; a joiner's signature has its creation rank; the flows due to join at the
#: opening (``foreseen``).
#: 4: ``foreseen`` is the pattern of the joiners that came (``Forecast.joined_pattern``),
#: not of those known at the opening.
#: 5: each flow's ``trailing`` queues, which a replay's completion leaves out, and the
#: packets a recording's links lacked as it opened (``left_out``), and how many recordings
#: took each continuation's course (``seen``).
#: 6: the random numbers the recording drew (``draws``), and the digests of the draws
#: of the recordings that took its course (``draw_digests``).
RECORD_FORMAT = 6

#: TCP sender state fields, in the order a trajectory point stores them.
TCP_FIELDS = ("cwnd", "ssthresh", "alpha", "srtt", "rttvar", "rto")

#: The congestion state a trajectory point stores, per kind of flow, in the
#: tracker's order (FlowTracker::GetCongestionState): what a resumed flow
#: continues from. Kinds without an entry are not memoized.
STATE_FIELDS: dict[str, tuple[str, ...]] = {
    FlowKind.BULK_TCP: TCP_FIELDS,
    FlowKind.RDMA_DCQCN: ("rate", "target_rate", "alpha"),  # bit/s, bit/s, DCQCN's alpha
    FlowKind.RDMA_HPCC: ("window", "reference_window", "utilization"),  # bytes, bytes, U
}


#: Continuations kept per key; a key with more is not worth replaying.
MAX_CONTINUATIONS = 16

#: Draw digests kept per continuation: two already say different draws took its course.
MAX_DRAW_DIGESTS = 4


class RecordError(ValueError):
    """A stored value that is not a record this version can replay."""


class NotARecord(RecordError):
    """A stored value that is no episode record at all; ``detail`` says what in it is not."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"not an episode record ({detail})")


@dataclass(frozen=True)
class Arrival:
    """A flow joining the episode: when, and what it was (``signature.py``)."""

    offset_ns: int
    signature: AnySignature


_APART = "apart "
_CREATED = " created "
_HELD = re.compile(r"(\d+)([da])(\d+)")
_NEW = re.compile(r"x([da])(\d+):([0-9a-f]+):(\d+)")
_APART_TEXT = re.compile(r"apart ([0-9a-f]*) (\d+)")


def signature_text(signature: AnySignature) -> str:
    """A signature as a record stores it (and the order of alike joiners: ``Memoizer._join``).

    ``digest|data links|ACK links`` with `` created N`` for a joiner, each link
    ``{index}{d|a}{hop}`` if the episode held it, else ``x{d|a}{hop}:{digest}:{queue}``;
    an absorbed episode's opening flow is ``apart {key} {index}``.
    """
    if isinstance(signature, ApartSignature):
        return f"{_APART}{signature.key.hex()} {signature.index}"
    paths = "|".join(",".join(map(_link_text, path)) for path in (signature.data, signature.ack))
    created = f"{_CREATED}{signature.created}" if signature.created is not None else ""
    return f"{signature.attributes}|{paths}{created}"


def _link_text(link: PathLink) -> str:
    if isinstance(link, LinkName):
        return f"{link.index}{link.direction.value}{link.hop}"
    return f"x{link.direction.value}{link.hop}:{link.digest}:{link.queue}"


def parse_signature(text: str) -> AnySignature:
    """The signature a record stored as ``text`` (``signature_text``); RecordError if it is none."""
    apart = _APART_TEXT.fullmatch(text)
    if apart:
        return ApartSignature(bytes.fromhex(apart[1]), int(apart[2]))
    body, rank = text, None
    if _CREATED in text:
        body, created = text.rsplit(_CREATED, 1)
        if not created.isdigit():
            raise NotARecord(f"signature {text!r:.60}")
        rank = int(created)
    parts = body.split("|")
    if len(parts) != 3:
        raise NotARecord(f"signature {text!r:.60}")
    attributes, data, ack = parts
    return Signature(attributes, _path(data, text), _path(ack, text), rank)


def _path(text: str, signature: str) -> tuple[PathLink, ...]:
    links: list[PathLink] = []
    for name in filter(None, text.split(",")):
        if held := _HELD.fullmatch(name):
            links.append(LinkName(int(held[1]), Direction(held[2]), int(held[3])))
        elif new := _NEW.fullmatch(name):
            links.append(LinkState(Direction(new[1]), int(new[2]), new[3], int(new[4])))
        else:
            raise NotARecord(f"signature {signature!r:.60}")
    return tuple(links)


@dataclass(frozen=True)
class FlowOutcome:
    """How a flow of the episode ended."""

    finish_ns: int
    trajectory: tuple[TrajectoryPoint, ...]
    #: Its place among the episode's completions (0 first). Flows that finish at the same
    #: nanosecond complete in this order in a replay, as they did when recorded: what a
    #: completion sets off (the user's callback starting the next message, a workload's
    #: release) then creates flows in the order, with the ports, a plain run gives them.
    rank: int = 0
    #: Packets queued on each of its links (data path, then ACK path) as its last byte
    #: arrived: the ACKs queued behind the data of the flows it shared hosts with. A
    #: replay's completion puts none of them on the wire, so a lookup right after it
    #: counts them in (``LinkLedger.queue``).
    trailing: tuple[int, ...] = ()

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
    #: the flows that joined it before it could end, as a pattern (``Forecast.joined_pattern``):
    #: a lookup foreseeing other flows due follows another continuation, or records one
    foreseen: str = ""
    #: packets replays had left out of its links as it was recorded (``FlowOutcome.trailing``):
    #: 0 for a recording that ran as a plain run would. One that lacked some is kept only
    #: until a plain-like one of its situation is stored, and is followed only while none is.
    left_out: int = 0
    #: how many recordings took this very course (``add_continuation``). Joiners the run
    #: cannot foresee at the opening are followed once two recordings agreed on them.
    seen: int = 1
    #: random numbers its flows drew while it was recorded (``RandomDrawMonitor``): 0 for a
    #: course no draw shaped, which any episode of its key and arrivals takes again
    draws: int = 0
    #: the digests of the draws of the recordings that took this course, each once (at most
    #: MAX_DRAW_DIGESTS): two or more, and recordings under different draws took it
    draw_digests: tuple[int, ...] = ()

    def situation(self) -> tuple:
        """What a lookup tells records apart by before following one: its opening flows and the joiners it foresaw."""
        return self.initial, self.arrivals[: self.initial], self.foreseen

    def same_course(self, other: EpisodeRecord) -> bool:
        """True if both record the same arrivals and finishes (their event counts may differ)."""
        return (
            (self.initial, self.arrivals, self.close_ns, self.foreseen)
            == (other.initial, other.arrivals, other.close_ns, other.foreseen)
            and [o.finish_ns for o in self.outcomes] == [o.finish_ns for o in other.outcomes]
        )

    def to_document(self) -> dict:
        return {
            "initial": self.initial,
            "close_ns": self.close_ns,
            "events": self.events,
            "events_avoided": self.events_avoided,
            "foreseen": self.foreseen,
            "left_out": self.left_out,
            "seen": self.seen,
            "draws": self.draws,
            "draw_digests": list(self.draw_digests),
            "flows": [
                [a.offset_ns, signature_text(a.signature), o.finish_ns,
                 [[p.offset_ns, p.delivered, *p.state] for p in o.trajectory], o.rank, list(o.trailing)]
                for a, o in zip(self.arrivals, self.outcomes)
            ],
        }

    @classmethod
    def from_document(cls, document: dict) -> EpisodeRecord:
        try:
            arrivals, outcomes = [], []
            for offset, signature, finish, points, rank, trailing in document["flows"]:
                arrivals.append(Arrival(int(offset), parse_signature(str(signature))))
                outcomes.append(FlowOutcome(int(finish), tuple(
                    TrajectoryPoint(int(p[0]), int(p[1]), tuple(float(x) for x in p[2:]))
                    for p in points
                ), int(rank), tuple(int(n) for n in trailing)))
            record = cls(
                initial=int(document["initial"]),
                arrivals=tuple(arrivals),
                outcomes=tuple(outcomes),
                close_ns=int(document["close_ns"]),
                events=int(document["events"]),
                events_avoided=int(document["events_avoided"]),
                foreseen=str(document["foreseen"]),
                left_out=int(document["left_out"]),
                seen=int(document["seen"]),
                draws=int(document["draws"]),
                draw_digests=tuple(int(d) for d in document["draw_digests"]),
            )
        except RecordError:
            raise
        except (ValueError, KeyError, TypeError, IndexError) as problem:
            raise NotARecord(f"{type(problem).__name__}: {problem}") from None
        if not 0 < record.initial <= len(record.arrivals):
            raise RecordError(f"record opens with {record.initial} of {len(record.arrivals)} flows")
        return record


@dataclass(frozen=True)
class TrackRecord:
    """How a key's replays went, over every run that used the store.

    A replay that diverges resumes its flows from a recorded trajectory, which
    is close but not exact. A divergence for a joiner the continuations lack
    teaches the key that continuation; one for a merge with another episode
    teaches nothing (no record holds a merge), so a key whose replays keep
    merging (as overlapping all-to-alls do) costs accuracy and saves little,
    and is simulated instead.
    """

    completed: int = 0
    diverged: int = 0  #: replays ended by a merge

    def trusted(self) -> bool:
        """At most one merge per MIN_COMPLETED_PER_DIVERGENCE completed replays."""
        return self.diverged * MIN_COMPLETED_PER_DIVERGENCE <= self.completed

    def plus(self, completed: int, diverged: int) -> TrackRecord:
        return TrackRecord(self.completed + completed, self.diverged + diverged)


#: Completed replays a key needs per divergence to be replayed again.
MIN_COMPLETED_PER_DIVERGENCE = 4


def encode_continuations(records: list[EpisodeRecord], track: TrackRecord = TrackRecord()) -> bytes:
    """The stored value of a key: its continuations, oldest first, and its track record."""
    document = {
        "format": RECORD_FORMAT,
        "continuations": [r.to_document() for r in records],
        "replays": [track.completed, track.diverged],
    }
    return json.dumps(document, separators=(",", ":")).encode()


def decode_value(value: bytes) -> tuple[list[EpisodeRecord], TrackRecord]:
    """Read a key's continuations and track record; anything this version cannot replay raises RecordError."""
    try:
        document = json.loads(value)
        if document["format"] != RECORD_FORMAT:
            raise RecordError(f"record format {document['format']}, expected {RECORD_FORMAT}")
        continuations = document["continuations"]
        completed, diverged = (int(n) for n in document.get("replays", (0, 0)))
    except RecordError:
        raise
    except (ValueError, KeyError, TypeError) as problem:
        raise NotARecord(f"{type(problem).__name__}: {problem}") from None
    return [EpisodeRecord.from_document(c) for c in continuations], TrackRecord(completed, diverged)


def decode_continuations(value: bytes) -> list[EpisodeRecord]:
    """Read a key's continuations (see decode_value)."""
    return decode_value(value)[0]


def add_continuation(value: bytes | None, record: EpisodeRecord) -> bytes | None:
    """A key's value with ``record`` added (or, if it took a stored course, that course seen once more),
    or None if a better one is there or the key is full.

    A recording that lacked packets at its opening (``left_out``) is not added beside
    a plain-like one of the same situation (same opening, same joiners foreseen); a
    plain-like one replaces those of its situation that lacked some.
    """
    records, track = decode_value(value) if value is not None else ([], TrackRecord())
    alike = [r for r in records if r.situation() == record.situation()]
    if record.left_out and any(not r.left_out for r in alike):
        return None
    if not record.left_out:
        records = [r for r in records if not (r.left_out and r in alike)]
    same = next((i for i, r in enumerate(records) if record.same_course(r)), None)
    if same is not None:
        taken = records[same]
        digests = sorted(set(taken.draw_digests) | set(record.draw_digests))[:MAX_DRAW_DIGESTS]
        records[same] = replace(taken, seen=taken.seen + 1, draw_digests=tuple(digests))
        return encode_continuations(records, track)
    if len(records) >= MAX_CONTINUATIONS:
        return None
    return encode_continuations(records + [record], track)


def add_replays(value: bytes | None, completed: int, diverged: int) -> bytes | None:
    """A key's value with its track record advanced (a key never recorded gets one too:
    mirrors of a recording that never closed diverge under it)."""
    records, track = decode_value(value) if value is not None else ([], TrackRecord())
    return encode_continuations(records, track.plus(completed, diverged))
