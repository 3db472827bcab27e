"""Memo faults degrade, never abort, and never lose the user's data (issue 16, item 4).

A corrupt entry is set aside (its bytes kept) and its episode simulated; a store
that lost its data is refused, never re-created over; an export is checked as
records the replay reads, with its provenance and digest; a shared key keeps
others from writing into a store or an export; a full disk stops storing, not
the run; ``memo verify`` and ``memo compact`` check and rewrite a whole store.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import lmdb
import pytest
from test_memo_decisions import incast, kinds, record_episode
from test_memo_store import episode_value

from wormhole_ns3.memo import entry as entry_module
from wormhole_ns3.memo import environment as environment_module
from wormhole_ns3.memo import schema
from wormhole_ns3.memo.decisions import MemoDecision
from wormhole_ns3.memo.episodes import Memoizer
from wormhole_ns3.memo.errors import MemoStoreError
from wormhole_ns3.memo.maintenance import compact
from wormhole_ns3.memo.record import RECORD_FORMAT, decode_value
from wormhole_ns3.memo.seal import KEY_ENVIRONMENT, read_memo_key
from wormhole_ns3.memo.store import MemoStore

from conftest import REPO, child_environment, load_json
from fakes import FakeMemoHost

MS = 1_000_000


@pytest.fixture(autouse=True)
def _no_memo_key(monkeypatch):
    monkeypatch.delenv(KEY_ENVIRONMENT, raising=False)


@pytest.fixture
def keys(tmp_path) -> tuple[Path, Path]:
    a, b = tmp_path / "team-a.key", tmp_path / "team-b.key"
    a.write_bytes(b"0123456789abcdef-team-a-secret\n")
    b.write_bytes(b"0123456789abcdef-team-b-secret\n")
    return a, b


def warnings_in(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("wormhole-ns3: warning:")]


def flip_stored_byte(path: Path, key: bytes) -> bytes:
    """Flip one byte in the middle of the stored record under ``key`` (bypassing the store); the new bytes."""
    with lmdb.open(str(path), max_dbs=3) as env:
        values = env.open_db(b"values")
        with env.begin(write=True) as txn:
            stored = bytearray(txn.get(key, db=values))
            stored[len(stored) // 2] ^= 0x20
            txn.put(key, bytes(stored), db=values)
    return bytes(stored)


def store_bytes(path: Path) -> bytes:
    return (path / "data.mdb").read_bytes()


# -- a corrupt entry: quarantined, a miss, simulated and recorded again -----------------------


def test_a_corrupt_entry_is_quarantined_its_episode_simulated_and_recorded_again(tmp_path, capsys):
    path = tmp_path / "memo"
    host = FakeMemoHost()
    with MemoStore.open(path) as store:
        record_episode(Memoizer(store, "context", host), host, incast(host, 0, 100), 0, [2 * MS, 3 * MS])
        (entry,) = store.entries()
    key = bytes.fromhex(entry.key)
    corrupt = flip_stored_byte(path, key)

    with MemoStore.open(path) as store:
        memo = Memoizer(store, "context", host)
        flows = incast(host, 10, 200)
        record_episode(memo, host, flows, 10 * MS, [2 * MS, 3 * MS])
        # not replayed: simulated (started for real) and recorded again
        assert kinds(memo) == [MemoDecision.MISS, MemoDecision.RECORDED]
        assert host.started[-2:] == flows and host.held == []
        assert warnings_in(capsys.readouterr().err) == [
            f"wormhole-ns3: warning: {path}: entry {entry.key} is corrupt (checksum mismatch):"
            " quarantined, its episode is simulated"
        ]
        (aside,) = store.quarantined()
        assert aside.key == entry.key and aside.stored == corrupt  # its bytes, exactly
        # the fresh recording replays in the next run
        again = Memoizer(store, "context", host)
        again.arrive(50 * MS, incast(host, 20, 300))
        assert kinds(again) == [MemoDecision.REPLAY]
        assert store.verify().corrupt == []


def test_a_sealed_value_no_replay_can_read_is_quarantined_not_fatal(tmp_path, capsys):
    """A forged value with a valid seal (anyone can compute a SHA-256) once aborted the next run."""
    path = tmp_path / "memo"
    host = FakeMemoHost()
    with MemoStore.open(path) as store:
        record_episode(Memoizer(store, "context", host), host, incast(host, 0, 100), 0, [MS, MS])
        (entry,) = store.entries()
        key = bytes.fromhex(entry.key)
        forged = b"[" * 100_000 + b"]" * 100_000  # nested deeper than json can read
        assert store.update(key, lambda value: forged)

        memo = Memoizer(store, "context", host)
        record_episode(memo, host, incast(host, 10, 200), 10 * MS, [MS, MS])
        assert kinds(memo) == [MemoDecision.MISS, MemoDecision.RECORDED]
        assert warnings_in(capsys.readouterr().err) == [
            f"wormhole-ns3: warning: {path}: entry {entry.key} is not an episode record (nested too deeply):"
            " quarantined, its episode is simulated"
        ]
        assert forged in store.quarantined()[0].stored
        records, _ = decode_value(store.get(key))
        assert len(records) == 1
        memo.save_track_records()


def test_a_value_forged_between_read_and_update_is_quarantined_and_the_update_made_afresh(tmp_path, capsys):
    path = tmp_path / "memo"
    host = FakeMemoHost()
    with MemoStore.open(path) as store:
        memo = Memoizer(store, "context", host)
        memo.arrive(0, incast(host, 0, 100))
        (episode,) = memo.table.episodes.values()
        # another process, say
        store.put(episode.key, b'{"format": %d, "continuations": [{"flows": 7}]}' % RECORD_FORMAT, {})
        for flow, after in ((0, MS), (1, MS)):
            memo.finished(after, flow)
        assert kinds(memo) == [MemoDecision.MISS, MemoDecision.RECORDED]
        assert len(warnings_in(capsys.readouterr().err)) == 1
        assert len(decode_value(store.get(episode.key))[0]) == 1


# -- a store that lost its data is refused, never re-created over ----------------------------


@pytest.mark.parametrize("size", [0, 100])
def test_an_empty_or_cut_data_file_is_refused_and_left_untouched(tmp_path, wormhole, size):
    path = tmp_path / "memo"
    with MemoStore.open(path) as store:
        store.put(b"episode", episode_value(1), {})
    (path / "data.mdb").write_bytes(store_bytes(path)[:size])
    problem = "is empty (0 bytes)" if size == 0 else "is truncated (100 bytes, shorter than LMDB's two meta pages)"
    with pytest.raises(MemoStoreError, match=rf"memo: data.mdb {re.escape(problem)}"):
        MemoStore.open(path)
    done = wormhole("memo", "stats", "--memo", path)
    assert done.returncode == 2 and len(done.stderr_lines) == 1
    assert done.stderr_lines[0].startswith(f"wormhole-ns3: error: {path}: data.mdb {problem}")
    assert (path / "data.mdb").stat().st_size == size  # never re-created over
    (path / "lock.mdb").unlink()
    with pytest.raises(MemoStoreError, match="data.mdb"):
        MemoStore.open(path)
    assert (path / "data.mdb").stat().st_size == size


def test_only_a_missing_path_or_an_empty_directory_becomes_a_new_store(tmp_path):
    (tmp_path / "empty").mkdir()
    for path in (tmp_path / "empty", tmp_path / "new" / "memo"):
        with MemoStore.open(path) as store:
            assert store.put(b"k", episode_value(1), {})
        with MemoStore.open(path, create=False) as store:
            assert store.get(b"k") == episode_value(1)


# -- imports: checked as records, with provenance and a digest ------------------------------


def export_of(tmp_path: Path, entries: int = 2, **open_options) -> tuple[Path, Path]:
    path, exported = tmp_path / "source", tmp_path / "export.jsonl"
    with MemoStore.open(path, **open_options) as store:
        for i in range(entries):
            store.put(f"episode-{i}".encode(), episode_value(i), {"flows": 1})
        store.export(exported)
    return path, exported


def reseal(exported: Path, change, digest: bool = True) -> None:
    """Edit an export's entry lines as someone without a key can: fix each sha256, and the digest if ``digest``."""
    header, *entries, trailer = exported.read_text().splitlines()
    lines = [header]
    for line in entries:
        entry = json.loads(line)
        value = change(base64.b64decode(entry["value"]))
        if isinstance(value, str):
            lines.append(value)
            continue
        entry["value"] = base64.b64encode(value).decode()
        entry["sha256"] = hashlib.sha256(value).hexdigest()
        lines.append(json.dumps(entry, sort_keys=True))
    body = "".join(line + "\n" for line in lines)
    if digest:
        trailer = json.dumps({"digest": hashlib.sha256(body.encode()).hexdigest(), "seal": "sha256"})
    exported.write_text(body + trailer + "\n")


@pytest.fixture
def target(tmp_path) -> Path:
    path = tmp_path / "target"
    with MemoStore.open(path) as store:
        store.put(b"mine", episode_value(9), {})
    return path


def refused_import(target: Path, exported: Path, **open_options) -> str:
    before = store_bytes(target)
    with MemoStore.open(target, **open_options) as store, pytest.raises(MemoStoreError) as refused:
        store.import_file(exported)
    assert store_bytes(target) == before  # not a byte written
    with MemoStore.open(target, **open_options) as store:
        assert [e.key for e in store.entries()] == [b"mine".hex()]
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_an_export_says_who_wrote_it_and_imports_whole(tmp_path, target):
    _, exported = export_of(tmp_path)
    header = json.loads(exported.read_text().splitlines()[0])
    assert header["product"].startswith("wormhole-ns3 ") and header["schema"] == schema.SCHEMA_VERSION
    assert "@" in header["written_by"] and header["written_at"].endswith("Z") and header["ns3"]
    with MemoStore.open(target) as store:
        assert store.import_file(exported) == 2
        assert store.get(b"episode-1") == episode_value(1)


def test_an_edited_export_is_refused_by_its_digest(tmp_path, target):
    _, exported = export_of(tmp_path)
    # well-formed, a replay would read it: one flow's finish moved by 1 ns
    reseal(exported, lambda value: value.replace(b"3001", b"3002"), digest=False)
    assert refused_import(target, exported) == (
        f"{exported}: digest mismatch: the export was edited or damaged after it was written"
    )


def test_forged_values_with_matching_hashes_are_refused_as_records(tmp_path, target):
    _, exported = export_of(tmp_path)
    reseal(exported, lambda value: b"not a record, but its sha256 and the digest match")
    message = refused_import(target, exported)
    assert message.startswith(f"{exported}:2: value of {b'episode-0'.hex()} is not an episode record (")

    reseal(exported, lambda value: json.dumps({"format": RECORD_FORMAT, "continuations": [{"initial": "x"}]}).encode())
    assert refused_import(target, exported).startswith(f"{exported}:2: value of {b'episode-0'.hex()} is not an")


def test_deeply_nested_json_is_a_one_line_refusal(tmp_path, target):
    _, exported = export_of(tmp_path)
    reseal(exported, lambda value: b"[" * 200_000 + b"]" * 200_000)  # in a value
    assert refused_import(target, exported) == (
        f"{exported}:2: value of {b'episode-0'.hex()} is not an episode record (nested too deeply)"
    )
    reseal(exported, lambda value: "[" * 200_000 + "]" * 200_000)  # a whole line
    assert refused_import(target, exported) == (
        f"{exported}:2: malformed entry (not a JSON object, or nested too deeply)"
    )
    exported.write_text("[" * 200_000 + "]" * 200_000 + "\n")  # the header
    assert refused_import(target, exported) == f"{exported}:1: not a wormhole-ns3 memo export"


def test_an_export_of_another_schema_or_without_a_digest_is_refused(tmp_path, target):
    _, exported = export_of(tmp_path)
    header, *rest = exported.read_text().splitlines()
    other = json.loads(header) | {"schema": 2}
    exported.write_text("\n".join([json.dumps(other), *rest]) + "\n")
    assert refused_import(target, exported).startswith(f"{exported}:1: an export of schema 2 (written by wormhole-ns3 ")
    exported.write_text("\n".join([header, *rest[:-1]]) + "\n")
    assert refused_import(target, exported).startswith(f"{exported}:3: no digest line")


# -- a shared key ---------------------------------------------------------------------------


def test_a_store_under_one_key_is_refused_under_another_and_without_one(tmp_path, keys, monkeypatch):
    a, b = (read_memo_key(k) for k in keys)
    path = tmp_path / "memo"
    with MemoStore.open(path, key=a) as store:
        store.put(b"episode", episode_value(1), {})
        assert store.stats().seal == "hmac-sha256"
    before = store_bytes(path)
    with pytest.raises(MemoStoreError, match=r"memo: the store is sealed with another key; refusing to use it$"):
        MemoStore.open(path, key=b)
    with pytest.raises(MemoStoreError, match=r"memo: the store is sealed with a key \(HMAC-SHA256\); give it with"):
        MemoStore.open(path, key=None)
    assert store_bytes(path) == before
    monkeypatch.setenv(KEY_ENVIRONMENT, str(keys[0]))  # the default key: the file it names
    with MemoStore.open(path) as store:
        assert store.get(b"episode") == episode_value(1)
    # a store written without a key stays as it was: refused under a key
    plain = tmp_path / "plain"
    with MemoStore.open(plain, key=None) as store:
        store.put(b"episode", episode_value(1), {})
    with pytest.raises(MemoStoreError, match=r"plain: the store is not sealed with a key"):
        MemoStore.open(plain, key=a)


def test_a_value_sealed_without_the_key_is_never_replayed_from_a_keyed_store(tmp_path, keys, capsys):
    a = read_memo_key(keys[0])
    path = tmp_path / "memo"
    with MemoStore.open(path, key=a):
        pass
    # an intruder writes straight into the LMDB, sealing with a bare SHA-256 as an unkeyed store would
    payload = entry_module.encode_record({}, episode_value(1))
    with lmdb.open(str(path), max_dbs=3) as env, env.begin(write=True) as txn:
        txn.put(b"episode", environment_module.PLAIN.seal(b"episode", payload), db=env.open_db(b"values", txn=txn))
    with MemoStore.open(path, key=a) as store:
        assert store.get(b"episode") is None
        assert "written without the store's key" in capsys.readouterr().err
        assert len(store.quarantined()) == 1


def test_an_export_under_one_key_is_refused_under_another_and_without_one(tmp_path, keys):
    a, b = (read_memo_key(k) for k in keys)
    _, exported = export_of(tmp_path, key=a)
    for name, key, problem in (
        ("keyed-b", b, "the export is sealed with another key; refusing to import it"),
        ("plain", None, "the export is sealed with a key (HMAC-SHA256); give it with --memo-key KEYFILE"),
    ):
        target = tmp_path / name
        MemoStore.open(target, key=key).close()
        with MemoStore.open(target, key=key) as store, pytest.raises(MemoStoreError) as refused:
            store.import_file(exported)
        assert str(refused.value).startswith(f"{exported}: {problem}")
        with MemoStore.open(target, key=key) as store:
            assert store.entries() == []
    # forged by someone without the key: resealed with SHA-256 and claimed unkeyed
    keyed = tmp_path / "keyed-a"
    with MemoStore.open(keyed, key=a) as store:
        assert store.import_file(exported) == 2  # the genuine one
    header, *rest = exported.read_text().splitlines()
    plain_header = {k: v for k, v in json.loads(header).items() if k != "key_id"} | {"seal": "sha256"}
    exported.write_text("\n".join([json.dumps(plain_header), *rest]) + "\n")
    reseal(exported, lambda value: value)
    with MemoStore.open(keyed, key=a) as store, pytest.raises(MemoStoreError, match="not sealed with the memo key"):
        store.import_file(exported)


def test_a_key_file_must_hold_a_real_key(tmp_path, wormhole, monkeypatch):
    short = tmp_path / "short.key"
    short.write_text("secret\n")
    with pytest.raises(MemoStoreError, match=r"short.key: the memo key is 6 bytes, at least 16 are needed"):
        read_memo_key(short)
    done = wormhole("memo", "stats", "--memo", tmp_path / "memo", "--memo-key", tmp_path / "none.key")
    assert (done.returncode, done.stderr_lines) == (
        2, [f"wormhole-ns3: error: {tmp_path / 'none.key'}: cannot read the memo key (No such file or directory)"]
    )


def test_memo_cli_seals_with_memo_key(tmp_path, wormhole, keys):
    path = tmp_path / "memo"
    with MemoStore.open(path, key=read_memo_key(keys[0])) as store:
        store.put(b"episode", episode_value(1), {})
    done = wormhole("memo", "--memo-key", keys[0], "stats", "--memo", path)
    assert done.returncode == 0 and "sealed with  hmac-sha256" in done.stdout
    done = wormhole("memo", "list", "--memo", path, "--memo-key", keys[1])
    assert (done.returncode, done.stderr_lines) == (
        2, [f"wormhole-ns3: error: {path}: the store is sealed with another key; refusing to use it"]
    )


# -- full disk, exhausted map, damaged pages: the run goes on without storing -------------------


class _NoSpace:
    """An lmdb environment whose write transactions fail to commit for want of disk space."""

    def __init__(self, env):
        self._env, self._error = env, lmdb.DiskError("mdb_txn_commit: No space left on device")

    def begin(self, write=False):
        return _FailingCommit(self._env.begin(write=True), self._error) if write else self._env.begin()

    def __getattr__(self, name):
        return getattr(self._env, name)


class _FailingCommit:
    def __init__(self, txn, error):
        self._txn, self._error = txn, error

    def __enter__(self):
        return self._txn

    def __exit__(self, *exc_info):
        self._txn.abort()
        raise self._error


class _DamagedPages(_NoSpace):
    def begin(self, write=False):
        raise lmdb.CorruptedError("mdb_get: MDB_CORRUPTED: Located page was wrong type")


def test_a_full_disk_stops_storing_with_one_warning_and_the_run_goes_on(tmp_path, capsys):
    path = tmp_path / "memo"
    with MemoStore.open(path) as store:
        store.put(b"kept", episode_value(1), {})
        store._env = _NoSpace(store._env)
        host = FakeMemoHost()
        memo = Memoizer(store, "context", host)
        record_episode(memo, host, incast(host, 0, 100), 0, [MS, MS])  # recorded, but not stored
        assert store.put(b"new", episode_value(2), {}) is False
        assert store.get(b"kept") == episode_value(1)  # reads go on
        memo.save_track_records()
    assert warnings_in(capsys.readouterr().err) == [
        f"wormhole-ns3: warning: {path}: cannot write the store (No space left on device);"
        " this run goes on without storing"
    ]
    with MemoStore.open(path) as store:
        assert [e.key for e in store.entries()] == [b"kept".hex()]


def test_an_exhausted_map_stops_storing_with_one_warning(tmp_path, capsys):
    path = tmp_path / "memo"
    with MemoStore.open(path, map_size=64 << 10, max_map_size=256 << 10) as store:
        assert store.put(b"small", b"x" * 1000, {})
        assert store.put(b"too big", b"y" * (1 << 20), {}) is False
        assert store.put(b"small too", b"z" * 1000, {}) is False  # no more writes this run
        assert store.get(b"small") == b"x" * 1000
    assert warnings_in(capsys.readouterr().err) == [
        f"wormhole-ns3: warning: {path}: the store's map is full at its limit ({256 << 10} bytes);"
        " this run goes on without storing"
    ]


def test_damaged_pages_make_a_miss_and_stop_storing(tmp_path, capsys):
    path = tmp_path / "memo"
    with MemoStore.open(path) as store:
        store.put(b"episode", episode_value(1), {})
        healthy = store._env
        store._env = _DamagedPages(healthy)
        assert store.get(b"episode") is None
        assert not store.writable
        store._env = healthy
    (line,) = warnings_in(capsys.readouterr().err)
    assert line.startswith(
        f"wormhole-ns3: warning: {path}: entry {b'episode'.hex()} is unreadable (the store is corrupt"
    )
    assert line.endswith("its episode is simulated, and this run stores nothing more")


# -- memo verify and memo compact --------------------------------------------------------------


def corrupt_store(path: Path, entries: int = 3) -> bytes:
    with MemoStore.open(path) as store:
        for i in range(entries):
            store.put(f"episode-{i}".encode(), episode_value(i, points=5), {"flows": 1})
    return flip_stored_byte(path, b"episode-1")


def test_verify_counts_the_corrupt_entries_and_can_set_them_aside(tmp_path, wormhole):
    path = tmp_path / "memo"
    corrupt = corrupt_store(path)
    with MemoStore.open(path) as store:
        assert store.put(b"forged", b"sealed, but no record", {})  # a valid seal, not a record
    before = store_bytes(path)
    done = wormhole("memo", "verify", "--memo", path)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == [
        f"corrupt      {b'episode-1'.hex()}: is corrupt (checksum mismatch)",
        f"corrupt      {b'forged'.hex()}: is not an episode record (JSONDecodeError: Expecting value: line 1 column 1"
        " (char 0))",
    ]
    assert lines[2:] == [f"store        {path}", "entries      4", "intact       2", "corrupt      2",
                         "quarantined  0"]
    assert store_bytes(path) == before  # verify only reads

    done = wormhole("memo", "verify", "--quarantine", "--memo", path)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "quarantined  2"
    assert wormhole("memo", "verify", "--memo", path).returncode == 0
    with MemoStore.open(path) as store:
        assert corrupt in [q.stored for q in store.quarantined()]
        assert store.stats().entries == 2


def test_compact_rewrites_the_store_smaller_and_keeps_every_record(tmp_path, wormhole):
    path = tmp_path / "memo"
    with MemoStore.open(path) as store:
        for i in range(200):
            store.put(f"bulk-{i}".encode(), episode_value(i, points=100), {})
        store.clear()  # leaves free pages behind
    corrupt = corrupt_store(path)
    big = (path / "data.mdb").stat().st_size
    done = wormhole("memo", "compact", "--memo", path)
    assert done.returncode == 0, done.stderr
    small = (path / "data.mdb").stat().st_size
    assert done.stdout == f"compacted {path}: 3 entries, data.mdb {big} -> {small} bytes\n"
    assert small * 4 < big
    with MemoStore.open(path) as store:
        report = store.verify()  # the corrupt entry is kept as it was, to be looked at
        assert report.entries == 3 and [k for k, _ in report.corrupt] == [b"episode-1".hex()]
        assert store.get(b"episode-0") == episode_value(0, points=5)
        assert store.put(b"after", episode_value(7), {})
    with MemoStore.open(path) as store:
        assert store.get(b"after") == episode_value(7)
        assert store.get(b"episode-1") is None
        assert store.quarantined()[0].stored == corrupt


def test_compact_is_refused_while_a_run_has_the_store_open(tmp_path):
    path = tmp_path / "memo"
    corrupt_store(path)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\nfrom wormhole_ns3.memo.store import MemoStore\n"
         "with MemoStore.open(sys.argv[1]):\n    print('open', flush=True)\n    sys.stdin.readline()\n",
         str(path)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=child_environment(),
    )
    try:
        assert holder.stdout.readline() == "open\n"
        before = store_bytes(path)
        with pytest.raises(MemoStoreError, match=r"memo: the store is in use by another process"):
            compact(path, key=None)
        assert store_bytes(path) == before
    finally:
        holder.communicate("\n", timeout=30)
    assert compact(path, key=None).entries == 3


def test_compact_refuses_what_is_not_a_store_or_under_another_key(tmp_path, keys):
    with pytest.raises(MemoStoreError, match="none: no memo store here"):
        compact(tmp_path / "none", key=None)
    path = tmp_path / "memo"
    MemoStore.open(path, key=read_memo_key(keys[0])).close()
    before = store_bytes(path)
    with pytest.raises(MemoStoreError, match="sealed with another key"):
        compact(path, key=read_memo_key(keys[1]))
    assert store_bytes(path) == before


# -- end to end ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_run_over_a_store_with_a_corrupt_entry_completes_with_one_warning(tmp_path, wormhole):
    ring = REPO / "tests" / "scripts" / "flow_dag_ring.py"
    memo = tmp_path / "memo"

    def run(name: str):
        results, trace = tmp_path / f"{name}.json", tmp_path / f"{name}.csv"
        done = wormhole("run", "--results", results, "--trace", trace, "--memo", memo, ring, "--iterations", "2")
        return done, load_json(results) if results.exists() else None, list(csv.DictReader(trace.open()))

    cold_done, cold, _ = run("cold")
    assert cold_done.returncode == 0, cold_done.stderr
    with MemoStore.open(memo) as store:
        entry = store.entries()[0]
    flip_stored_byte(memo, bytes.fromhex(entry.key))

    done, warm, _ = run("warm")
    assert done.returncode == 0, done.stderr
    assert done.stderr_lines == [
        f"wormhole-ns3: warning: {memo}: entry {entry.key} is corrupt (checksum mismatch):"
        " quarantined, its episode is simulated"
    ]
    # the corrupt entry's episodes are simulated; the others still replay
    assert warm["memo_misses"] >= 1 and warm["memo_hits"] >= 1
    fct = {(f["src"], f["dst"], f["sport"], f["dport"]): f["fct"] for f in cold["flows"]}
    assert {(f["src"], f["dst"], f["sport"], f["dport"]) for f in warm["flows"]} == fct.keys()
    for flow in warm["flows"]:
        assert flow["fct"] == pytest.approx(fct[(flow["src"], flow["dst"], flow["sport"], flow["dport"])], rel=1e-3)
    with MemoStore.open(memo) as store:
        assert store.verify().corrupt == [] and len(store.quarantined()) == 1
