"""The continuations stored for each key, read once per run, and how each key's replays went.

A key keeps several continuations (``record.py``): what joins an episode later
comes from the rest of the run. How a key's replays went is kept with it in the
store (``record.TrackRecord``): a key whose replays end in merges more than
rarely is simulated instead, because every resumed flow is close to, not
exactly, what a plain run does. Mirroring follows a recording no store has
vetted, so once this run's mirrors diverge more than rarely, episodes are
recorded rather than mirrored.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from wormhole_ns3.memo.decisions import (
    Distrusted,
    MemoDecision,
    MemoStats,
    MemoTrace,
    MirroringPaused,
    Recorded,
)
from wormhole_ns3.memo.record import (
    MIN_COMPLETED_PER_DIVERGENCE,
    EpisodeRecord,
    NotARecord,
    RecordError,
    TrackRecord,
    add_continuation,
    add_replays,
    decode_value,
)
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.memo.table import OpenEpisode

#: Episodes cheaper than this many events to simulate are not worth a store entry.
MIN_RECORDED_EVENTS = 500


class Continuations:
    """A key's stored continuations and track record, as this run reads, extends and judges them."""

    def __init__(self, store: MemoStore, stats: MemoStats, trace: MemoTrace) -> None:
        self.store = store
        self.stats = stats
        self.trace = trace
        #: True in a forked child checking a decision (accel/verify.py): nothing is written to
        #: the store (it belongs to the parent)
        self.inert = False
        self.relearn: set[bytes] = set()  #: keys whose replay diverged: record them again
        self._records: dict[bytes, list[EpisodeRecord]] = {}  #: continuations read this run
        self._tracks: dict[bytes, TrackRecord] = {}  #: track records read this run
        self.replays: dict[bytes, TrackRecord] = {}  #: this run's replays of each key, not yet stored
        #: how this run's mirrors went
        self.mirrors = TrackRecord()
        self._mirroring_stopped = False

    def replayed(self, key: bytes, completed: int, diverged: int) -> None:
        """A replay of ``key`` completed, or diverged in a merge."""
        self.replays[key] = self.replays.get(key, TrackRecord()).plus(completed, diverged)

    def mirrored(self, completed: int, diverged: int) -> None:
        """A mirror completed, or diverged."""
        self.mirrors = self.mirrors.plus(completed, diverged)

    def store_recording(self, now_ns: int, episode: OpenEpisode, record: EpisodeRecord) -> None:
        """Keep a closed recording as a continuation of its key, if it was worth simulating."""
        total = record.events + record.events_avoided
        if total < MIN_RECORDED_EVENTS or self.inert:
            return
        # one more recording of the key is what a diverged replay asked for: whether its
        # course is new or not, replays of the key resume (a context that does not
        # recur must not keep a key from being replayed for the rest of the run)
        self.relearn.discard(episode.key)
        meta = {"flows": len(episode.flows), "span_ns": record.close_ns, "events": total}
        seen = next((r.seen for r in self.of(episode.key) if record.same_course(r)), 0)
        if self.update(episode.key, lambda value: add_continuation(value, record), meta):
            self._records.pop(episode.key, None)
            if not seen:
                self.stats.recorded += 1
            self.trace.emit(MemoDecision.RECORDED, Recorded(episode.key, seen, len(episode.flows), total, record.draws),
                            now_ns, episode.id, tuple(episode.flows), span_ns=record.close_ns)

    def of(self, key: bytes) -> list[EpisodeRecord]:
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

    def track(self, key: bytes) -> TrackRecord:
        """The key's track record: the store's, plus this run's replays not stored yet."""
        self.of(key)
        run = self.replays.get(key, TrackRecord())
        return self._tracks[key].plus(run.completed, run.diverged)

    def trusted(self, now_ns: int, episode: OpenEpisode, order: list[int]) -> bool:
        """Whether the key's replays went well enough to replay (or mirror) it; says why not."""
        track = self.track(episode.key)
        if track.trusted():
            return True
        self.trace.emit(MemoDecision.DISTRUSTED,
                        Distrusted(episode.key, track.diverged, track.completed, MIN_COMPLETED_PER_DIVERGENCE),
                        now_ns, episode.id, tuple(order))
        return False

    def mirroring_trusted(self, now_ns: int, episode: OpenEpisode) -> bool:
        """Whether this run's mirrors went well enough to mirror another episode; says when not."""
        if self.mirrors.trusted():
            self._mirroring_stopped = False
            return True
        if not self._mirroring_stopped:
            self._mirroring_stopped = True
            self.trace.emit(MemoDecision.NO_MIRROR,
                            MirroringPaused(self.mirrors.diverged, self.mirrors.completed,
                                            MIN_COMPLETED_PER_DIVERGENCE),
                            now_ns, episode.id, ())
        return False

    def save_track_records(self) -> None:
        """Add this run's completed and diverged replays to their keys' track records in the store."""
        if self.inert:
            return
        replays, self.replays = self.replays, {}
        for key, run in sorted(replays.items()):
            self.update(key, partial(add_replays, completed=run.completed, diverged=run.diverged))
            if key in self._tracks:
                self._tracks[key] = self._tracks[key].plus(run.completed, run.diverged)

    def update(self, key: bytes, change: Callable[[bytes | None], bytes | None], meta: dict | None = None) -> bool:
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
    return f"is {problem}" if isinstance(problem, NotARecord) else f"is not a readable record ({problem})"
