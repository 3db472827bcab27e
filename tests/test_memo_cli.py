"""``wormhole-ns3 memo``: what a user sees of a store, and one-line errors with exit 2."""

from __future__ import annotations

import json
import re

import pytest
from test_memo_store import episode_value

from wormhole_ns3.memo.seal import KEY_ENVIRONMENT
from wormhole_ns3.memo.store import MemoStore

VALUES = [episode_value(i, points=1 + 10 * i) for i in range(3)]


@pytest.fixture(autouse=True)
def _no_memo_key(monkeypatch):
    monkeypatch.delenv(KEY_ENVIRONMENT, raising=False)


def fill(path, entries: int = 3) -> None:
    with MemoStore.open(path) as store:
        for i in range(entries):
            store.put(bytes([i]) * 32, VALUES[i], {"flows": i})
        store.get(bytes([1]) * 32)
        store.get(bytes([1]) * 32)
        store.get(b"absent")


def test_stats_counts_entries_hits_misses_and_bytes(wormhole, tmp_path):
    fill(tmp_path / "memo")
    done = wormhole("memo", "stats", "--memo", tmp_path / "memo")
    assert done.returncode == 0, done.stderr
    lines = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in done.stdout.splitlines())
    assert lines["entries"] == "3"
    assert lines["hits"] == "2"
    assert lines["misses"] == "1"
    assert lines["hit rate"] == "66.7%"
    assert lines["values"] == f"{sum(map(len, VALUES))} bytes"
    assert lines["schema"].startswith("1 (created by wormhole-ns3 ")
    assert (lines["sealed with"], lines["quarantined"]) == ("sha256", "0")


def test_list_prints_one_row_per_entry_in_key_order(wormhole, tmp_path):
    fill(tmp_path / "memo")
    done = wormhole("memo", "--memo", tmp_path / "memo", "list")
    assert done.returncode == 0, done.stderr
    sizes = [len(value) for value in VALUES]
    assert done.stdout.splitlines() == [
        "KEY               HITS  BYTES  META",
        f'0000000000000000     0  {sizes[0]:>5}  {{"flows": 0}}',
        f'0101010101010101     2  {sizes[1]:>5}  {{"flows": 1}}',
        f'0202020202020202     0  {sizes[2]:>5}  {{"flows": 2}}',
    ]


def test_clear_says_what_it_removed_and_export_import_carry_the_entries(wormhole, tmp_path, monkeypatch):
    store, copy, exported = tmp_path / "memo", tmp_path / "copy", tmp_path / "memo.jsonl"
    fill(store)
    monkeypatch.setenv("WORMHOLE_NS3_MEMO", str(store))  # the default --memo

    done = wormhole("memo", "export", exported)
    assert (done.returncode, done.stdout) == (0, f"exported 3 entries from {store} to {exported}\n")
    assert [json.loads(line)["meta"] for line in exported.read_text().splitlines()[1:-1]] == [
        {"flows": 0}, {"flows": 1}, {"flows": 2}
    ]
    done = wormhole("memo", "clear")
    assert done.stdout == (
        f"removed 3 entries ({sum(map(len, VALUES))} bytes of values, 2 hits, 1 misses) from {store}\n"
    )
    assert wormhole("memo", "list").stdout == f"no entries in {store}\n"

    done = wormhole("memo", "import", exported, "--memo", copy)
    assert done.stdout == f"imported 3 new entries from {exported} into {copy}\n"
    with MemoStore.open(copy, create=False) as imported:
        assert imported.get(bytes([2]) * 32) == VALUES[2]


def test_a_tampered_store_is_one_line_and_exit_2(wormhole, tmp_path):
    path = tmp_path / "memo"
    with MemoStore.open(path) as store:
        store.put(b"episode", b"bytes each flow sent: 1234;", {})
    data = (path / "data.mdb").read_bytes()
    (path / "data.mdb").write_bytes(data.replace(b"sent: 1234", b"sent: 9234"))
    done = wormhole("memo", "--memo", path, "list")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr_lines == [
        f"wormhole-ns3: error: {path}: entry {b'episode'.hex()} is corrupt (checksum mismatch);"
        " refusing to replay it (wormhole-ns3 memo verify --quarantine sets it aside)"
    ]


def test_a_missing_store_and_an_unwritable_export_are_one_line_and_exit_2(wormhole, tmp_path):
    done = wormhole("memo", "stats", "--memo", tmp_path / "none")
    assert (done.returncode, done.stderr_lines) == (
        2, [f"wormhole-ns3: error: {tmp_path / 'none'}: no memo store here"]
    )
    fill(tmp_path / "memo")
    target = tmp_path / "no such folder" / "out.jsonl"
    done = wormhole("memo", "export", target, "--memo", tmp_path / "memo")
    assert done.returncode == 2
    assert done.stderr_lines == [
        f"wormhole-ns3: error: {target}: cannot write the export (No such file or directory)"
    ]
