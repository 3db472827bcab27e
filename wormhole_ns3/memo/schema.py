"""What a memo store holds, shared by the store and its export files: the schema, a valid entry, a stamp.

An export carries the store's schema version, and an import checks its keys and
values exactly as the store does, so both read these from here.
"""

from __future__ import annotations

import getpass
import os
import socket
import time

from wormhole_ns3.memo.record import RecordError, decode_value
from wormhole_ns3.memo.transient_record import TransientRecord, is_transient_value

#: Version of the store's layout (see store.py) and of its exports; another version is refused.
SCHEMA_VERSION = 1
#: What the schema record says the directory is.
STORE_KIND = "wormhole-ns3 memo store"
#: First line of an export file.
EXPORT_KIND = "wormhole-ns3 memo export"


def check_key(key: bytes) -> None:
    """Raise ValueError unless ``key`` is one LMDB can store: 1 to 511 bytes."""
    if not isinstance(key, bytes) or not 0 < len(key) <= 511:
        raise ValueError(f"a memo key is 1 to 511 bytes, got {key!r:.40}")


def record_problem(value: bytes) -> str | None:
    """Why ``value`` is not a key's stored continuations (what a replay reads) or a transient record, or None."""
    try:
        if is_transient_value(value):
            TransientRecord.decode(value)
        else:
            decode_value(value)
    except RecordError as problem:
        return str(problem)
    except RecursionError:
        return "not an episode record (nested too deeply)"
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as problem:
        return f"not an episode record ({type(problem).__name__}: {problem})"
    return None


def who() -> str:
    """``user@host``: who set an entry aside, or wrote an export."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()}"


def now() -> str:
    """The time, in UTC to the second, that quarantine headers and exports carry."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
