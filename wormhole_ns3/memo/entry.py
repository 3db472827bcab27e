"""A memo store's entries as bytes: a value's sealed record, and a quarantined entry's.

A value is stored as one record sealed under its key (seal.py): the size of
its meta, its meta as JSON, the value. A quarantined entry is kept in the
store's ``info`` database under ``quarantine/`` + SHA-256(key + stored bytes):
the size of a JSON header (key, reason, when, by whom, its hits), the header,
and the stored bytes exactly as they were.
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass
from pathlib import Path

from wormhole_ns3.memo.environment import QUARANTINE
from wormhole_ns3.memo.errors import CorruptEntry
from wormhole_ns3.memo.schema import now, record_problem, who
from wormhole_ns3.memo.seal import DIGEST_SIZE, Sealer

_U32 = struct.Struct("<I")


@dataclass(frozen=True)
class QuarantinedEntry:
    """An entry set aside: why, when, by whom, and its stored bytes exactly as they were."""

    key: str  #: hex
    reason: str
    when: str
    by: str
    hits: int
    stored: bytes


def encode_record(meta: dict, value: bytes) -> bytes:
    """The payload of a value record: meta size, meta JSON, value."""
    meta_json = json.dumps(meta, sort_keys=True, separators=(",", ":")).encode()
    return _U32.pack(len(meta_json)) + meta_json + value


def open_record(path: Path, sealer: Sealer, key: bytes | memoryview, sealed: bytes | memoryview) -> tuple[dict, bytes]:
    """The meta and value of a sealed record; CorruptEntry if its seal fails or its meta is unreadable."""
    key, sealed = bytes(key), bytes(sealed)
    payload = sealer.unseal(key, sealed)
    if payload is None:
        reason = "is corrupt (checksum mismatch)" if not sealer.key else \
            "is corrupt (seal mismatch: altered, or written without the store's key)"
        raise CorruptEntry(f"{path}: entry {key.hex()} {reason}; refusing to replay it", reason)
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
        raise CorruptEntry(f"{path}: entry {key.hex()} {reason}; refusing to replay it", reason) from None
    return meta, payload[meta_end:]


def entry_problem(path: Path, sealer: Sealer, key: bytes, sealed: bytes) -> str | None:
    """Why a stored record is no entry a replay can read (its seal, its meta, its value), or None."""
    try:
        problem = record_problem(open_record(path, sealer, key, sealed)[1])
    except CorruptEntry as error:
        return error.reason
    return None if problem is None else f"is {problem}"


def value_size(stored: bytes) -> int:
    """The value's size in a stored record, as far as it can be told (0 if not)."""
    payload = stored[DIGEST_SIZE:]
    if len(payload) < _U32.size:
        return 0
    (meta_size,) = _U32.unpack_from(payload)
    return max(len(payload) - _U32.size - meta_size, 0)


def quarantine_record(key: bytes, stored: bytes, reason: str, hits: int) -> tuple[bytes, bytes]:
    """The name in ``info`` and the bytes of the entry under ``key`` set aside now, by this user."""
    header = {"key": key.hex(), "reason": reason, "when": now(), "by": who(), "hits": hits}
    encoded = json.dumps(header, sort_keys=True).encode()
    name = QUARANTINE + hashlib.sha256(_U32.pack(len(key)) + key + stored).digest()
    return name, _U32.pack(len(encoded)) + encoded + stored


def read_quarantined(raw: bytes) -> QuarantinedEntry:
    """A quarantined entry from the bytes ``quarantine_record`` made."""
    (size,) = _U32.unpack_from(raw)
    header = json.loads(raw[_U32.size:_U32.size + size])
    return QuarantinedEntry(header["key"], header["reason"], header["when"], header["by"], header["hits"],
                            raw[_U32.size + size:])
