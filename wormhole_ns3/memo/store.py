"""The memo store: episode outcomes by fingerprint, in an LMDB directory that runs share.

LMDB because the store is read on every episode of every run and written by
several runs at once: reads are memory-mapped and lock-free, a write is one ACID
transaction serialized across processes by LMDB's lock file, and a process killed
mid-write leaves the last committed state intact.

What a store refuses, and why: a value is replayed into a simulation as if it had
been simulated, so a value whose checksum fails, a store written under another
schema, or a file that is not a store must stop the run with a clear message
rather than be used or silently rebuilt. Nothing in this module ever writes into
a store it has not verified.

Layout: three named databases in one environment. ``info`` holds the sealed
schema record and the store-wide counters, ``values`` maps a key to its sealed
(meta, value) record, ``hits`` maps a key to the number of times it was read.
A *sealed* record is SHA-256(record name + payload) followed by the payload, so a
payload altered or moved under another key is detected.

A process must open a store once (LMDB forbids two environments on one file in a
process) and use it from one thread.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import lmdb

from wormhole_ns3 import __version__

#: Version of the layout above; a store of another version is refused.
SCHEMA_VERSION = 1
#: What the schema record says the directory is.
STORE_KIND = "wormhole-ns3 memo store"
#: First line of an export file.
EXPORT_KIND = "wormhole-ns3 memo export"
#: Address space reserved at first; doubled whenever a write does not fit.
DEFAULT_MAP_SIZE = 64 << 20
#: Reads counted in memory before they are written; a killed process loses at most these.
DEFAULT_FLUSH_EVERY = 64

_DATABASES = (b"info", b"values", b"hits")
_SCHEMA = b"schema"
_COUNTERS = (b"hits", b"misses", b"bytes")
_DIGEST_SIZE = 32
_U64 = struct.Struct("<Q")
_U32 = struct.Struct("<I")
_T = TypeVar("_T")

#: An open LMDB sub-database (the ``lmdb`` module keeps its type private).
Database = Any


class MemoStoreError(Exception):
    """A store that cannot be used, in one line naming its path and the problem."""


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


@dataclass(frozen=True)
class StoreEntry:
    """One stored outcome, as listed and exported."""

    key: str  #: hex
    meta: dict
    hits: int
    size: int  #: bytes of the value


class MemoStore:
    """An open memo store. Use :meth:`open`; close it, or use it as a context manager."""

    def __init__(
        self, path: Path, env: lmdb.Environment, databases: dict[bytes, Database], flush_every: int
    ) -> None:
        self.path = path
        self._env = env
        self._db = databases
        self._flush_every = flush_every
        self._pending_hits: Counter[bytes] = Counter()
        self._pending_misses = 0
        self._closed = False

    # -- opening ---------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path,
        create: bool = True,
        map_size: int = DEFAULT_MAP_SIZE,
        flush_every: int = DEFAULT_FLUSH_EVERY,
    ) -> MemoStore:
        """Open the store at ``path``, creating it (and its parents) if ``create`` and absent.

        Raises MemoStoreError if the path is a file, a directory holding something
        else, a corrupt or truncated LMDB file, or a store of another schema.
        """
        path = Path(path)
        _check_location(path, create)
        path.mkdir(parents=True, exist_ok=True)
        try:
            # metasync=False: one fsync per write instead of two (3 ms, not 6, here); the
            # store stays consistent, and only a system crash may lose the last write.
            env = lmdb.open(str(path), map_size=map_size, max_dbs=len(_DATABASES), metasync=False)
        except lmdb.Error as error:
            raise MemoStoreError(f"{path}: not a readable LMDB store ({_reason(error)})") from None
        try:
            _check_not_truncated(path, env)
            env.reader_check()  # free the read slots of killed processes
            store = cls(path, env, {}, flush_every)
            store._db = store._transaction(True, lambda txn: store._initialise_or_verify(txn, create))
            return store
        except BaseException:
            env.close()
            raise

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
            txn.put(_SCHEMA, _seal(_SCHEMA, record), db=databases[b"info"])
            for counter in _COUNTERS:
                txn.put(counter, _U64.pack(0), db=databases[b"info"])
            return databases
        if sorted(names) != sorted(_DATABASES):
            listed = ", ".join(repr(n.decode(errors="replace")) for n in names[:5])
            raise MemoStoreError(f"{self.path}: not a wormhole-ns3 memo store (its LMDB holds {listed})")
        databases = {name: self._env.open_db(name, txn=txn, create=False) for name in _DATABASES}
        self._schema(txn, databases[b"info"])
        return databases

    def _schema(self, txn: lmdb.Transaction, info: Database) -> dict:
        sealed = txn.get(_SCHEMA, db=info)
        if sealed is None:
            raise MemoStoreError(f"{self.path}: not a wormhole-ns3 memo store (no schema record)")
        payload = _unseal(_SCHEMA, bytes(sealed))
        if payload is None:
            raise MemoStoreError(
                f"{self.path}: the schema record is corrupt (checksum mismatch); refusing to use the store"
            )
        schema = json.loads(payload)  # intact, so written by some wormhole-ns3
        if schema.get("schema") != SCHEMA_VERSION:
            raise MemoStoreError(
                f"{self.path}: memo store of schema {schema.get('schema')} (created by"
                f" {schema.get('created_by')}); wormhole-ns3 {__version__} reads schema {SCHEMA_VERSION},"
                " use another --memo path"
            )
        return schema

    # -- entries ---------------------------------------------------------------

    def get(self, key: bytes) -> bytes | None:
        """The value stored under ``key``, or None; counts a hit or a miss.

        Raises MemoStoreError if the stored value fails its checksum: a corrupt
        outcome must never be replayed.
        """
        _check_key(key)
        sealed = self._transaction(False, lambda txn: txn.get(key, db=self._db[b"values"]))
        if sealed is None:
            self._pending_misses += 1
            value = None
        else:
            value = self._open_record(key, sealed)[1]
            self._pending_hits[key] += 1
        if self._pending_misses + self._pending_hits.total() >= self._flush_every:
            self.flush()
        return value

    def put(self, key: bytes, value: bytes, meta: dict) -> bool:
        """Store ``value`` under ``key`` unless the key is already there (the first writer wins).

        ``meta`` (JSON) says what the value is: listed and exported with it.
        Returns whether this call stored it.
        """
        _check_key(key)
        sealed = _seal(key, _record(meta, bytes(value)))

        def write(txn: lmdb.Transaction) -> bool:
            stored = txn.put(key, sealed, db=self._db[b"values"], overwrite=False)
            if stored:
                _add(txn, self._db[b"info"], b"bytes", len(value))
            self._write_counts(txn)
            return stored

        stored = self._transaction(True, write)
        self._forget_counts()
        return stored

    def update(
        self, key: bytes, change: Callable[[bytes | None], bytes | None], meta: dict | None = None
    ) -> bool:
        """Replace the value under ``key`` by ``change(current value or None)``, in one transaction.

        Another process's update in between is seen, not lost: LMDB runs one
        write transaction at a time. ``change`` returning None leaves the entry
        as it is. ``meta`` None keeps the entry's meta. Returns whether a value was written.
        """
        _check_key(key)

        def write(txn: lmdb.Transaction) -> bool:
            sealed = txn.get(key, db=self._db[b"values"])
            current_meta, current = self._open_record(key, sealed) if sealed is not None else ({}, None)
            value = change(current)
            if value is None:
                return False
            record = _record(current_meta if meta is None else meta, bytes(value))
            txn.put(key, _seal(key, record), db=self._db[b"values"])
            total = _get_u64(txn, self._db[b"info"], b"bytes") + len(value) - len(current or b"")
            txn.put(b"bytes", _U64.pack(max(total, 0)), db=self._db[b"info"])
            self._write_counts(txn)
            return True

        stored = self._transaction(True, write)
        self._forget_counts()
        return stored

    def flush(self) -> None:
        """Write the hit and miss counts read since the last flush."""
        if self._pending_misses or self._pending_hits:
            self._transaction(True, self._write_counts)
            self._forget_counts()

    def stats(self) -> StoreStats:
        """Counts as of now, this process's unflushed reads included (they are flushed first)."""
        self.flush()
        return self._transaction(False, self._stats)

    def entries(self) -> list[StoreEntry]:
        """Every entry, in key order; raises MemoStoreError at a corrupt one."""
        return [entry for entry, _ in self._entries_with_values()]

    def clear(self) -> StoreStats:
        """Remove every entry and reset the counters; returns what there was."""
        self.flush()

        def drop(txn: lmdb.Transaction) -> StoreStats:
            before = self._stats(txn)
            txn.drop(self._db[b"values"], delete=False)
            txn.drop(self._db[b"hits"], delete=False)
            for counter in _COUNTERS:
                txn.put(counter, _U64.pack(0), db=self._db[b"info"])
            return before

        return self._transaction(True, drop)

    # -- portable copies -----------------------------------------------------

    def export(self, path: str | Path) -> int:
        """Write every entry to ``path`` as JSON lines (values in base64); returns how many.

        The file is written whole or not at all, and is the same byte for byte
        for the same entries.
        """
        path = Path(path)
        entries = self._entries_with_values()
        partial = path.with_name(path.name + ".partial")
        try:
            with partial.open("w") as out:
                header = {"kind": EXPORT_KIND, "schema": SCHEMA_VERSION, "entries": len(entries)}
                out.write(json.dumps(header, sort_keys=True) + "\n")
                for entry, value in entries:
                    line = {
                        "key": entry.key,
                        "meta": entry.meta,
                        "hits": entry.hits,
                        "sha256": hashlib.sha256(value).hexdigest(),
                        "value": base64.b64encode(value).decode(),
                    }
                    out.write(json.dumps(line, sort_keys=True) + "\n")
            partial.replace(path)
        except OSError as error:
            raise MemoStoreError(f"{path}: cannot write the export ({error.strerror})") from None
        return len(entries)

    def import_file(self, path: str | Path) -> int:
        """Add the entries of an export file (existing keys are kept); returns how many were new.

        The whole file is checked before anything is written, in one transaction.
        """
        records = [(key, _seal(key, payload), size) for key, payload, size in _read_export(Path(path))]

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

    def __enter__(self) -> MemoStore:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- internals -------------------------------------------------------------

    def _stats(self, txn: lmdb.Transaction) -> StoreStats:
        info = self._db[b"info"]
        schema = self._schema(txn, info)
        return StoreStats(
            path=self.path,
            entries=txn.stat(self._db[b"values"])["entries"],
            hits=_get_u64(txn, info, b"hits"),
            misses=_get_u64(txn, info, b"misses"),
            bytes=_get_u64(txn, info, b"bytes"),
            disk_bytes=(self.path / "data.mdb").stat().st_size,
            schema_version=schema["schema"],
            created_by=schema["created_by"],
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
        """The meta and value of a sealed record (lmdb hands out bytes; its stubs allow memoryviews too)."""
        key, sealed = bytes(key), bytes(sealed)
        payload = _unseal(key, sealed)
        if payload is None:
            raise MemoStoreError(
                f"{self.path}: entry {key.hex()} is corrupt (checksum mismatch); refusing to replay it"
            )
        (meta_size,) = _U32.unpack_from(payload)
        meta_end = _U32.size + meta_size
        return json.loads(payload[_U32.size:meta_end]), payload[meta_end:]

    def _write_counts(self, txn: lmdb.Transaction) -> None:
        for key, count in self._pending_hits.items():
            if txn.get(key, db=self._db[b"values"]) is not None:  # not cleared meanwhile
                _add(txn, self._db[b"hits"], key, count)
        _add(txn, self._db[b"info"], b"hits", self._pending_hits.total())
        _add(txn, self._db[b"info"], b"misses", self._pending_misses)

    def _forget_counts(self) -> None:
        self._pending_hits.clear()
        self._pending_misses = 0

    def _transaction(self, write: bool, work: Callable[[lmdb.Transaction], _T]) -> _T:
        """Run ``work`` in one transaction, growing the map when it is full.

        A full map aborts the transaction; the map is doubled and the whole
        transaction rerun. A map grown by another process is adopted.
        """
        if self._closed:
            raise ValueError(f"memo store {self.path} is closed")
        while True:
            try:
                with self._env.begin(write=write) as txn:
                    return work(txn)
            except lmdb.MapFullError:
                self._env.set_mapsize(self._env.info()["map_size"] * 2)
            except lmdb.MapResizedError:
                self._env.set_mapsize(0)
            except lmdb.Error as error:
                raise MemoStoreError(f"{self.path}: the store is corrupt ({_reason(error)})") from None


def _check_location(path: Path, create: bool) -> None:
    """Raise unless ``path`` holds an LMDB environment, or may become one.

    A directory holding only LMDB's lock file is one another process is creating
    right now; any other file without data.mdb is someone else's directory.
    """
    if path.is_dir():
        names = {entry.name for entry in path.iterdir()}
        if "data.mdb" in names:
            return
        if names - {"lock.mdb"}:
            raise MemoStoreError(
                f"{path}: not a memo store (a directory without data.mdb); refusing to write into it"
            )
    elif path.exists():
        raise MemoStoreError(f"{path}: not a memo store (a file; a store is a directory)")
    if not create:
        raise MemoStoreError(f"{path}: no memo store here")


def _check_not_truncated(path: Path, env: lmdb.Environment) -> None:
    """A data file shorter than its last page would crash the process on first read (SIGBUS)."""
    needed = (env.info()["last_pgno"] + 1) * env.stat()["psize"]
    size = (path / "data.mdb").stat().st_size
    if size < needed:
        raise MemoStoreError(f"{path}: data.mdb is truncated ({size} bytes, its pages need {needed})")


def _check_key(key: bytes) -> None:
    if not isinstance(key, bytes) or not 0 < len(key) <= 511:
        raise ValueError(f"a memo key is 1 to 511 bytes, got {key!r:.40}")


def _record(meta: dict, value: bytes) -> bytes:
    """The payload of a value record: meta size, meta JSON, value."""
    meta_json = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
    return _U32.pack(len(meta_json)) + meta_json + value


def _seal(name: bytes, payload: bytes) -> bytes:
    return _digest(name, payload) + payload


def _unseal(name: bytes, sealed: bytes) -> bytes | None:
    """The payload, or None if it does not match its digest."""
    payload = sealed[_DIGEST_SIZE:]
    return payload if sealed[:_DIGEST_SIZE] == _digest(name, payload) else None


def _digest(name: bytes, payload: bytes) -> bytes:
    digest = hashlib.sha256(_U32.pack(len(name)) + name)
    digest.update(payload)
    return digest.digest()


def _get_u64(txn: lmdb.Transaction, db: Database, key: bytes) -> int:
    raw = txn.get(key, db=db)
    return _U64.unpack(raw)[0] if raw is not None else 0


def _add(txn: lmdb.Transaction, db: Database, key: bytes, amount: int) -> None:
    if amount:
        txn.put(key, _U64.pack(_get_u64(txn, db, key) + amount), db=db)


def _reason(error: lmdb.Error) -> str:
    return str(error).split(": ", 1)[-1].rstrip(".")


def _read_export(path: Path) -> list[tuple[bytes, bytes, int]]:
    """(key, record payload, value size) of every line of an export file; file:line errors."""
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise MemoStoreError(f"{path}: cannot read the export ({error})") from None
    try:
        header = json.loads(lines[0]) if lines else {}
    except ValueError:
        header = {}
    if header.get("kind") != EXPORT_KIND or header.get("schema") != SCHEMA_VERSION:
        raise MemoStoreError(f"{path}:1: not a schema-{SCHEMA_VERSION} wormhole-ns3 memo export")
    records = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            entry = json.loads(line)
            key = bytes.fromhex(entry["key"])
            _check_key(key)
            value = base64.b64decode(entry["value"], validate=True)
            payload = _record(entry["meta"], value)
            expected = entry["sha256"]
        except (ValueError, KeyError, TypeError) as error:
            raise MemoStoreError(f"{path}:{number}: malformed entry ({error})") from None
        if hashlib.sha256(value).hexdigest() != expected:
            raise MemoStoreError(f"{path}:{number}: value of {entry['key']} does not match its sha256")
        records.append((key, payload, len(value)))
    return records
