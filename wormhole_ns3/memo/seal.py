"""Seals: a digest in front of every record, so that a payload altered or moved under another name is detected.

The digest is SHA-256 of (record name + payload), or HMAC-SHA256 under a shared
secret (``--memo-key KEYFILE``, ``$WORMHOLE_NS3_MEMO_KEY``): then nobody without
the key can write a record a store accepts. A keyed store holds a key check record
(a salt and an HMAC of it), so that opening it under another key, or without one,
is refused at once rather than entry by entry.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
from pathlib import Path
from typing import Any

from wormhole_ns3.memo.errors import MemoStoreError

#: The environment variable naming the memo key file (``--memo-key`` overrides it).
KEY_ENVIRONMENT = "WORMHOLE_NS3_MEMO_KEY"
#: A memo key shorter than this is refused (it would be guessed).
MIN_KEY_SIZE = 16
#: How the two kinds of seal are named in exports and stats.
SHA256, HMAC_SHA256 = "sha256", "hmac-sha256"
#: Bytes of the digest in front of a sealed record.
DIGEST_SIZE = 32
#: The default key of ``MemoStore.open`` and ``compact``: the file ``$WORMHOLE_NS3_MEMO_KEY`` names, if set.
FROM_ENVIRONMENT: Any = object()

_SALT_SIZE = 16
_U32 = struct.Struct("<I")


def read_memo_key(path: str | Path | None = None) -> bytes | None:
    """The shared secret in the key file ``path``, else in the file ``$WORMHOLE_NS3_MEMO_KEY`` names.

    None if neither is given. The file's bytes are the key (a final newline
    aside); raises MemoStoreError for a file that cannot be read or a key
    shorter than MIN_KEY_SIZE bytes.
    """
    if path is None:
        configured = os.environ.get(KEY_ENVIRONMENT)
        if not configured:
            return None
        path = configured
    path = Path(path)
    try:
        key = path.read_bytes().rstrip(b"\r\n")
    except OSError as error:
        raise MemoStoreError(f"{path}: cannot read the memo key ({error.strerror})") from None
    if len(key) < MIN_KEY_SIZE:
        raise MemoStoreError(
            f"{path}: the memo key is {len(key)} bytes, at least {MIN_KEY_SIZE} are needed"
            " (e.g. head -c 32 /dev/urandom | base64 > KEYFILE)"
        )
    return key


class Sealer:
    """Seals records with SHA-256, or with HMAC-SHA256 under a key."""

    def __init__(self, key: bytes | None) -> None:
        self.key = key
        self.name = HMAC_SHA256 if key else SHA256

    def digest(self, name: bytes, payload: bytes) -> bytes:
        framed = _U32.pack(len(name)) + name
        if self.key:
            mac = hmac.new(self.key, framed, hashlib.sha256)
            mac.update(payload)
            return mac.digest()
        digest = hashlib.sha256(framed)
        digest.update(payload)
        return digest.digest()

    def seal(self, name: bytes, payload: bytes) -> bytes:
        return self.digest(name, payload) + payload

    def unseal(self, name: bytes, sealed: bytes) -> bytes | None:
        """The payload, or None if it does not match its digest."""
        payload = sealed[DIGEST_SIZE:]
        ok = hmac.compare_digest(sealed[:DIGEST_SIZE], self.digest(name, payload))
        return payload if len(sealed) >= DIGEST_SIZE and ok else None

    def key_id(self) -> str | None:
        """A public name of the key (tells two keys apart, reveals nothing of either)."""
        if not self.key:
            return None
        return hmac.new(self.key, b"wormhole-ns3 memo key id", hashlib.sha256).hexdigest()[:16]

    def new_key_check(self) -> bytes:
        """A key check record for a new keyed store: a fresh salt and its HMAC under the key."""
        return self._key_check(os.urandom(_SALT_SIZE))

    def passes_key_check(self, record: bytes) -> bool:
        """Whether a store's key check record was written under this sealer's key."""
        return hmac.compare_digest(record, self._key_check(record[:_SALT_SIZE]))

    def file_digest(self, data: bytes) -> str:
        if self.key:
            return hmac.new(self.key, data, hashlib.sha256).hexdigest()
        return hashlib.sha256(data).hexdigest()

    def _key_check(self, salt: bytes) -> bytes:
        assert self.key
        return salt + hmac.new(self.key, b"wormhole-ns3 memo key check" + salt, hashlib.sha256).digest()
