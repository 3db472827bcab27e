"""A transient memo's stored value (``transient.py``): what one transient did, as the store keeps it.

Apart from ``transient.py`` so that the store's checks (``schema.py``) read it
without the memo's decisions, which use the store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from wormhole_ns3.memo.record import TCP_FIELDS, RecordError

#: What a stored transient record says it is (its JSON ``kind``), beside the episode records.
TRANSIENT_KIND = "transient"
#: Changes whenever the record layout, the key or what a restore assumes changes.
TRANSIENT_FORMAT = 1


@dataclass(frozen=True)
class CcState:
    """A TCP sender's congestion state (``TcpFlowState``): bytes, DCTCP's alpha (-1: none), ns."""

    cwnd: float
    ssthresh: float
    alpha: float
    srtt: int
    rttvar: int
    rto: int

    def as_list(self) -> list[float]:
        return [self.cwnd, self.ssthresh, self.alpha, self.srtt, self.rttvar, self.rto]

    @classmethod
    def from_list(cls, values: Iterable[float]) -> CcState:
        cwnd, ssthresh, alpha, srtt, rttvar, rto = values
        return cls(float(cwnd), float(ssthresh), float(alpha), int(srtt), int(rttvar), int(rto))


@dataclass(frozen=True)
class TransientRecord:
    """What one transient did, per flow in the key's canonical order."""

    duration_ns: int
    delivered: tuple[int, ...]
    states: tuple[CcState, ...]
    events: int
    draws: int
    queued_at_change: int
    queued_at_convergence: int

    def encode(self) -> bytes:
        return json.dumps({
            "kind": TRANSIENT_KIND, "format": TRANSIENT_FORMAT, "duration_ns": self.duration_ns,
            "delivered": list(self.delivered), "states": [s.as_list() for s in self.states],
            "state_fields": list(TCP_FIELDS), "events": self.events, "draws": self.draws,
            "queued": [self.queued_at_change, self.queued_at_convergence],
        }, sort_keys=True, separators=(",", ":")).encode()

    @classmethod
    def decode(cls, value: bytes) -> TransientRecord:
        """The record a value holds; RecordError if it is none this version can restore."""
        try:
            document = json.loads(value)
            if document.get("kind") != TRANSIENT_KIND:
                raise RecordError("not a transient record")
            if document["format"] != TRANSIENT_FORMAT:
                raise RecordError(f"transient record format {document['format']}, expected {TRANSIENT_FORMAT}")
            record = cls(
                duration_ns=int(document["duration_ns"]),
                delivered=tuple(int(b) for b in document["delivered"]),
                states=tuple(CcState.from_list(s) for s in document["states"]),
                events=int(document["events"]), draws=int(document["draws"]),
                queued_at_change=int(document["queued"][0]), queued_at_convergence=int(document["queued"][1]),
            )
        except RecordError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError) as problem:
            raise RecordError(f"not a transient record ({type(problem).__name__}: {problem})") from None
        if (record.duration_ns <= 0 or len(record.delivered) != len(record.states)
                or min(record.delivered, default=0) < 0):
            raise RecordError("not a transient record (inconsistent fields)")
        return record


def is_transient_value(value: bytes) -> bool:
    """Whether a stored value is a transient record (not an episode's continuations), by its own word."""
    try:
        document = json.loads(value)
    except ValueError:
        return False
    return isinstance(document, dict) and document.get("kind") == TRANSIENT_KIND
