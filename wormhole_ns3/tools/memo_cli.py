"""``wormhole-ns3 memo stats|list|clear|export|import|verify|compact``: look into a memo store, check it, copy it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wormhole_ns3.memo.errors import CorruptEntry, MemoStoreError
from wormhole_ns3.memo.maintenance import compact
from wormhole_ns3.memo.seal import KEY_ENVIRONMENT, read_memo_key
from wormhole_ns3.memo.store import MemoStore, StoreEntry, StoreStats, VerifyReport, default_memo_path

_MEMO_HELP = "the memo store (default: $WORMHOLE_NS3_MEMO, else ~/.cache/wormhole-ns3/memo)"
_KEY_HELP = (f"file holding the shared secret that seals the store and its exports with HMAC-SHA256"
             f" (default: the file ${KEY_ENVIRONMENT} names; none: SHA-256)")


def add_memo_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memo`` and its actions to the top-level command parser."""
    memo = subparsers.add_parser("memo", help="inspect, check, compact, clear, export or import a memo store")
    memo.add_argument("--memo", type=Path, metavar="PATH", help=_MEMO_HELP)
    memo.add_argument("--memo-key", type=Path, metavar="KEYFILE", help=_KEY_HELP)
    # the options are accepted after the action too; SUPPRESS keeps them from resetting ones given before
    store_option = argparse.ArgumentParser(add_help=False)
    store_option.add_argument("--memo", type=Path, metavar="PATH", default=argparse.SUPPRESS, help=_MEMO_HELP)
    store_option.add_argument("--memo-key", type=Path, metavar="KEYFILE", default=argparse.SUPPRESS, help=_KEY_HELP)
    actions = memo.add_subparsers(dest="memo_action", required=True, metavar="ACTION")
    actions.add_parser("stats", parents=[store_option], help="entries, hits, misses and bytes")
    actions.add_parser("list", parents=[store_option], help="one row per entry")
    actions.add_parser("clear", parents=[store_option], help="remove every entry and reset the counters")
    export = actions.add_parser("export", parents=[store_option], help="write every entry to a JSON-lines file")
    export.add_argument("file", type=Path, metavar="PATH")
    load = actions.add_parser("import", parents=[store_option], help="add the entries of an exported file")
    load.add_argument("file", type=Path, metavar="PATH")
    verify = actions.add_parser(
        "verify", parents=[store_option],
        help="check every entry's seal and record; exit 1 if one is corrupt",
    )
    verify.add_argument("--quarantine", action="store_true",
                        help="move the corrupt entries aside (kept in the store, never replayed)")
    actions.add_parser("compact", parents=[store_option],
                       help="rewrite the store without its free pages (no run may use it meanwhile)")


def run_memo_command(args: argparse.Namespace) -> int:
    """Run the parsed ``memo`` action; a store that cannot be used is one line on stderr, exit 2."""
    path = args.memo or default_memo_path()
    code = 0
    try:
        key = read_memo_key(args.memo_key)
        if args.memo_action == "compact":
            done = compact(path, key=key)
            lines = [f"compacted {done.path}: {done.entries} entries, data.mdb {done.bytes_before}"
                     f" -> {done.bytes_after} bytes"]
        else:
            with MemoStore.open(path, create=args.memo_action == "import", key=key) as store:
                lines, code = _run(args, store)
    except CorruptEntry as error:
        print(f"wormhole-ns3: error: {error} (wormhole-ns3 memo verify --quarantine sets it aside)",
              file=sys.stderr)
        return 2
    except MemoStoreError as error:
        print(f"wormhole-ns3: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"wormhole-ns3: error: {error.filename}: {error.strerror}", file=sys.stderr)
        return 2
    for line in lines:
        print(line)
    return code


def _run(args: argparse.Namespace, store: MemoStore) -> tuple[list[str], int]:
    if args.memo_action == "stats":
        return _stats_lines(store.stats()), 0
    if args.memo_action == "list":
        return _entry_table(store.entries()) or [f"no entries in {store.path}"], 0
    if args.memo_action == "clear":
        removed = store.clear()
        return [
            f"removed {removed.entries} entries ({removed.bytes} bytes of values,"
            f" {removed.hits} hits, {removed.misses} misses) from {store.path}"
        ], 0
    if args.memo_action == "export":
        return [f"exported {store.export(args.file)} entries from {store.path} to {args.file}"], 0
    if args.memo_action == "verify":
        report = store.verify(quarantine=args.quarantine)
        return _verify_lines(store.path, report), 1 if len(report.corrupt) > report.moved else 0
    return [f"imported {store.import_file(args.file)} new entries from {args.file} into {store.path}"], 0


def _stats_lines(stats: StoreStats) -> list[str]:
    lookups = stats.hits + stats.misses
    hit_rate = f"{100 * stats.hits / lookups:.1f}%" if lookups else "-"
    return [
        f"store        {stats.path}",
        f"schema       {stats.schema_version} (created by {stats.created_by})",
        f"sealed with  {stats.seal}",
        f"entries      {stats.entries}",
        f"quarantined  {stats.quarantined}",
        f"hits         {stats.hits}",
        f"misses       {stats.misses}",
        f"hit rate     {hit_rate}",
        f"values       {stats.bytes} bytes",
        f"on disk      {stats.disk_bytes} bytes",
    ]


def _verify_lines(path: Path, report: VerifyReport) -> list[str]:
    """One line per corrupt entry, then the counts."""
    set_aside = " (quarantined now)" if report.moved else ""
    return [f"corrupt      {key}: {problem}{set_aside}" for key, problem in report.corrupt] + [
        f"store        {path}",
        f"entries      {report.entries}",
        f"intact       {report.intact}",
        f"corrupt      {len(report.corrupt)}",
        f"quarantined  {report.quarantined}",
    ]


def _entry_table(entries: list[StoreEntry]) -> list[str]:
    """KEY HITS BYTES META, one row per entry; keys shortened to 16 hex digits like git's."""
    if not entries:
        return []
    rows = [("KEY", "HITS", "BYTES", "META")] + [
        (e.key[:16], str(e.hits), str(e.size), json.dumps(e.meta, sort_keys=True)) for e in entries
    ]
    widths = [max(len(row[column]) for row in rows) for column in range(3)]
    return [
        f"{key:<{widths[0]}}  {hits:>{widths[1]}}  {size:>{widths[2]}}  {meta}".rstrip()
        for key, hits, size, meta in rows
    ]
