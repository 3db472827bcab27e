"""The LMDB environment under a memo store: its layout, its schema record, and the checks before it is trusted.

A store is a directory holding one LMDB environment of three named databases
(see store.py). Before anything is written into a directory it is checked here:
that it is (or may become) an environment, that its data file is not empty or
truncated (a truncated one would crash the process on its first read), that its
databases are a store's, its schema record intact and of this version, and that
it is sealed with the key it is opened under. Compaction (maintenance.py) opens
copies of a store through the same checks.

A transaction runs here too, because what LMDB raises is what the store's
faults are made of: a full map is grown and the transaction rerun, a write that
cannot fit is ``MemoStoreFull``, pages LMDB cannot read are ``MemoStoreDamaged``.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import struct
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import lmdb

from wormhole_ns3 import __version__
from wormhole_ns3.memo.errors import MemoStoreDamaged, MemoStoreError, MemoStoreFull
from wormhole_ns3.memo.schema import SCHEMA_VERSION, STORE_KIND
from wormhole_ns3.memo.seal import KEY_ENVIRONMENT, Sealer

DATABASES = (b"info", b"values", b"hits")
#: Keys in ``info``: the schema record, the key check of a keyed store, the quarantine's prefix.
SCHEMA = b"schema"
KEY_CHECK = b"key-check"
QUARANTINE = b"quarantine/"
#: The store-wide counters, in ``info``.
COUNTERS = (b"hits", b"misses", b"bytes")
#: Smaller than LMDB's two meta pages: no environment at all.
_MIN_DATA_FILE = 2 * 4096
U64 = struct.Struct("<Q")
_T = TypeVar("_T")
#: The schema record is sealed without a key, always: anyone can tell what the store is.
PLAIN = Sealer(None)

#: An open LMDB sub-database (the ``lmdb`` module keeps its type private).
Database = Any


def create_layout(env: lmdb.Environment, txn: lmdb.Transaction, sealer: Sealer) -> dict[bytes, Database]:
    """In ``txn`` on an empty environment: the databases, the schema record, the counters and key check."""
    databases = {name: env.open_db(name, txn=txn) for name in DATABASES}
    schema = {
        "kind": STORE_KIND,
        "schema": SCHEMA_VERSION,
        "created_by": f"wormhole-ns3 {__version__}",
    }
    record = json.dumps(schema, sort_keys=True).encode()
    txn.put(SCHEMA, PLAIN.seal(SCHEMA, record), db=databases[b"info"])
    for counter in COUNTERS:
        txn.put(counter, U64.pack(0), db=databases[b"info"])
    if sealer.key:
        txn.put(KEY_CHECK, sealer.new_key_check(), db=databases[b"info"])
    return databases


def verify_layout(
    path: Path, env: lmdb.Environment, txn: lmdb.Transaction, names: list[bytes], sealer: Sealer
) -> dict[bytes, Database]:
    """The databases of a non-empty environment, once it is a store of this schema under this key."""
    if sorted(names) != sorted(DATABASES):
        listed = ", ".join(repr(n.decode(errors="replace")) for n in names[:5])
        raise MemoStoreError(f"{path}: not a wormhole-ns3 memo store (its LMDB holds {listed})")
    databases = {name: env.open_db(name, txn=txn, create=False) for name in DATABASES}
    read_schema(path, txn, databases[b"info"])
    check = as_bytes(txn.get(KEY_CHECK, db=databases[b"info"]))
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


def read_schema(path: Path, txn: lmdb.Transaction, info: Database) -> dict:
    """The store's schema record, once it is intact and of this version."""
    sealed = txn.get(SCHEMA, db=info)
    if sealed is None:
        raise MemoStoreError(f"{path}: not a wormhole-ns3 memo store (no schema record)")
    payload = PLAIN.unseal(SCHEMA, bytes(sealed))
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


def check_not_truncated(path: Path, env: lmdb.Environment) -> None:
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
        env = lmdb.open(str(where), readonly=True, lock=False, max_dbs=len(DATABASES))
    except lmdb.Error as error:
        raise MemoStoreError(f"{where}: not a readable LMDB store ({lmdb_reason(error)})") from None
    try:
        check_not_truncated(where, env)
        with env.begin() as txn:
            names = [bytes(name) for name, _ in txn.cursor()]
            if not names:
                raise MemoStoreError(f"{path}: no memo store here (an empty LMDB environment)")
            databases = verify_layout(path, env, txn, names, sealer)
            return env, txn.stat(databases[b"values"])["entries"]
    except BaseException:
        env.close()
        raise


def run_transaction(
    path: Path, env: lmdb.Environment, max_map_size: int, write: bool, work: Callable[[lmdb.Transaction], _T]
) -> _T:
    """Run ``work`` in one transaction, growing the map when it is full.

    A full map aborts the transaction; the map is doubled (up to
    ``max_map_size``) and the whole transaction rerun. A map grown by another
    process is adopted. Raises MemoStoreFull for a write that does not fit,
    MemoStoreDamaged for pages LMDB cannot read.
    """
    while True:
        try:
            with env.begin(write=write) as txn:
                return work(txn)
        except lmdb.MapFullError:
            size = env.info()["map_size"]
            if size >= max_map_size:
                raise MemoStoreFull(path, f"the store's map is full at its limit ({size} bytes)") from None
            try:
                env.set_mapsize(min(size * 2, max_map_size))
            except lmdb.Error as error:
                raise MemoStoreFull(path, f"cannot grow the store's map ({lmdb_reason(error)})") from None
        except lmdb.MapResizedError:
            env.set_mapsize(0)
        except (lmdb.DiskError, lmdb.MemoryError) as error:
            raise MemoStoreFull(path, f"cannot write the store ({lmdb_reason(error)})") from None
        except lmdb.Error as error:
            if _is_out_of_space(error):
                raise MemoStoreFull(path, f"cannot write the store ({lmdb_reason(error)})") from None
            raise MemoStoreDamaged(path, f"the store is corrupt ({lmdb_reason(error)})") from None


def quarantine_values(txn: lmdb.Transaction, info: Database) -> Iterator[bytes]:
    """The stored bytes of the quarantined entries, in the order of their names (``quarantine/...``)."""
    cursor = txn.cursor(db=info)
    if cursor.set_range(QUARANTINE):
        for name, raw in cursor:
            if not bytes(name).startswith(QUARANTINE):
                return
            yield bytes(raw)


def as_bytes(value: bytes | memoryview | None) -> bytes | None:
    return None if value is None else bytes(value)


def get_u64(txn: lmdb.Transaction, db: Database, key: bytes) -> int:
    raw = txn.get(key, db=db)
    return U64.unpack(raw)[0] if raw is not None else 0


def add(txn: lmdb.Transaction, db: Database, key: bytes, amount: int) -> None:
    if amount:
        txn.put(key, U64.pack(get_u64(txn, db, key) + amount), db=db)


def lmdb_reason(error: lmdb.Error) -> str:
    """LMDB's own words for ``error``, without the name of the call that raised it."""
    return str(error).split(": ", 1)[-1].rstrip(".")


def _is_out_of_space(error: lmdb.Error) -> bool:
    text = str(error)
    return any(os.strerror(code) in text for code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.ENOMEM))
