"""``wormhole-ns3 memo stats|list|clear|export|import``: look into a memo store, empty it, copy it."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wormhole_ns3.memo.store import MemoStore, MemoStoreError, StoreEntry, StoreStats, default_memo_path

_MEMO_HELP = "the memo store (default: $WORMHOLE_NS3_MEMO, else ~/.cache/wormhole-ns3/memo)"


def add_memo_command(subparsers: argparse._SubParsersAction) -> None:
    """Add ``memo`` and its actions to the top-level command parser."""
    memo = subparsers.add_parser("memo", help="inspect, clear, export or import a memo store")
    memo.add_argument("--memo", type=Path, metavar="PATH", help=_MEMO_HELP)
    # --memo is accepted after the action too; SUPPRESS keeps it from resetting one given before
    store_option = argparse.ArgumentParser(add_help=False)
    store_option.add_argument("--memo", type=Path, metavar="PATH", default=argparse.SUPPRESS, help=_MEMO_HELP)
    actions = memo.add_subparsers(dest="memo_action", required=True, metavar="ACTION")
    actions.add_parser("stats", parents=[store_option], help="entries, hits, misses and bytes")
    actions.add_parser("list", parents=[store_option], help="one row per entry")
    actions.add_parser("clear", parents=[store_option], help="remove every entry and reset the counters")
    export = actions.add_parser("export", parents=[store_option], help="write every entry to a JSON-lines file")
    export.add_argument("file", type=Path, metavar="PATH")
    load = actions.add_parser("import", parents=[store_option], help="add the entries of an exported file")
    load.add_argument("file", type=Path, metavar="PATH")


def run_memo_command(args: argparse.Namespace) -> int:
    """Run the parsed ``memo`` action; a store that cannot be used is one line on stderr, exit 2."""
    path = args.memo or default_memo_path()
    try:
        with MemoStore.open(path, create=args.memo_action == "import") as store:
            for line in _run(args, store):
                print(line)
    except MemoStoreError as error:
        print(f"wormhole-ns3: error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"wormhole-ns3: error: {error.filename}: {error.strerror}", file=sys.stderr)
        return 2
    return 0


def _run(args: argparse.Namespace, store: MemoStore) -> list[str]:
    if args.memo_action == "stats":
        return _stats_lines(store.stats())
    if args.memo_action == "list":
        return _entry_table(store.entries()) or [f"no entries in {store.path}"]
    if args.memo_action == "clear":
        removed = store.clear()
        return [
            f"removed {removed.entries} entries ({removed.bytes} bytes of values,"
            f" {removed.hits} hits, {removed.misses} misses) from {store.path}"
        ]
    if args.memo_action == "export":
        return [f"exported {store.export(args.file)} entries from {store.path} to {args.file}"]
    return [f"imported {store.import_file(args.file)} new entries from {args.file} into {store.path}"]


def _stats_lines(stats: StoreStats) -> list[str]:
    lookups = stats.hits + stats.misses
    hit_rate = f"{100 * stats.hits / lookups:.1f}%" if lookups else "-"
    return [
        f"store     {stats.path}",
        f"schema    {stats.schema_version} (created by {stats.created_by})",
        f"entries   {stats.entries}",
        f"hits      {stats.hits}",
        f"misses    {stats.misses}",
        f"hit rate  {hit_rate}",
        f"values    {stats.bytes} bytes",
        f"on disk   {stats.disk_bytes} bytes",
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
