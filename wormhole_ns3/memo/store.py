"""The memo store: episode outcomes by fingerprint, in an LMDB directory that runs share.

LMDB because the store is read on every episode of every run and written by
several runs at once: reads are memory-mapped and lock-free, a write is one ACID
transaction serialized across processes by LMDB's lock file, and a process killed
mid-write leaves the last committed state intact.

Faults degrade, never abort, and never lose the user's data:

* a value whose seal fails (or whose meta cannot be read) is never replayed: a
  lookup *quarantines* it (moves its exact bytes aside, see below), says so in one
  warning line, and answers a miss, so its episode is simulated;
* a store that cannot be trusted as a whole (another schema, a corrupt schema
  record, another key, a file that is not a store, an empty or truncated
  ``data.mdb``) is refused with a one-line error and never written into or
  re-created over;
* a write that does not fit (a full disk, the map at its limit) or a store whose
  pages turn out damaged stops the run's writes, in one warning line: the run goes
  on reading the store (or simulating) and stores nothing more.

Layout: three named databases in one LMDB environment (environment.py, which
checks a directory before it is trusted). ``info`` holds the sealed schema
record, the store-wide counters, the key check record of a keyed store and the
quarantine, ``values`` maps a key to its sealed (meta, value) record, ``hits``
maps a key to the number of times it was read. Records are sealed as seal.py
says, under the store's key if it has one, and laid out as entry.py says, the
quarantined ones too; nothing ever deletes a quarantined entry (``memo clear``
neither). Stores without a key are read and written exactly as before keys.

Export files are exchange.py's, compaction maintenance.py's. A process must open
a store once (LMDB forbids two environments on one file in a process) and use it
from one thread.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import lmdb

from wormhole_ns3.memo.entry import (
    QuarantinedEntry,
    encode_record,
    entry_problem,
    open_record,
    quarantine_record,
    read_quarantined,
    value_size,
)
from wormhole_ns3.memo.environment import (
    COUNTERS,
    DATABASES,
    KEY_CHECK,
    U64,
    Database,
    add,
    as_bytes,
    check_location,
    check_not_truncated,
    create_layout,
    get_u64,
    lmdb_reason,
    quarantine_values,
    read_schema,
    run_transaction,
    verify_layout,
)
from wormhole_ns3.memo.errors import CorruptEntry, MemoStoreDamaged, MemoStoreError, StoreFault
from wormhole_ns3.memo.exchange import read_export, write_export
from wormhole_ns3.memo.schema import check_key
from wormhole_ns3.memo.seal import FROM_ENVIRONMENT, HMAC_SHA256, SHA256, Sealer, read_memo_key

#: Address space reserved at first; doubled whenever a write does not fit.
DEFAULT_MAP_SIZE = 64 << 20
#: The map grows up to this; a write that does not fit then is not stored (the run goes on).
DEFAULT_MAX_MAP_SIZE = 1 << 40
#: Reads counted in memory before they are written; a killed process loses at most these.
DEFAULT_FLUSH_EVERY = 64
_T = TypeVar("_T")

#: What ``--memo`` names for a store of one run only (MemoStore.in_memory), as SQLite names one.
RUN_ONLY = ":memory:"


def default_memo_path() -> Path:
    """``$WORMHOLE_NS3_MEMO``, else ``~/.cache/wormhole-ns3/memo``."""
    configured = os.environ.get("WORMHOLE_NS3_MEMO")
    return Path(configured) if configured else Path.home() / ".cache" / "wormhole-ns3" / "memo"


@dataclass(frozen=True)
class StoreStats:
    """What a store holds and how it has been used."""

    path: Path
    entries: int
    hits: int
    misses: int
    bytes: int  #: sum of the stored values' sizes
    disk_bytes: int  #: size of the LMDB data file
    schema_version: int
    created_by: str  #: product version that created the store
    quarantined: int  #: entries set aside as corrupt (kept, never replayed)
    seal: str  #: SHA256, or HMAC_SHA256 for a store sealed with a key


@dataclass(frozen=True)
class StoreEntry:
    """One stored outcome, as listed and exported."""

    key: str  #: hex
    meta: dict
    hits: int
    size: int  #: bytes of the value


@dataclass(frozen=True)
class VerifyReport:
    """What ``verify`` found: every entry's seal and structure checked."""

    entries: int
    corrupt: list[tuple[str, str]]  #: (key hex, problem)
    quarantined: int  #: entries in the quarantine after the check
    moved: int  #: corrupt entries this check moved to the quarantine

    @property
    def intact(self) -> int:
        return self.entries - len(self.corrupt)


def _default_warn(line: str) -> None:
    print(f"wormhole-ns3: warning: {line}", file=sys.stderr, flush=True)


class MemoStore:
    """An open memo store. Use :meth:`open`; close it, or use it as a context manager."""

    def __init__(
        self,
        path: Path,
        env: lmdb.Environment,
        databases: dict[bytes, Database],
        flush_every: int,
        sealer: Sealer,
        max_map_size: int,
        warn: Callable[[str], None] | None,
    ) -> None:
        self.path = path
        self._env = env
        self._db = databases
        self._flush_every = flush_every
        self._sealer = sealer
        self._max_map_size = max_map_size
        self._warn = warn or _default_warn
        self._pending_hits: Counter[bytes] = Counter()
        self._pending_misses = 0
        self._closed = False
        #: the scratch folder of a run-only store (in_memory), removed on close
        self._scratch: Path | None = None
        #: False once a write did not fit or the pages were damaged: the run stores nothing more
        self.writable = True

    # -- opening ---------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path,
        create: bool = True,
        map_size: int = DEFAULT_MAP_SIZE,
        flush_every: int = DEFAULT_FLUSH_EVERY,
        key: bytes | None = FROM_ENVIRONMENT,
        max_map_size: int = DEFAULT_MAX_MAP_SIZE,
        warn: Callable[[str], None] | None = None,
        durable: bool = True,
    ) -> MemoStore:
        """Open the store at ``path``, creating it (and its parents) if ``create`` and absent.

        ``durable``: sync each write to disk (False: leave the pages to the OS, for a
        store nobody reads after the process).

        ``key``: the shared secret sealing the store's values (None: SHA-256 seals);
        by default the one in the file ``$WORMHOLE_NS3_MEMO_KEY`` names, if set.
        ``warn`` prints a warning line (default: on stderr).

        Raises MemoStoreError if the path is a file, a directory holding something
        else, an empty, corrupt or truncated LMDB file, a store of another schema,
        or a store sealed with another key (or with one when none is given, or
        without one when one is).
        """
        path = Path(path)
        if key is FROM_ENVIRONMENT:
            key = read_memo_key()
        check_location(path, create)
        path.mkdir(parents=True, exist_ok=True)
        try:
            # metasync=False: one fsync per write instead of two (3 ms, not 6, here); the
            # store stays consistent, and only a system crash may lose the last write.
            env = lmdb.open(str(path), map_size=min(map_size, max_map_size), max_dbs=len(DATABASES),
                            metasync=False, sync=durable)
        except lmdb.Error as error:
            raise MemoStoreError(f"{path}: not a readable LMDB store ({lmdb_reason(error)})") from None
        try:
            check_not_truncated(path, env)
            env.reader_check()  # free the read slots of killed processes
            store = cls(path, env, {}, flush_every, Sealer(key), max_map_size, warn)
            store._db = store._transaction(True, lambda txn: store._initialise_or_verify(txn, create))
            return store
        except BaseException:
            env.close()
            raise

    @classmethod
    def in_memory(cls, warn: Callable[[str], None] | None = None) -> MemoStore:
        """A store for one run: what ``wormhole-ns3 run --memo :memory:`` memoizes in.

        Training repeats its contention episodes within a run (every iteration,
        every layer), so a run gains from its own recordings; the store lives in a
        scratch folder (in ``/dev/shm`` where there is one), is never synced to
        disk, is unsealed, and is removed on close.
        """
        shm = Path("/dev/shm")
        scratch = Path(tempfile.mkdtemp(prefix="wormhole-ns3-memo-",
                                        dir=shm if shm.is_dir() and os.access(shm, os.W_OK) else None))
        try:
            store = cls.open(scratch / "memo", key=None, warn=warn, durable=False)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        store._scratch = scratch
        return store

    @property
    def run_only(self) -> bool:
        """True for a store made by :meth:`in_memory`: nothing of it outlives the run."""
        return self._scratch is not None

    def _initialise_or_verify(self, txn: lmdb.Transaction, create: bool) -> dict[bytes, Database]:
        """Write the schema record into an empty environment, or check the one there.

        One write transaction, so that two processes creating the same store at
        once agree on one record; verification raises before anything is written.
        """
        names = [bytes(name) for name, _ in txn.cursor()]
        if not names and not create:
            raise MemoStoreError(f"{self.path}: no memo store here (an empty LMDB environment)")
        if not names:
            return create_layout(self._env, txn, self._sealer)
        return verify_layout(self.path, self._env, txn, names, self._sealer)

    # -- entries ---------------------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        """The value stored under ``key``, or None; counts a hit or a miss.

        A stored value whose seal fails is never returned: it is quarantined (one
        warning line) and the lookup is a miss. So is an entry LMDB cannot read
        (and the store then takes no more writes).
        """
        check_key(key)
        value = None
        try:
            sealed = self._transaction(False, lambda txn: as_bytes(txn.get(key, db=self._db[b"values"])))
        except MemoStoreDamaged as damaged:
            self._stop_writing(f"entry {key.hex()} is unreadable ({damaged.problem}): its episode is simulated,"
                               " and this run stores nothing more")
            sealed = None
        if sealed is not None:
            try:
                value = open_record(self.path, self._sealer, key, sealed)[1]
            except CorruptEntry as corrupt:
                self._set_aside(key, corrupt.reason, lambda stored: stored == sealed)
        if value is None:
            self._pending_misses += 1
        else:
            self._pending_hits[key] += 1
        if self._pending_misses + self._pending_hits.total() >= self._flush_every:
            self.flush()
        return value

    def quarantine(self, key: bytes, reason: str, value: bytes | None = None) -> bool:
        """Set the entry under ``key`` aside (one warning line), e.g. a value no replay can read.

        With ``value``, only if the entry still holds that value (another process
        may have replaced it since it was read). Returns whether it was moved.
        """
        check_key(key)

        def still(stored: bytes) -> bool:
            if value is None:
                return True
            try:
                return open_record(self.path, self._sealer, key, stored)[1] == value
            except CorruptEntry:
                return True

        return self._set_aside(key, reason, still)

    def put(self, key: bytes, value: bytes, meta: dict) -> bool:
        """Store ``value`` under ``key`` unless the key is already there (the first writer wins).

        ``meta`` (JSON) says what the value is: listed and exported with it.
        Returns whether this call stored it (False, too, once the store takes no more writes).
        """
        check_key(key)
        sealed = self._sealer.seal(key, encode_record(meta, bytes(value)))

        def write(txn: lmdb.Transaction) -> bool:
            stored = txn.put(key, sealed, db=self._db[b"values"], overwrite=False)
            if stored:
                add(txn, self._db[b"info"], b"bytes", len(value))
            self._write_counts(txn)
            return stored

        stored = self._write(write, False)
        self._forget_counts()
        return stored

    def update(
        self, key: bytes, change: Callable[[bytes | None], bytes | None], meta: dict | None = None
    ) -> bool:
        """Replace the value under ``key`` by ``change(current value or None)``, in one transaction.

        Another process's update in between is seen, not lost: LMDB runs one
        write transaction at a time. ``change`` returning None leaves the entry
        as it is. ``meta`` None keeps the entry's meta. A current value whose
        seal fails is quarantined and ``change`` sees None. Returns whether a
        value was written.
        """
        check_key(key)
        set_aside: list[str] = []

        def write(txn: lmdb.Transaction) -> bool:
            set_aside.clear()
            sealed = as_bytes(txn.get(key, db=self._db[b"values"]))
            current_meta: dict = {}
            current: bytes | None = None
            if sealed is not None:
                try:
                    current_meta, current = open_record(self.path, self._sealer, key, sealed)
                except CorruptEntry as corrupt:
                    self._move_aside(txn, key, sealed, corrupt.reason)
                    set_aside.append(corrupt.reason)
            value = change(current)
            if value is None:
                return False
            record = encode_record(current_meta if meta is None else meta, bytes(value))
            txn.put(key, self._sealer.seal(key, record), db=self._db[b"values"])
            total = get_u64(txn, self._db[b"info"], b"bytes") + len(value) - len(current or b"")
            txn.put(b"bytes", U64.pack(max(total, 0)), db=self._db[b"info"])
            self._write_counts(txn)
            return True

        stored = self._write(write, False)
        for reason in set_aside:
            self._warn_quarantined(key, reason)
        self._forget_counts()
        return stored

    def flush(self) -> None:
        """Write the hit and miss counts read since the last flush."""
        if self._pending_misses or self._pending_hits:
            self._write(self._write_counts, None)
            self._forget_counts()

    def stats(self) -> StoreStats:
        """Counts as of now, this process's unflushed reads included (they are flushed first)."""
        self.flush()
        return self._transaction(False, self._stats)

    def entries(self) -> list[StoreEntry]:
        """Every entry, in key order; raises CorruptEntry at a corrupt one."""
        return [entry for entry, _ in self._entries_with_values()]

    def quarantined(self) -> list[QuarantinedEntry]:
        """The entries set aside, in the order of their quarantine keys."""

        def read(txn: lmdb.Transaction) -> list[QuarantinedEntry]:
            return [read_quarantined(raw) for raw in quarantine_values(txn, self._db[b"info"])]

        return self._transaction(False, read)

    def clear(self) -> StoreStats:
        """Remove every entry and reset the counters; returns what there was (the quarantine stays)."""
        self.flush()

        def drop(txn: lmdb.Transaction) -> StoreStats:
            before = self._stats(txn)
            txn.drop(self._db[b"values"], delete=False)
            txn.drop(self._db[b"hits"], delete=False)
            for counter in COUNTERS:
                txn.put(counter, U64.pack(0), db=self._db[b"info"])
            return before

        return self._transaction(True, drop)

    def verify(self, quarantine: bool = False) -> VerifyReport:
        """Check every entry's seal, meta and record structure (what a replay reads).

        With ``quarantine``, move the corrupt ones aside (their bytes kept).
        """
        self.flush()

        def read(txn: lmdb.Transaction) -> tuple[int, list[tuple[bytes, bytes, str]]]:
            count, corrupt = 0, []
            for stored_key, sealed in txn.cursor(db=self._db[b"values"]):
                key, sealed = bytes(stored_key), bytes(sealed)
                count += 1
                problem = entry_problem(self.path, self._sealer, key, sealed)
                if problem is not None:
                    corrupt.append((key, sealed, problem))
            return count, corrupt

        count, corrupt = self._transaction(False, read)
        moved = 0
        if quarantine:
            for key, sealed, problem in corrupt:

                def move(txn: lmdb.Transaction, key=key, sealed=sealed, problem=problem) -> bool:
                    if as_bytes(txn.get(key, db=self._db[b"values"])) != sealed:
                        return False
                    self._move_aside(txn, key, sealed, problem)
                    return True

                moved += self._transaction(True, move)
        return VerifyReport(count, [(k.hex(), p) for k, _, p in corrupt], len(self.quarantined()), moved)

    # -- portable copies -----------------------------------------------------

    def export(self, path: str | Path) -> int:
        """Write every entry to ``path`` as JSON lines (values in base64); returns how many.

        The first line says what wrote it (product and ns-3 versions, schema,
        user@host, when, the seal); the last one is a digest of all the others
        (HMAC-SHA256 under the store's key, if it has one). The file is written
        whole or not at all; its entry lines are the same for the same entries.
        """
        entries = [(entry.key, entry.meta, entry.hits, value) for entry, value in self._entries_with_values()]
        write_export(Path(path), entries, self._sealer)
        return len(entries)

    def import_file(self, path: str | Path) -> int:
        """Add the entries of an export file (existing keys are kept); returns how many were new.

        The whole file is checked before anything is written, in one transaction:
        its schema, its digest (under this store's key, if it has one) and every
        entry as a record a replay can read; a problem is one line, ``file:line: problem``.
        """
        records = [
            (key, self._sealer.seal(key, encode_record(meta, value)), len(value))
            for key, meta, value in read_export(Path(path), self._sealer)
        ]

        def write(txn: lmdb.Transaction) -> int:
            new = 0
            for key, sealed, size in records:
                if txn.put(key, sealed, db=self._db[b"values"], overwrite=False):
                    add(txn, self._db[b"info"], b"bytes", size)
                    new += 1
            return new

        return self._transaction(True, write)

    # -- life cycle ------------------------------------------------------------

    def close(self) -> None:
        """Flush the counts and close; a closed store cannot be used again."""
        if self._closed:
            return
        try:
            self.flush()
        finally:
            self._env.close()
            self._closed = True
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self) -> MemoStore:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- internals -------------------------------------------------------------

    def _stats(self, txn: lmdb.Transaction) -> StoreStats:
        info = self._db[b"info"]
        schema = read_schema(self.path, txn, info)
        return StoreStats(
            path=self.path,
            entries=txn.stat(self._db[b"values"])["entries"],
            hits=get_u64(txn, info, b"hits"),
            misses=get_u64(txn, info, b"misses"),
            bytes=get_u64(txn, info, b"bytes"),
            disk_bytes=(self.path / "data.mdb").stat().st_size,
            schema_version=schema["schema"],
            created_by=schema["created_by"],
            quarantined=sum(1 for _ in quarantine_values(txn, info)),
            seal=HMAC_SHA256 if txn.get(KEY_CHECK, db=info) is not None else SHA256,
        )

    def _entries_with_values(self) -> list[tuple[StoreEntry, bytes]]:
        self.flush()

        def read(txn: lmdb.Transaction) -> list[tuple[StoreEntry, bytes]]:
            listed = []
            for stored_key, sealed in txn.cursor(db=self._db[b"values"]):
                key = bytes(stored_key)
                meta, value = open_record(self.path, self._sealer, key, sealed)
                hits = get_u64(txn, self._db[b"hits"], key)
                listed.append((StoreEntry(key.hex(), meta, hits, len(value)), value))
            return listed

        return self._transaction(False, read)

    def _set_aside(self, key: bytes, reason: str, still: Callable[[bytes], bool]) -> bool:
        """Move the entry under ``key`` to the quarantine if ``still(its stored bytes)``; warn."""

        def move(txn: lmdb.Transaction) -> bool:
            stored = as_bytes(txn.get(key, db=self._db[b"values"]))
            if stored is None or not still(stored):
                return False
            self._move_aside(txn, key, stored, reason)
            return True

        writable = self.writable
        moved = self._write(move, False)
        if moved:
            self._warn_quarantined(key, reason)
        elif not (writable and self.writable):  # else replaced meanwhile by another process: nothing to set aside
            self._warn(f"{self.path}: entry {key.hex()} {reason}: left in place (the store takes no"
                       " writes), its episode is simulated")
        return moved

    def _warn_quarantined(self, key: bytes, reason: str) -> None:
        self._warn(f"{self.path}: entry {key.hex()} {reason}: quarantined, its episode is simulated")

    def _move_aside(self, txn: lmdb.Transaction, key: bytes, stored: bytes, reason: str) -> None:
        """In ``txn``: the entry's exact bytes into the quarantine, the entry and its hits out."""
        info, hits = self._db[b"info"], self._db[b"hits"]
        name, record = quarantine_record(key, stored, reason, get_u64(txn, hits, key))
        txn.put(name, record, db=info)
        txn.delete(key, db=self._db[b"values"])
        txn.delete(key, db=hits)
        total = get_u64(txn, info, b"bytes") - value_size(stored)
        txn.put(b"bytes", U64.pack(max(total, 0)), db=info)

    def _write_counts(self, txn: lmdb.Transaction) -> None:
        for key, count in self._pending_hits.items():
            if txn.get(key, db=self._db[b"values"]) is not None:  # not cleared meanwhile
                add(txn, self._db[b"hits"], key, count)
        add(txn, self._db[b"info"], b"hits", self._pending_hits.total())
        add(txn, self._db[b"info"], b"misses", self._pending_misses)

    def _forget_counts(self) -> None:
        self._pending_hits.clear()
        self._pending_misses = 0

    def _write(self, work: Callable[[lmdb.Transaction], _T], otherwise: _T) -> _T:
        """A write of the run's: one that does not fit stops the run's writes (one warning line)."""
        if not self.writable:
            return otherwise
        try:
            return self._transaction(True, work)
        except StoreFault as fault:
            self._stop_writing(f"{fault.problem}; this run goes on without storing")
        return otherwise

    def _stop_writing(self, problem: str) -> None:
        """Take no more writes in this run; warn with ``problem``, the store's path before it."""
        self.writable = False
        self._forget_counts()
        self._warn(f"{self.path}: {problem}")

    def _transaction(self, write: bool, work: Callable[[lmdb.Transaction], _T]) -> _T:
        """Run ``work`` in one transaction of this store's (environment.run_transaction)."""
        if self._closed:
            raise ValueError(f"memo store {self.path} is closed")
        return run_transaction(self.path, self._env, self._max_map_size, write, work)
