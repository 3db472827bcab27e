"""The transient memo (``--transient-memo``): a partition's transient, from a change of its flow set until it is steady.

The whole-episode memo (``episodes.py``) replays a contention episode from its
opening on idle links to its last byte; under continuous, overlapping traffic
the links are never idle, so an episode grows into the whole run and nothing
repeats. The Wormhole paper's unit is smaller: a partition's *transient*, from a
change of its flow set (a flow arrives or finishes) until its congestion control
converges. Its course is shaped by the contention graph at the change and the
state the flows and queues are in then, not by how the partition got there, so
the transients of a repeating pattern repeat while the links never go idle.

* **The key** (``transient_key``) is the contention graph at the change, in
  ``fingerprint.py``'s canonical form (flows and the links their data and ACK
  paths cross hop by hop, shared links as vertices), each flow coloured by its
  attributes (size, transport, congestion control and its parameters) and its
  congestion state *bucketed* (``FlowAtChange.bucket``: its window's rate as a
  share of its narrowest link, whether it is in slow start, DCTCP's alpha), each
  link by its attributes (rate, delay, queue discipline and its marking) and its
  queue bucketed; plus the versions and the accelerator's settings (the
  context). Buckets make repeats match: a flow's window at the instant of a
  change is wherever its sawtooth is, never twice the same number of bytes.
* **The value** (``TransientRecord``) is what the transient did, per flow in the
  key's canonical order: the bytes it delivered, its congestion state at
  convergence (what ``FlowTracker::SetTcpState`` restores), and the duration,
  the events it took, the random numbers it drew and the longest queue on its
  links at the change and at convergence.
* **Recording**: at a change with no record, the transient is simulated and
  recorded; it closes at the first steady verdict (``converged``). Another
  change before then abandons it, and says so in a row of its own
  (``abandoned``: after how long, by which flows joining or leaving, and what
  the steady judge last found in the way, if it judged it at all), for a
  transient that never converges between changes is never stored, and a run
  whose every lookup misses tells by these rows why nothing repeats.
* **Lookup** (``TransientMemo.changed``): a record is restored only if nothing
  else can change the partition within its duration (an unattributed event) or
  before its flows end (a flow due on its links, a workload's release: it would meet
  the phase of the congestion cycle the restore leaves, not plain ns-3's, as
  ``SkipEngine._newcomer_due`` says of a skip) (``TransientHost.next_change``), no
  flow is in slow start, every flow has more than the record's bytes left to send,
  and, under same-seed
  fidelity, the recorded transient drew no random number (a restore leaves out
  the draws its packets would make: doc/randomness.md).

Each lookup is one ``TransientLookup`` (typed facts) and a row of the skip
trace; the guard (``--verify``) re-simulates a fraction of the restores
packet by packet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from wormhole_ns3.core.draws import Fidelity
from wormhole_ns3.core.trace import TraceKind
from wormhole_ns3.core.vocabulary import Label
from wormhole_ns3.memo.fingerprint import Episode, FlowDescriptor, LinkDescriptor, fingerprint
from wormhole_ns3.memo.record import RecordError
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.memo.transient_record import (
    TRANSIENT_FORMAT,
    TRANSIENT_KIND,
    CcState,
    TransientRecord,
)

#: Store keys of transient records start with this: they never meet an episode's key.
KEY_PREFIX = b"transient/"

#: A flow's window rate (cwnd / srtt) is keyed in steps of this share of its narrowest link's
#: rate. Coarser steps match more changes, whose courses differ more; the guard measures it.
RATE_STEPS = 8
#: DCTCP's alpha is keyed in steps of 1/ALPHA_STEPS.
ALPHA_STEPS = 8
#: A restore needs each flow to have this share more than the recorded transient's bytes left, so
#: that it ends with real packets after the restore (a skip keeps a tail for the same reason).
RESERVE = 1 / 16
#: How far ahead a lookup asks for what is due: a flow of unknown size runs until then at least.
MAX_LOOKAHEAD_NS = 10**12
#: A link's queue at the change is keyed in steps of this many packets: a queue a
#: congestion control holds near its marking threshold wanders by tens of packets.
QUEUE_STEP_PACKETS = 64


class TransientDecision(Label):
    """What the transient memo decided at a change of a partition's flow set."""

    #: A record with its key: its state at convergence is restored, its duration skipped.
    HIT = "hit"
    #: No record with its key: the transient is simulated and recorded.
    MISS = "miss"
    #: A record, but it drew random numbers, which this run would draw otherwise (same-seed fidelity).
    REFUSED_DRAWS = "refused-draws"
    #: A record, but another change is due on its links within the record's duration.
    REFUSED_CHANGE_DUE = "refused-change-due"
    #: A record, but a flow would end (or run out of bytes to give up) within it.
    REFUSED_FLOW_ENDS = "refused-flow-ends"
    #: A record, but a flow is in slow start at the change (a new one): its window was never cut.
    REFUSED_SLOW_START = "refused-slow-start"
    #: A recording reached convergence and was stored.
    RECORDED = "recorded"
    #: A recording whose flow set changed before the steady judge found it steady: nothing stored.
    ABANDONED = "abandoned"

    @property
    def trace_kind(self) -> TraceKind:
        """The kind of the skip-trace row that reports it."""
        if self is TransientDecision.HIT:
            return TraceKind.TRANSIENT_HIT
        if self is TransientDecision.MISS:
            return TraceKind.TRANSIENT_MISS
        if self is TransientDecision.RECORDED:
            return TraceKind.TRANSIENT_RECORDED
        if self is TransientDecision.ABANDONED:
            return TraceKind.TRANSIENT_ABANDONED
        return TraceKind.TRANSIENT_REFUSED


@dataclass(frozen=True)
class FlowAtChange:
    """One flow of a partition at a change of its flow set: what keys it, and what it has left."""

    attributes: str  #: FlowTracker::GetFlowFingerprint: size, transport, CC and its parameters
    data_path: tuple[int, ...]
    ack_path: tuple[int, ...]
    state: CcState
    #: bytes/s of the narrowest link on its data path
    bottleneck: float
    #: bytes its sink still lacks (None: unlimited) and bytes its sender could still give up
    remaining: int | None
    sendable: int

    @property
    def bucket(self) -> str:
        """Its congestion state as the key sees it: window rate share, slow start, alpha, each in steps."""
        state = self.state
        if state.cwnd <= 0 or state.srtt <= 0:
            return "new"
        share = state.cwnd / (state.srtt * 1e-9) / self.bottleneck
        alpha = round(state.alpha * ALPHA_STEPS) if state.alpha >= 0 else -1
        slow_start = int(state.cwnd < state.ssthresh)
        return f"r{min(round(share * RATE_STEPS), 4 * RATE_STEPS)} s{slow_start} a{alpha}"


@dataclass(frozen=True)
class LinkAtChange:
    """One link a partition's flows cross, at the change."""

    attributes: str  #: FlowTracker::GetLinkFingerprint: rate, delay, queue discipline and marking
    queued: int  #: packets waiting on it


@dataclass(frozen=True)
class Change:
    """A partition as its flow set changed: the facts its key and its lookup decide on."""

    time_ns: int
    flows: Mapping[int, FlowAtChange]
    links: Mapping[int, LinkAtChange]


@dataclass(frozen=True)
class Progress:
    """How far a partition's flows are: delivered bytes, and its events and random draws so far."""

    delivered: Mapping[int, int]
    events: int
    draws: int


@dataclass(frozen=True)
class Convergence:
    """A partition the steady judge found steady: each flow's congestion state and the longest queue."""

    states: Mapping[int, CcState]
    queued: int


@dataclass(frozen=True)
class TransientKey:
    """A change's key and its flows in canonical order (``record.delivered[i]`` is ``order[i]``'s)."""

    key: bytes
    order: tuple[int, ...]

    @property
    def hex(self) -> str:
        """The key's digest in hex, as the trace names it."""
        return self.key.removeprefix(KEY_PREFIX).hex()


def transient_key(change: Change, context: str) -> TransientKey:
    """The canonical key of a change: its contention graph, bucketed states, link attributes, the context."""
    flows = {
        f: FlowDescriptor(attributes=f"{a.attributes}|{a.bucket}", offset_ns=0,
                          data_path=a.data_path, ack_path=a.ack_path)
        for f, a in change.flows.items()
    }
    links = {
        link: LinkDescriptor(attributes=a.attributes, queued=a.queued // QUEUE_STEP_PACKETS)
        for link, a in change.links.items()
    }
    canonical = fingerprint(Episode(flows=flows, links=links,
                                    context=f"{context}; transient format {TRANSIENT_FORMAT}"))
    digest = hashlib.sha256(KEY_PREFIX + canonical.key).digest()
    return TransientKey(key=KEY_PREFIX + digest, order=canonical.order)


@dataclass(frozen=True)
class Restore:
    """What a hit restores: each flow's bytes and congestion state, over the record's duration."""

    key: TransientKey
    duration_ns: int
    credits: Mapping[int, int]
    states: Mapping[int, CcState]
    events: int
    #: random numbers its recording drew (0 under same-seed fidelity)
    draws: int
    queued_at_change: int
    queued_at_convergence: int

    def why(self) -> str:
        """The trace row's reason: what was restored and why it was safe."""
        return (f"transient {self.key.hex[:12]} restored: {len(self.credits)} flows credited "
                f"{sum(self.credits.values())} bytes over {self.duration_ns / 1e6:.3f} ms, their congestion state "
                f"set as recorded at convergence; no flow due on its links before its flows end, none in slow "
                f"start, every flow has more left; recorded queue {self.queued_at_change} -> "
                f"{self.queued_at_convergence} packets")


@dataclass(frozen=True)
class TransientLookup:
    """One decision of the transient memo: a lookup at a change, or a recording stored."""

    time_ns: int
    flows: tuple[int, ...]
    decision: TransientDecision
    key: str
    #: the recorded duration (a hit, a refusal, a recording), ns; 0 on a miss
    duration_ns: int = 0
    #: events the transient took when recorded (a hit avoids about as many)
    events: int = 0
    #: what refused it, or what it restored, in words
    detail: str = ""


class TransientHost(Protocol):
    """What the transient memo asks of the run (``accel/transients.py``; the tests' fake)."""

    @property
    def fidelity(self) -> Fidelity: ...
    def now_ns(self) -> int: ...
    def change(self, flows: frozenset[int]) -> Change | None: ...  # None: not a partition the memo takes
    def progress(self, flows: frozenset[int]) -> Progress: ...
    #: what is due that would meet the partition: an arrival before its flows end, an outside event within it
    def next_change(self, flows: frozenset[int], restore_end_ns: int, flows_end_ns: int) -> str | None: ...
    def converged(self, flows: frozenset[int]) -> Convergence | None: ...  # judged steady since its change
    #: why the steady judge last found it unsteady since its change (None: not judged since)
    def unsteady(self, flows: frozenset[int]) -> str | None: ...
    def restore(self, flows: frozenset[int], restore: Restore) -> None: ...


@dataclass
class Recording:
    """A transient being simulated, to be stored once it converges."""

    key: TransientKey
    change: Change
    start: Progress
    #: why the steady judge last found it unsteady (None: not judged yet), for its row if it is abandoned
    unsteady: str | None = None


@dataclass
class TransientMemo:
    """The transient memo's decisions: at each change a lookup, and the recordings until they converge."""

    host: TransientHost
    store: MemoStore
    context: str
    #: Every decision, in the order made.
    lookups: list[TransientLookup] = field(default_factory=list)
    #: The transients being recorded, by their partition's flows.
    recordings: dict[frozenset[int], Recording] = field(default_factory=dict)

    def changed(self, flows: frozenset[int]) -> TransientDecision | None:
        """A partition's flow set changed to ``flows``: restore its transient, or record it (None: not taken)."""
        for other in [r for r in self.recordings if r & flows]:
            self._abandon(other, flows)  # its flow set changed before it converged
        change = self.host.change(flows)
        if change is None:
            return None
        key = transient_key(change, self.context)
        record = self._lookup(key)
        if record is None:
            self.recordings[flows] = Recording(key, change, self.host.progress(flows))
            return self._decided(change, flows, TransientDecision.MISS, key,
                                 detail=f"simulated and recorded; keyed {_keyed(change, key)}")
        decision, detail = self._refusal(change, flows, record, key)
        if decision is not None:
            return self._decided(change, flows, decision, key, record, detail)
        restore = Restore(
            key=key, duration_ns=record.duration_ns,
            credits={f: record.delivered[i] for i, f in enumerate(key.order)},
            states={f: record.states[i] for i, f in enumerate(key.order)},
            events=record.events, draws=record.draws, queued_at_change=record.queued_at_change,
            queued_at_convergence=record.queued_at_convergence,
        )
        self.host.restore(flows, restore)
        return self._decided(change, flows, TransientDecision.HIT, key, record, restore.why())

    def sampled(self) -> None:
        """After a sample: store the recordings whose partitions the steady judge found steady."""
        for flows, recording in list(self.recordings.items()):
            converged = self.host.converged(flows)
            if converged is None:
                recording.unsteady = self.host.unsteady(flows) or recording.unsteady
                continue
            del self.recordings[flows]
            now = self.host.progress(flows)
            record = TransientRecord(
                duration_ns=self.host.now_ns() - recording.change.time_ns,
                delivered=tuple(now.delivered[f] - recording.start.delivered[f] for f in recording.key.order),
                states=tuple(converged.states[f] for f in recording.key.order),
                events=now.events - recording.start.events,
                draws=now.draws - recording.start.draws,
                queued_at_change=max((a.queued for a in recording.change.links.values()), default=0),
                queued_at_convergence=converged.queued,
            )
            if record.duration_ns <= 0:
                continue
            self.store.put(recording.key.key, record.encode(), {"kind": TRANSIENT_KIND, "flows": len(flows),
                                                                "format": TRANSIENT_FORMAT})
            self.lookups.append(TransientLookup(
                time_ns=self.host.now_ns(), flows=tuple(sorted(flows)), decision=TransientDecision.RECORDED,
                key=recording.key.hex, duration_ns=record.duration_ns, events=record.events,
                detail=(f"converged after {record.duration_ns / 1e6:.3f} ms and {record.events} events, "
                        f"{record.draws} random draws"),
            ))

    def ended(self, flows: frozenset[int]) -> None:
        """The partition of ``flows`` is gone and no other holds any of them (they finished): drop its recording."""
        if flows in self.recordings:
            self._abandon(flows, frozenset())

    def _abandon(self, flows: frozenset[int], now: frozenset[int]) -> None:
        """Drop the recording of ``flows``, whose partition changed to ``now`` before it converged: a row says why."""
        recording = self.recordings.pop(flows)
        time_ns = self.host.now_ns()
        left, joined = sorted(flows - now), sorted(now - flows)
        judged = (f"last judged unsteady: {recording.unsteady}" if recording.unsteady is not None
                  else "never judged since")
        self.lookups.append(TransientLookup(
            time_ns=time_ns, flows=tuple(sorted(flows)), decision=TransientDecision.ABANDONED,
            key=recording.key.hex, duration_ns=time_ns - recording.change.time_ns,
            detail=(f"its flow set changed {(time_ns - recording.change.time_ns) / 1e6:.3f} ms after the change it "
                    f"was keyed at, before the steady judge found it steady ({judged}; {len(left)} left: "
                    f"{_few(left)}; {len(joined)} joined: {_few(joined)}): nothing stored"),
        ))

    def _lookup(self, key: TransientKey) -> TransientRecord | None:
        value = self.store.get(key.key)
        if value is None:
            return None
        try:
            record = TransientRecord.decode(value)
        except RecordError as problem:
            self.store.quarantine(key.key, str(problem), value)
            return None
        return record if len(record.delivered) == len(key.order) else None

    def _refusal(self, change: Change, flows: frozenset[int], record: TransientRecord,
                 key: TransientKey) -> tuple[TransientDecision | None, str]:
        """Why a record may not stand in for this change (None: it may), in words."""
        if record.draws and self.host.fidelity is Fidelity.SAME_SEED:
            return TransientDecision.REFUSED_DRAWS, (
                f"its recording drew {record.draws} random numbers, which this run would draw otherwise")
        starting = [f for f in key.order if change.flows[f].state.cwnd < change.flows[f].state.ssthresh]
        if starting:
            return TransientDecision.REFUSED_SLOW_START, (
                f"flow {starting[0]} is in slow start: a restore sets windows and credits bytes only of flows "
                f"whose windows a congestion signal has cut, as a skip does")
        last_end = float(change.time_ns + record.duration_ns)
        for i, f in enumerate(key.order):
            flow = change.flows[f]
            needs = record.delivered[i]
            # a reserve beyond it: the flow ends with real packets, after the restore
            if (flow.remaining is not None and flow.remaining <= needs * (1 + RESERVE)) or flow.sendable < needs:
                return TransientDecision.REFUSED_FLOW_ENDS, (
                    f"flow {f} has {flow.remaining} bytes left ({flow.sendable} to give up), the transient "
                    f"delivers {needs}: it would end within it or soon after")
            # its end at the transient's mean rate: none for a flow of unknown size
            rate = needs / record.duration_ns
            end = (change.time_ns + record.duration_ns + (flow.remaining - needs) / rate
                   if flow.remaining is not None and rate > 0 else float("inf"))
            last_end = max(last_end, end)
        due = self.host.next_change(flows, change.time_ns + record.duration_ns,
                                    int(min(last_end, change.time_ns + MAX_LOOKAHEAD_NS)))
        if due is not None:
            return TransientDecision.REFUSED_CHANGE_DUE, (
                f"{due}, before its flows end (at about {last_end * 1e-9:.6f} s): it would meet the phase a "
                f"restore leaves, not the one plain ns-3 reaches")
        return None, ""

    def _decided(self, change: Change, flows: frozenset[int], decision: TransientDecision, key: TransientKey,
                 record: TransientRecord | None = None, detail: str = "") -> TransientDecision:
        self.lookups.append(TransientLookup(
            time_ns=change.time_ns, flows=tuple(sorted(flows)), decision=decision, key=key.hex,
            duration_ns=record.duration_ns if record is not None else 0,
            events=record.events if record is not None else 0, detail=detail,
        ))
        return decision

    def counts(self) -> dict[str, int]:
        """How many decisions of each kind (run.json's ``transient_memo``)."""
        counts = {d.value: 0 for d in TransientDecision}
        for lookup in self.lookups:
            counts[lookup.decision.value] += 1
        return counts


def _few(flows: list[int]) -> str:
    """Up to four flow ids, and how many more: an abandoned recording's words."""
    shown = " ".join(str(f) for f in flows[:4])
    return f"{shown} and {len(flows) - 4} more" if len(flows) > 4 else shown or "none"


def _keyed(change: Change, key: TransientKey) -> str:
    """The bucketed states a key holds, in its canonical order, and the longest queue's step: a miss's words."""
    buckets = ", ".join(f"flow {f} {change.flows[f].bucket}" for f in key.order)
    queued = max((a.queued for a in change.links.values()), default=0)
    return f"{buckets}; queue step {queued // QUEUE_STEP_PACKETS} ({queued} packets)"
