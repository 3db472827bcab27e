"""The errors of a memo store, apart so that its sealing, exports and maintenance raise them too.

Each is one line naming the path and the problem: the command line prints it as
it is (``wormhole-ns3: error: ...``) and exits 2.
"""

from __future__ import annotations

from pathlib import Path


class MemoStoreError(Exception):
    """A store that cannot be used, in one line naming its path and the problem."""


class StoreFault(MemoStoreError):
    """A fault of an open store's LMDB: ``problem`` is the line without the store's path."""

    def __init__(self, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.problem = problem


class MemoStoreFull(StoreFault):
    """A write that does not fit: no space left on the disk, or the map at its limit."""


class MemoStoreDamaged(StoreFault):
    """LMDB's own pages cannot be read: nothing more is written into such a store."""


class CorruptEntry(MemoStoreError):
    """An entry whose seal fails or whose record cannot be read; ``reason`` says which."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason
