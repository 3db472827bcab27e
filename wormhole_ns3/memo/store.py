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

Layout: three named databases in one environment. ``info`` holds the sealed
schema record, the store-wide counters, the key check record of a keyed store and
the quarantine (``quarantine/...`` keys), ``values`` maps a key to its sealed
(meta, value) record, ``hits`` maps a key to the number of times it was read.
Records are sealed as seal.py says, under the store's key if it has one; the
schema record is always sealed with SHA-256, so that anyone can tell what the
directory is. Stores without a key are read and written exactly as before keys.

A quarantined entry is kept in ``info`` under ``quarantine/`` + SHA-256(key +
stored bytes): a header (key, reason, when, by whom, its hits) and the stored
bytes exactly as they were. Nothing ever deletes it (``memo clear`` neither).

Export files are exchange.py's, compaction maintenance.py's. A process must open
a store once (LMDB forbids two environments on one file in a process) and use it
from one thread.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import lmdb

from wormhole_ns3 import __version__
from wormhole_ns3.memo.errors import CorruptEntry, MemoStoreDamaged, MemoStoreError, MemoStoreFull
from wormhole_ns3.memo.exchange import read_export, write_export
from wormhole_ns3.memo.schema import EXPORT_KIND as EXPORT_KIND  # re-exported: what an export's first line says
from wormhole_ns3.memo.schema import SCHEMA_VERSION, STORE_KIND, check_key, now, record_problem, who
from wormhole_ns3.memo.seal import (
    DIGEST_SIZE,
    FROM_ENVIRONMENT,
    HMAC_SHA256,
    KEY_ENVIRONMENT,
    SHA256,
    Sealer,
    read_memo_key,
)

#: Address space reserved at first; doubled whenever a write does not fit.
DEFAULT_MAP_SIZE = 64 << 20
#: The map grows up to this; a write that does not fit then is not stored (the run goes on).
DEFAULT_MAX_MAP_SIZE = 1 << 40
#: Reads counted in memory before they are written; a killed process loses at most these.
DEFAULT_FLUSH_EVERY = 64

_DATABASES = (b"info", b"values", b"hits")
_SCHEMA = b"schema"
_KEY_CHECK = b"key-check"
_QUARANTINE = b"quarantine/"
_COUNTERS = (b"hits", b"misses", b"bytes")
#: Smaller than LMDB's two meta pages: no environment at all.
_MIN_DATA_FILE = 2 * 4096
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_T = TypeVar("_T")
#: The schema record is sealed without a key, always: anyone can tell what the store is.
_PLAIN = Sealer(None)

#: An open LMDB sub-database (the ``lmdb`` module keeps its type private).
Database = Any


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
class QuarantinedEntry:
    """An entry set aside: why, when, by whom, and its stored bytes exactly as they were."""

    key: str  #: hex
    reason: str
    when: str
    by: str
    hits: int
    stored: bytes


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
            env = lmdb.open(str(path), map_size=min(map_size, max_map_size), max_dbs=len(_DATABASES),
                            metasync=False, sync=durable)
        except lmdb.Error as error:
            raise MemoStoreError(f"{path}: not a readable LMDB store ({lmdb_reason(error)})") from None
        try:
            _check_not_truncated(path, env)
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
            databases = {name: self._env.open_db(name, txn=txn) for name in _DATABASES}
            schema = {
                "kind": STORE_KIND,
                "schema": SCHEMA_VERSION,
                "created_by": f"wormhole-ns3 {__version__}",
            }
            record = json.dumps(schema, sort_keys=True).encode()
            txn.put(_SCHEMA, _PLAIN.seal(_SCHEMA, record), db=databases[b"info"])
            for counter in _COUNTERS:
                txn.put(counter, _U64.pack(0), db=databases[b"info"])
            if self._sealer.key:
                txn.put(_KEY_CHECK, self._sealer.new_key_check(), db=databases[b"info"])
            return databases
        return _verify_layout(self.path, self._env, txn, names, self._sealer)

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
            sealed = self._transaction(False, lambda txn: _as_bytes(txn.get(key, db=self._db[b"values"])))
        except MemoStoreDamaged as error:
            problem = str(error).removeprefix(f"{self.path}: ")
            self._stop_writing(f"entry {key.hex()} is unreadable ({problem}): its episode is simulated,"
                               " and this run stores nothing more")
            sealed = None
        if sealed is not None:
            try:
                value = self._open_record(key, sealed)[1]
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
                return self._open_record(key, stored)[1] == value
            except CorruptEntry:
                return True

        return self._set_aside(key, reason, still)

    def put(self, key: bytes, value: bytes, meta: dict) -> bool:
        """Store ``value`` under ``key`` unless the key is already there (the first writer wins).

        ``meta`` (JSON) says what the value is: listed and exported with it.
        Returns whether this call stored it (False, too, once the store takes no more writes).
        """
        check_key(key)
        sealed = self._sealer.seal(key, _record(meta, bytes(value)))

        def write(txn: lmdb.Transaction) -> bool:
            stored = txn.put(key, sealed, db=self._db[b"values"], overwrite=False)
            if stored:
                _add(txn, self._db[b"info"], b"bytes", len(value))
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
            sealed = _as_bytes(txn.get(key, db=self._db[b"values"]))
            current_meta: dict = {}
            current: bytes | None = None
            if sealed is not None:
                try:
                    current_meta, current = self._open_record(key, sealed)
                except CorruptEntry as corrupt:
                    self._move_aside(txn, key, sealed, corrupt.reason)
                    set_aside.append(corrupt.reason)
            value = change(current)
            if value is None:
                return False
            record = _record(current_meta if meta is None else meta, bytes(value))
            txn.put(key, self._sealer.seal(key, record), db=self._db[b"values"])
            total = _get_u64(txn, self._db[b"info"], b"bytes") + len(value) - len(current or b"")
            txn.put(b"bytes", _U64.pack(max(total, 0)), db=self._db[b"info"])
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
            found = []
            cursor = txn.cursor(db=self._db[b"info"])
            if cursor.set_range(_QUARANTINE):
                for name, raw in cursor:
                    if not bytes(name).startswith(_QUARANTINE):
                        break
                    found.append(_read_quarantined(bytes(raw)))
            return found

        return self._transaction(False, read)

    def clear(self) -> StoreStats:
        """Remove every entry and reset the counters; returns what there was (the quarantine stays)."""
        self.flush()

        def drop(txn: lmdb.Transaction) -> StoreStats:
            before = self._stats(txn)
            txn.drop(self._db[b"values"], delete=False)
            txn.drop(self._db[b"hits"], delete=False)
            for counter in _COUNTERS:
                txn.put(counter, _U64.pack(0), db=self._db[b"info"])
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
                try:
                    problem = record_problem(self._open_record(key, sealed)[1])
                    if problem is not None:
                        problem = f"is {problem}"
                except CorruptEntry as error:
                    problem = error.reason
                if problem is not None:
                    corrupt.append((key, sealed, problem))
            return count, corrupt

        count, corrupt = self._transaction(False, read)
        moved = 0
        if quarantine:
            for key, sealed, problem in corrupt:

                def move(txn: lmdb.Transaction, key=key, sealed=sealed, problem=problem) -> bool:
                    if _as_bytes(txn.get(key, db=self._db[b"values"])) != sealed:
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
            (key, self._sealer.seal(key, _record(meta, value)), len(value))
            for key, meta, value in read_export(Path(path), self._sealer)
        ]

        def write(txn: lmdb.Transaction) -> int:
            new = 0
            for key, sealed, size in records:
                if txn.put(key, sealed, db=self._db[b"values"], overwrite=False):
                    _add(txn, self._db[b"info"], b"bytes", size)
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
        schema = _read_schema(self.path, txn, info)
        cursor = txn.cursor(db=info)
        quarantined = 0
        if cursor.set_range(_QUARANTINE):
            for name in cursor.iternext(values=False):
                if not bytes(name).startswith(_QUARANTINE):
                    break
                quarantined += 1
        return StoreStats(
            path=self.path,
            entries=txn.stat(self._db[b"values"])["entries"],
            hits=_get_u64(txn, info, b"hits"),
            misses=_get_u64(txn, info, b"misses"),
            bytes=_get_u64(txn, info, b"bytes"),
            disk_bytes=(self.path / "data.mdb").stat().st_size,
            schema_version=schema["schema"],
            created_by=schema["created_by"],
            quarantined=quarantined,
            seal=HMAC_SHA256 if txn.get(_KEY_CHECK, db=info) is not None else SHA256,
        )

    def _entries_with_values(self) -> list[tuple[StoreEntry, bytes]]:
        self.flush()

        def read(txn: lmdb.Transaction) -> list[tuple[StoreEntry, bytes]]:
            listed = []
            for stored_key, sealed in txn.cursor(db=self._db[b"values"]):
                key = bytes(stored_key)
                meta, value = self._open_record(key, sealed)
                hits = _get_u64(txn, self._db[b"hits"], key)
                listed.append((StoreEntry(key.hex(), meta, hits, len(value)), value))
            return listed

        return self._transaction(False, read)

    def _open_record(self, key: bytes | memoryview, sealed: bytes | memoryview) -> tuple[dict, bytes]:
        """The meta and value of a sealed record; CorruptEntry if its seal fails or its meta is unreadable."""
        key, sealed = bytes(key), bytes(sealed)
        payload = self._sealer.unseal(key, sealed)
        if payload is None:
            reason = "is corrupt (checksum mismatch)" if not self._sealer.key else \
                "is corrupt (seal mismatch: altered, or written without the store's key)"
            raise CorruptEntry(f"{self.path}: entry {key.hex()} {reason}; refusing to replay it", reason)
        try:
            (meta_size,) = _U32.unpack_from(payload)
            meta_end = _U32.size + meta_size
            if meta_end > len(payload):
                raise ValueError(f"a meta of {meta_size} bytes in a record of {len(payload)}")
            meta = json.loads(payload[_U32.size:meta_end])
            if not isinstance(meta, dict):
                raise ValueError("its meta is not a JSON object")
        except (struct.error, ValueError, RecursionError) as error:
            problem = "nested too deeply" if isinstance(error, RecursionError) else str(error)
            reason = f"is corrupt (unreadable meta: {problem})"
            raise CorruptEntry(f"{self.path}: entry {key.hex()} {reason}; refusing to replay it", reason) from None
        return meta, payload[meta_end:]

    def _set_aside(self, key: bytes, reason: str, still: Callable[[bytes], bool]) -> bool:
        """Move the entry under ``key`` to the quarantine if ``still(its stored bytes)``; warn."""

        def move(txn: lmdb.Transaction) -> bool:
            stored = _as_bytes(txn.get(key, db=self._db[b"values"]))
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
        header = {"key": key.hex(), "reason": reason, "when": now(), "by": who(),
                  "hits": _get_u64(txn, hits, key)}
        encoded = json.dumps(header, sort_keys=True).encode()
        name = _QUARANTINE + hashlib.sha256(_U32.pack(len(key)) + key + stored).digest()
        txn.put(name, _U32.pack(len(encoded)) + encoded + stored, db=info)
        txn.delete(key, db=self._db[b"values"])
        txn.delete(key, db=hits)
        total = _get_u64(txn, info, b"bytes") - _value_size(stored)
        txn.put(b"bytes", _U64.pack(max(total, 0)), db=info)

    def _write_counts(self, txn: lmdb.Transaction) -> None:
        for key, count in self._pending_hits.items():
            if txn.get(key, db=self._db[b"values"]) is not None:  # not cleared meanwhile
                _add(txn, self._db[b"hits"], key, count)
        _add(txn, self._db[b"info"], b"hits", self._pending_hits.total())
        _add(txn, self._db[b"info"], b"misses", self._pending_misses)

    def _forget_counts(self) -> None:
        self._pending_hits.clear()
        self._pending_misses = 0

    def _write(self, work: Callable[[lmdb.Transaction], _T], otherwise: _T) -> _T:
        """A write of the run's: one that does not fit stops the run's writes (one warning line)."""
        if not self.writable:
            return otherwise
        try:
            return self._transaction(True, work)
        except (MemoStoreFull, MemoStoreDamaged) as error:
            self._stop_writing(f"{error}; this run goes on without storing")
        return otherwise

    def _stop_writing(self, why: str) -> None:
        self.writable = False
        self._forget_counts()
        self._warn(why if why.startswith(str(self.path)) else f"{self.path}: {why}")

    def _transaction(self, write: bool, work: Callable[[lmdb.Transaction], _T]) -> _T:
        """Run ``work`` in one transaction, growing the map when it is full.

        A full map aborts the transaction; the map is doubled (up to the store's
        limit) and the whole transaction rerun. A map grown by another process is
        adopted. Raises MemoStoreFull for a write that does not fit,
        MemoStoreDamaged for pages LMDB cannot read.
        """
        if self._closed:
            raise ValueError(f"memo store {self.path} is closed")
        while True:
            try:
                with self._env.begin(write=write) as txn:
                    return work(txn)
            except lmdb.MapFullError:
                size = self._env.info()["map_size"]
                if size >= self._max_map_size:
                    raise MemoStoreFull(
                        f"{self.path}: the store's map is full at its limit ({size} bytes)"
                    ) from None
                try:
                    self._env.set_mapsize(min(size * 2, self._max_map_size))
                except lmdb.Error as error:
                    raise MemoStoreFull(f"{self.path}: cannot grow the store's map ({lmdb_reason(error)})") from None
            except lmdb.MapResizedError:
                self._env.set_mapsize(0)
            except (lmdb.DiskError, lmdb.MemoryError) as error:
                raise MemoStoreFull(f"{self.path}: cannot write the store ({lmdb_reason(error)})") from None
            except lmdb.Error as error:
                if _is_out_of_space(error):
                    raise MemoStoreFull(f"{self.path}: cannot write the store ({lmdb_reason(error)})") from None
                raise MemoStoreDamaged(f"{self.path}: the store is corrupt ({lmdb_reason(error)})") from None


def _verify_layout(
    path: Path, env: lmdb.Environment, txn: lmdb.Transaction, names: list[bytes], sealer: Sealer
) -> dict[bytes, Database]:
    """The databases of a non-empty environment, once it is a store of this schema under this key."""
    if sorted(names) != sorted(_DATABASES):
        listed = ", ".join(repr(n.decode(errors="replace")) for n in names[:5])
        raise MemoStoreError(f"{path}: not a wormhole-ns3 memo store (its LMDB holds {listed})")
    databases = {name: env.open_db(name, txn=txn, create=False) for name in _DATABASES}
    _read_schema(path, txn, databases[b"info"])
    check = _as_bytes(txn.get(_KEY_CHECK, db=databases[b"info"]))
    if check is None and sealer.key:
        raise MemoStoreError(
            f"{path}: the store is not sealed with a key (it was written without one); open it without"
            f" --memo-key and ${KEY_ENVIRONMENT}, or use another --memo path"
        )
    if check is not None and not sealer.key:
        raise MemoStoreError(
            f"{path}: the store is sealed with a key (HMAC-SHA256); give it with --memo-key KEYFILE"
            f" or ${KEY_ENVIRONMENT}"
        )
    if check is not None and not sealer.passes_key_check(check):
        raise MemoStoreError(f"{path}: the store is sealed with another key; refusing to use it")
    return databases


def _read_schema(path: Path, txn: lmdb.Transaction, info: Database) -> dict:
    sealed = txn.get(_SCHEMA, db=info)
    if sealed is None:
        raise MemoStoreError(f"{path}: not a wormhole-ns3 memo store (no schema record)")
    payload = _PLAIN.unseal(_SCHEMA, bytes(sealed))
    if payload is None:
        raise MemoStoreError(f"{path}: the schema record is corrupt (checksum mismatch); refusing to use the store")
    schema = json.loads(payload)  # intact, so written by some wormhole-ns3
    if schema.get("schema") != SCHEMA_VERSION:
        raise MemoStoreError(
            f"{path}: memo store of schema {schema.get('schema')} (created by"
            f" {schema.get('created_by')}); wormhole-ns3 {__version__} reads schema {SCHEMA_VERSION},"
            " use another --memo path"
        )
    return schema


def check_location(path: Path, create: bool) -> None:
    """Raise unless ``path`` holds an LMDB environment, or may become one.

    A directory holding only LMDB's lock file is one another process is creating
    right now; any other file without data.mdb is someone else's directory. An
    empty or too short data.mdb is a store that lost its data: refused, never
    re-created over (unless another process is creating it right now).
    """
    if path.is_dir():
        names = {entry.name for entry in path.iterdir()}
        if "data.mdb" in names:
            _check_data_file(path)
            return
        if names - {"lock.mdb"}:
            raise MemoStoreError(
                f"{path}: not a memo store (a directory without data.mdb); refusing to write into it"
            )
    elif path.exists():
        raise MemoStoreError(f"{path}: not a memo store (a file; a store is a directory)")
    if not create:
        raise MemoStoreError(f"{path}: no memo store here")


def _check_data_file(path: Path) -> None:
    """Refuse an empty or too short data.mdb, once no process is creating the store in it."""
    data = path / "data.mdb"
    size = data.stat().st_size
    if size >= _MIN_DATA_FILE:
        return
    # LMDB writes a new environment's first pages holding lock.mdb's byte 0 exclusively:
    # a shared lock on it waits for a creator to finish
    with contextlib.suppress(OSError):
        lock = os.open(path / "lock.mdb", os.O_RDWR)
        try:
            fcntl.lockf(lock, fcntl.LOCK_SH, 1, 0)
            size = data.stat().st_size
        finally:
            os.close(lock)
    if size == 0:
        raise MemoStoreError(
            f"{path}: data.mdb is empty (0 bytes): the store's data is gone; refusing to create a"
            " store over it (move it away, or use another --memo path)"
        )
    if size < _MIN_DATA_FILE:
        raise MemoStoreError(f"{path}: data.mdb is truncated ({size} bytes, shorter than LMDB's two meta pages)")


def _check_not_truncated(path: Path, env: lmdb.Environment) -> None:
    """A data file shorter than its last page would crash the process on first read (SIGBUS)."""
    needed = (env.info()["last_pgno"] + 1) * env.stat()["psize"]
    size = (path / "data.mdb").stat().st_size
    if size < needed:
        raise MemoStoreError(f"{path}: data.mdb is truncated ({size} bytes, its pages need {needed})")


def open_read_only(where: Path, path: Path, sealer: Sealer) -> tuple[lmdb.Environment, int]:
    """The LMDB environment at ``where``, read-only and unlocked, and its number of entries.

    For a copy of the store at ``path`` (or the store itself): checked as
    ``MemoStore.open`` checks a store under ``sealer``'s key, problems named after ``path``.
    """
    try:
        env = lmdb.open(str(where), readonly=True, lock=False, max_dbs=len(_DATABASES))
    except lmdb.Error as error:
        raise MemoStoreError(f"{where}: not a readable LMDB store ({lmdb_reason(error)})") from None
    try:
        _check_not_truncated(where, env)
        with env.begin() as txn:
            names = [bytes(name) for name, _ in txn.cursor()]
            if not names:
                raise MemoStoreError(f"{path}: no memo store here (an empty LMDB environment)")
            databases = _verify_layout(path, env, txn, names, sealer)
            return env, txn.stat(databases[b"values"])["entries"]
    except BaseException:
        env.close()
        raise


def _record(meta: dict, value: bytes) -> bytes:
    """The payload of a value record: meta size, meta JSON, value."""
    meta_json = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
    return _U32.pack(len(meta_json)) + meta_json + value


def _value_size(stored: bytes) -> int:
    """The value's size in a stored record, as far as it can be told (0 if not)."""
    payload = stored[DIGEST_SIZE:]
    if len(payload) < _U32.size:
        return 0
    (meta_size,) = _U32.unpack_from(payload)
    return max(len(payload) - _U32.size - meta_size, 0)


def _read_quarantined(raw: bytes) -> QuarantinedEntry:
    (size,) = _U32.unpack_from(raw)
    header = json.loads(raw[_U32.size:_U32.size + size])
    return QuarantinedEntry(header["key"], header["reason"], header["when"], header["by"], header["hits"],
                            raw[_U32.size + size:])


def _as_bytes(value: bytes | memoryview | None) -> bytes | None:
    return None if value is None else bytes(value)


def _get_u64(txn: lmdb.Transaction, db: Database, key: bytes) -> int:
    raw = txn.get(key, db=db)
    return _U64.unpack(raw)[0] if raw is not None else 0


def _add(txn: lmdb.Transaction, db: Database, key: bytes, amount: int) -> None:
    if amount:
        txn.put(key, _U64.pack(_get_u64(txn, db, key) + amount), db=db)


def lmdb_reason(error: lmdb.Error) -> str:
    return str(error).split(": ", 1)[-1].rstrip(".")


def _is_out_of_space(error: lmdb.Error) -> bool:
    text = str(error)
    return any(os.strerror(code) in text for code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.ENOMEM))
