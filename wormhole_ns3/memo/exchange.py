"""Export files: a store's entries as JSON lines that another machine's store can import.

The first line says what wrote the file (product and ns-3 versions, schema,
user@host, when, the seal); then one line per entry (its value in base64, with
its SHA-256); the last line is a digest of all the others (HMAC-SHA256 under the
store's key, if it has one). An import checks the whole file before the store
takes anything from it, so a damaged or foreign export adds nothing.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import hmac
import json
from pathlib import Path

from wormhole_ns3 import __version__
from wormhole_ns3.memo.errors import MemoStoreError
from wormhole_ns3.memo.record import RECORD_FORMAT
from wormhole_ns3.memo.schema import EXPORT_KIND, SCHEMA_VERSION, check_key, now, record_problem, who
from wormhole_ns3.memo.seal import HMAC_SHA256, KEY_ENVIRONMENT, SHA256, Sealer


def write_export(path: Path, entries: list[tuple[str, dict, int, bytes]], sealer: Sealer) -> None:
    """Write ``entries`` (key hex, meta, hits, value) to ``path``, whole or not at all.

    The entry lines are the same for the same entries, whoever writes them when.
    """
    header = {
        "kind": EXPORT_KIND,
        "schema": SCHEMA_VERSION,
        "record_format": RECORD_FORMAT,
        "entries": len(entries),
        "product": f"wormhole-ns3 {__version__}",
        "ns3": _ns3_version(),
        "written_by": who(),
        "written_at": now(),
        "seal": sealer.name,
    }
    if sealer.key:
        header["key_id"] = sealer.key_id()
    lines = [json.dumps(header, sort_keys=True)]
    for key, meta, hits, value in entries:
        lines.append(json.dumps({
            "key": key,
            "meta": meta,
            "hits": hits,
            "sha256": hashlib.sha256(value).hexdigest(),
            "value": base64.b64encode(value).decode(),
        }, sort_keys=True))
    body = "".join(line + "\n" for line in lines).encode()
    trailer = {"digest": sealer.file_digest(body), "seal": sealer.name}
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("wb") as out:
            out.write(body + (json.dumps(trailer, sort_keys=True) + "\n").encode())
        partial.replace(path)
    except OSError as error:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise MemoStoreError(f"{path}: cannot write the export ({error.strerror})") from None


def read_export(path: Path, sealer: Sealer) -> list[tuple[bytes, dict, bytes]]:
    """(key, meta, value) of every entry of an export file.

    Checked whole before anything is returned: what wrote it, its digest (under
    ``sealer``'s key, if it has one), and every entry parsed as the replay parses
    it. A problem is one line, ``file:line: problem``.
    """
    try:
        data = path.read_bytes()
        lines = data.decode().split("\n")
    except OSError as error:
        raise MemoStoreError(f"{path}: cannot read the export ({error.strerror})") from None
    except UnicodeDecodeError as error:
        raise MemoStoreError(f"{path}: not a memo export (not UTF-8 text: {error.reason})") from None
    if lines and lines[-1] == "":
        lines.pop()
    header = _json_object(lines[0]) if lines else None
    if header is None or header.get("kind") != EXPORT_KIND:
        raise MemoStoreError(f"{path}:1: not a wormhole-ns3 memo export")
    if header.get("schema") != SCHEMA_VERSION:
        raise MemoStoreError(
            f"{path}:1: an export of schema {header.get('schema')!r:.20} (written by"
            f" {str(header.get('product', 'an older wormhole-ns3'))[:60]}); wormhole-ns3 {__version__}"
            f" reads schema {SCHEMA_VERSION}"
        )
    trailer = _json_object(lines[-1]) if len(lines) > 1 else None
    if trailer is None or not isinstance(trailer.get("digest"), str):
        raise MemoStoreError(
            f"{path}:{len(lines)}: no digest line (the export is cut short, or was written before exports"
            " carried their provenance)"
        )
    seal = header.get("seal")
    if seal == HMAC_SHA256 and not sealer.key:
        raise MemoStoreError(
            f"{path}: the export is sealed with a key (HMAC-SHA256); give it with --memo-key KEYFILE"
            f" or ${KEY_ENVIRONMENT}"
        )
    if seal != HMAC_SHA256 and sealer.key:
        raise MemoStoreError(f"{path}: the export is not sealed with the memo key; refusing it into a keyed store")
    if seal not in (SHA256, HMAC_SHA256) or trailer.get("seal") != seal:
        raise MemoStoreError(f"{path}:1: an export sealed with {seal!r:.30}, not {SHA256} or {HMAC_SHA256}")
    if sealer.key and header.get("key_id") != sealer.key_id():
        raise MemoStoreError(f"{path}: the export is sealed with another key; refusing to import it")
    body = "".join(line + "\n" for line in lines[:-1]).encode()
    if not hmac.compare_digest(str(trailer["digest"]), sealer.file_digest(body)):
        raise MemoStoreError(f"{path}: digest mismatch: the export was edited or damaged after it was written")
    entries = lines[1:-1]
    if header.get("entries") != len(entries):
        raise MemoStoreError(
            f"{path}:1: the header says {header.get('entries')!r:.20} entries, the file holds {len(entries)}"
        )
    records: list[tuple[bytes, dict, bytes]] = []
    for number, line in enumerate(entries, start=2):
        entry = _json_object(line)
        if entry is None:
            raise MemoStoreError(f"{path}:{number}: malformed entry (not a JSON object, or nested too deeply)")
        try:
            key = bytes.fromhex(entry["key"])
            check_key(key)
            value = base64.b64decode(entry["value"], validate=True)
            meta = entry["meta"]
            if not isinstance(meta, dict):
                raise TypeError("its meta is not a JSON object")
            expected = entry["sha256"]
        except (ValueError, KeyError, TypeError, RecursionError) as error:
            problem = "nested too deeply" if isinstance(error, RecursionError) else f"{type(error).__name__}: {error}"
            raise MemoStoreError(f"{path}:{number}: malformed entry ({problem})") from None
        if hashlib.sha256(value).hexdigest() != expected:
            raise MemoStoreError(f"{path}:{number}: value of {entry['key']} does not match its sha256")
        unreadable = record_problem(value)
        if unreadable is not None:
            raise MemoStoreError(f"{path}:{number}: value of {entry['key']} is {unreadable}")
        records.append((key, meta, value))
    return records


def _json_object(line: str) -> dict | None:
    try:
        parsed = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, dict) else None


def _ns3_version() -> str:
    from wormhole_ns3.runtime.loader import ns3_version

    try:
        return ns3_version()
    except (ImportError, OSError):
        return "unknown"
