"""Compaction: give a store's free pages back to the disk, while no run uses it.

LMDB never shrinks its data file; after a ``memo clear`` or many quarantined
entries it keeps the space. Compaction copies the store without its free pages
and replaces the data file, under a lock that keeps every other process out.
Checking a store entry by entry is ``MemoStore.verify``: it quarantines within
the store's own transactions.
"""

from __future__ import annotations

import errno
import fcntl
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import lmdb

from wormhole_ns3.memo.environment import check_location, lmdb_reason, open_read_only
from wormhole_ns3.memo.errors import MemoStoreError
from wormhole_ns3.memo.seal import FROM_ENVIRONMENT, Sealer, read_memo_key


@dataclass(frozen=True)
class CompactReport:
    path: Path
    entries: int
    bytes_before: int
    bytes_after: int


def compact(path: str | Path, key: bytes | None = FROM_ENVIRONMENT) -> CompactReport:
    """Rewrite the store at ``path`` without its free pages: LMDB's compacting copy, then an atomic replace.

    Refused while another process has the store open (its writes would go to the
    replaced file). Every record is copied as it is, corrupt and quarantined ones
    included; the copy is checked before it replaces the original.
    """
    path = Path(path)
    if key is FROM_ENVIRONMENT:
        key = read_memo_key()
    check_location(path, create=False)
    data = path / "data.mdb"
    scratch = path / f"compact-{os.getpid()}.tmp"
    try:
        lock = os.open(path / "lock.mdb", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise MemoStoreError(f"{path}: cannot compact the store ({error.strerror})") from None
    try:
        try:
            # LMDB holds a shared lock on byte 0 of lock.mdb while it has the store open;
            # holding it exclusively keeps every other process out until the replace is done
            fcntl.lockf(lock, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 0)
        except OSError as error:
            if error.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            raise MemoStoreError(
                f"{path}: the store is in use by another process; compact it when no run uses it"
            ) from None
        before = data.stat().st_size
        entries = _copy_compacted(path, scratch, Sealer(key))
        copy = scratch / "data.mdb"
        os.chmod(copy, data.stat().st_mode & 0o7777)
        with open(copy, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(copy, data)
        directory = os.open(path, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        return CompactReport(path, entries, before, data.stat().st_size)
    except OSError as error:
        raise MemoStoreError(f"{path}: cannot compact the store ({error.strerror})") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        os.close(lock)  # releases the lock


def _copy_compacted(path: Path, scratch: Path, sealer: Sealer) -> int:
    """Copy the verified store at ``path`` into ``scratch`` compacted; the number of entries it holds."""
    env, entries = open_read_only(path, path, sealer)
    try:
        scratch.mkdir()
        env.copy(str(scratch), compact=True)
    except lmdb.Error as error:
        raise MemoStoreError(f"{path}: cannot copy the store ({lmdb_reason(error)}); left as it was") from None
    finally:
        env.close()
    copy, copied = open_read_only(scratch, path, sealer)
    copy.close()
    if copied != entries:
        raise MemoStoreError(f"{path}: the compacted copy holds {copied} entries, not {entries}; left as it was")
    return entries
