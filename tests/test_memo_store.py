"""The LMDB memo store: shared by processes, survives SIGKILL, refuses what it cannot trust."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import lmdb
import pytest
from scripts.memo_writer import value_of

from wormhole_ns3.core.flows import TrajectoryPoint
from wormhole_ns3.memo import environment as environment_module
from wormhole_ns3.memo import schema
from wormhole_ns3.memo.errors import CorruptEntry, MemoStoreError
from wormhole_ns3.memo.record import (
    Arrival,
    EpisodeRecord,
    FlowOutcome,
    add_continuation,
    add_replays,
    decode_value,
    encode_continuations,
)
from wormhole_ns3.memo.seal import KEY_ENVIRONMENT
from wormhole_ns3.memo.signature import Signature
from wormhole_ns3.memo.store import MemoStore, default_memo_path

from conftest import REPO


def _sig(name: str) -> Signature:
    """A signature naming a flow and none of its links: enough for a record's bookkeeping."""
    return Signature(name, (), ())

WRITER = REPO / "tests" / "scripts" / "memo_writer.py"


def start_writer(path: Path, writer: str, first: int, count: int, *options: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(path), writer, str(first), str(count), *options],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def committed(lines: list[str]) -> list[tuple[float, int, bool]]:
    return [(float(t), int(i), s == "1") for t, i, s in (line.split() for line in lines)]


@pytest.fixture(autouse=True)
def _no_memo_key(monkeypatch):
    monkeypatch.delenv(KEY_ENVIRONMENT, raising=False)


def episode_value(seed: int, points: int = 3) -> bytes:
    """A stored value a replay reads: one continuation of a one-flow episode."""
    trajectory = tuple(TrajectoryPoint(1000 * i, 100 * i + seed, (10.0, 1.0 * seed)) for i in range(points))
    record = EpisodeRecord(initial=1, arrivals=(Arrival(0, _sig(f"flow {seed}")),),
                           outcomes=(FlowOutcome(1000 * points + seed, trajectory),),
                           close_ns=1000 * points + seed, events=1000 + seed, events_avoided=0)
    return encode_continuations([record])


def tamper(data_file: Path, old: bytes, new: bytes) -> bytes:
    """Replace every copy of ``old`` (LMDB keeps stale copies in freed pages) and return the file."""
    data = data_file.read_bytes()
    assert old in data and len(old) == len(new)
    data_file.write_bytes(data.replace(old, new))
    return data_file.read_bytes()


def test_put_get_and_counters_persist_across_opens(tmp_path):
    path = tmp_path / "memo"
    with MemoStore.open(path) as store:
        assert store.put(b"k1", b"outcome one", {"flows": 2})
        assert not store.put(b"k1", b"another outcome", {"flows": 3})  # the first writer wins
        assert store.get(b"k1") == b"outcome one"
        assert store.get(b"k1") == b"outcome one"
        assert store.get(b"k2") is None
    with MemoStore.open(path, create=False) as store:
        stats = store.stats()
        assert (stats.entries, stats.hits, stats.misses, stats.bytes) == (1, 2, 1, len(b"outcome one"))
        assert stats.schema_version == schema.SCHEMA_VERSION
        assert stats.created_by.startswith("wormhole-ns3 ")
        [entry] = store.entries()
        assert (entry.key, entry.meta, entry.hits, entry.size) == (b"k1".hex(), {"flows": 2}, 2, 11)


def test_a_closed_store_says_so(tmp_path):
    store = MemoStore.open(tmp_path / "memo")
    store.close()
    store.close()
    with pytest.raises(ValueError, match="memo store .*memo is closed"):
        store.get(b"episode")


def test_two_processes_creating_and_writing_one_store_at_once(tmp_path):
    path, go = tmp_path / "memo", tmp_path / "go"  # the store does not exist yet: both create it
    a = start_writer(path, "A", 0, 300, "--start-when", str(go))
    b = start_writer(path, "B", 150, 300, "--start-when", str(go))  # keys 150-299 are written by both
    assert a.stdout.readline() == b.stdout.readline() == "ready\n", a.stderr.read() + b.stderr.read()
    go.touch()
    out_a, err_a = a.communicate(timeout=120)
    out_b, err_b = b.communicate(timeout=120)
    assert (a.returncode, b.returncode) == (0, 0), err_a + err_b
    lines_a, lines_b = committed(out_a.splitlines()), committed(out_b.splitlines())
    assert len(lines_a) == len(lines_b) == 300
    # they did run at the same time
    assert lines_a[0][0] < lines_b[-1][0] and lines_b[0][0] < lines_a[-1][0]

    stored_by = {}
    for writer, lines in (("A", lines_a), ("B", lines_b)):
        for _, index, stored in lines:
            if stored:
                assert index not in stored_by, f"key {index} stored twice"
                stored_by[index] = writer
    assert sorted(stored_by) == list(range(450))
    with MemoStore.open(path, create=False) as store:
        for index, writer in stored_by.items():
            assert store.get(f"key-{index:06d}".encode()) == value_of(writer, index, 100)
        stats = store.stats()
        entries = store.entries()
    assert stats.entries == 450
    assert stats.hits == 600 + 450 and stats.misses == 0
    assert sum(e.hits for e in entries) == stats.hits
    assert stats.bytes == 450 * 100


def test_a_process_killed_mid_write_leaves_a_store_that_opens_and_answers(tmp_path):
    path = tmp_path / "memo"
    writer = start_writer(path, "K", 0, 100_000, "--value-size", str(300_000), "--map-size", str(1 << 20))
    lines = []
    while len(lines) < 100:
        line = writer.stdout.readline()
        assert line, writer.stderr.read()
        lines.append(line)
    writer.send_signal(signal.SIGKILL)
    rest, _ = writer.communicate(timeout=30)  # what it printed before it died
    acknowledged = [index for _, index, _ in committed(lines + rest.splitlines())]

    with MemoStore.open(path, create=False) as store:
        stats = store.stats()
        for index in acknowledged:
            assert store.get(f"key-{index:06d}".encode()) == value_of("K", index, 300_000)
        assert store.put(b"after the kill", b"fine", {})
        assert store.get(b"after the kill") == b"fine"
    # every acknowledged put is there; at most the one in flight besides
    assert len(acknowledged) <= stats.entries <= len(acknowledged) + 1
    # the killed process read each entry back once, and each put wrote the counts before it
    assert len(acknowledged) - 1 <= stats.hits <= len(acknowledged)


def test_a_killed_reader_loses_only_the_counts_it_had_not_flushed(tmp_path):
    path = tmp_path / "memo"
    with MemoStore.open(path) as store:
        store.put(b"episode", b"outcome", {})
    reader = (
        "import os, signal, sys\n"
        "from wormhole_ns3.memo.store import MemoStore\n"
        "store = MemoStore.open(sys.argv[1], flush_every=10)\n"
        "for _ in range(25): assert store.get(b'episode') == b'outcome'\n"
        "for _ in range(7): assert store.get(b'absent') is None\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    killed = subprocess.run(
        [sys.executable, "-c", reader, str(path)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    with MemoStore.open(path) as store:
        stats = store.stats()
        [entry] = store.entries()
    # flushed after 10, 20 and 30 reads: 25 hits and 5 misses; the last 2 misses were lost
    assert (stats.hits, stats.misses, entry.hits) == (25, 5, 25)


def test_a_tampered_value_is_never_returned_but_quarantined_with_its_bytes(tmp_path, capsys):
    path = tmp_path / "memo"
    outcome = b"bytes each flow sent: 123456789;" * 8
    with MemoStore.open(path) as store:
        store.put(b"episode", outcome, {"flows": 4})
        store.put(b"other", b"untouched", {})
        store.get(b"episode")
    tamper(path / "data.mdb", outcome, outcome.replace(b"123", b"923", 1))

    with MemoStore.open(path, create=False) as store:
        with pytest.raises(CorruptEntry) as refused:  # an export never carries it
            store.export(path.parent / "export.jsonl")
        assert str(refused.value) == (
            f"{path}: entry {b'episode'.hex()} is corrupt (checksum mismatch); refusing to replay it"
        )
        assert not (path.parent / "export.jsonl").exists()
        assert store.get(b"episode") is None  # a miss: its episode is simulated
        assert capsys.readouterr().err.splitlines() == [
            f"wormhole-ns3: warning: {path}: entry {b'episode'.hex()} is corrupt (checksum mismatch):"
            " quarantined, its episode is simulated"
        ]
        assert store.get(b"episode") is None and capsys.readouterr().err == ""  # set aside once
        assert store.get(b"other") == b"untouched"
        [aside] = store.quarantined()
        assert (aside.key, aside.reason, aside.hits) == (b"episode".hex(), "is corrupt (checksum mismatch)", 1)
        assert outcome.replace(b"123", b"923", 1) in aside.stored  # the stored bytes, exactly as they were
        assert len(aside.stored) == 32 + 4 + len(b'{"flows":4}') + len(outcome)
        stats = store.stats()
        assert (stats.entries, stats.quarantined, stats.bytes, stats.misses) == (1, 1, len(b"untouched"), 2)
        assert store.export(path.parent / "export.jsonl") == 1
        assert store.put(b"episode", outcome, {})  # recorded again, beside the quarantined copy
    with MemoStore.open(path, create=False) as store:
        assert store.get(b"episode") == outcome
        assert len(store.quarantined()) == 1
        assert store.clear().entries == 2
        assert len(store.quarantined()) == 1  # clear never deletes the quarantine


def test_a_tampered_schema_record_is_refused_and_the_store_left_as_it_is(tmp_path):
    path = tmp_path / "memo"
    with MemoStore.open(path) as store:
        store.put(b"episode", b"outcome", {})
    version = schema.SCHEMA_VERSION
    tampered = tamper(path / "data.mdb", f'"schema": {version}'.encode(), f'"schema": {version + 1}'.encode())

    with pytest.raises(MemoStoreError) as refused:
        MemoStore.open(path)
    assert str(refused.value) == (
        f"{path}: the schema record is corrupt (checksum mismatch); refusing to use the store"
    )
    assert (path / "data.mdb").read_bytes() == tampered


def test_a_store_of_another_schema_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "memo"
    monkeypatch.setattr(environment_module, "SCHEMA_VERSION", 7)
    MemoStore.open(path).close()
    monkeypatch.undo()
    before = (path / "data.mdb").read_bytes()
    with pytest.raises(MemoStoreError) as refused:
        MemoStore.open(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: memo store of schema 7 (created by wormhole-ns3 ")
    assert message.endswith(f"reads schema {schema.SCHEMA_VERSION}, use another --memo path")
    assert "\n" not in message
    assert (path / "data.mdb").read_bytes() == before


def test_a_file_at_the_path_is_refused_and_not_touched(tmp_path):
    path = tmp_path / "memo"
    path.write_text("my notes\n")
    with pytest.raises(MemoStoreError, match=r"memo: not a memo store \(a file; a store is a directory\)"):
        MemoStore.open(path)
    assert path.read_text() == "my notes\n"


def test_a_directory_of_other_files_is_refused_and_nothing_is_written_into_it(tmp_path):
    (tmp_path / "results.csv").write_text("a,b\n")
    refusal = r"not a memo store \(a directory without data.mdb\); refusing to write into it"
    with pytest.raises(MemoStoreError, match=refusal):
        MemoStore.open(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.csv"]


def test_a_data_file_that_is_not_lmdb_is_refused_and_not_overwritten(tmp_path):
    path = tmp_path / "memo"
    path.mkdir()
    garbage = b"not an lmdb file " * 1000
    (path / "data.mdb").write_bytes(garbage)
    with pytest.raises(MemoStoreError, match=r"memo: not a readable LMDB store \(.*not an LMDB file"):
        MemoStore.open(path)
    assert (path / "data.mdb").read_bytes() == garbage


def test_a_truncated_data_file_is_refused(tmp_path):
    path = tmp_path / "memo"
    with MemoStore.open(path) as store:
        for i in range(50):
            store.put(f"k{i}".encode(), os.urandom(5000), {})
    data = (path / "data.mdb").read_bytes()
    (path / "data.mdb").write_bytes(data[: len(data) // 2])
    with pytest.raises(MemoStoreError, match=r"memo: data.mdb is truncated \(\d+ bytes, its pages need \d+"):
        MemoStore.open(path)


def test_an_lmdb_environment_of_another_program_is_refused(tmp_path):
    path = tmp_path / "other"
    with lmdb.open(str(path)) as env, env.begin(write=True) as txn:
        txn.put(b"user", b"data")
    with pytest.raises(MemoStoreError, match=r"other: not a wormhole-ns3 memo store \(its LMDB holds 'user'"):
        MemoStore.open(path)


def test_opening_without_create_needs_a_store(tmp_path):
    with pytest.raises(MemoStoreError, match="missing: no memo store here"):
        MemoStore.open(tmp_path / "missing", create=False)
    assert not (tmp_path / "missing").exists()


def test_the_map_grows_for_many_values_and_for_one_bigger_than_the_map(tmp_path):
    path = tmp_path / "memo"
    initial = 64 << 10
    big = os.urandom(3 << 20)
    with MemoStore.open(path, map_size=initial) as store:
        for i in range(300):
            assert store.put(f"small-{i}".encode(), bytes([i % 256]) * 10_000, {"i": i})
        assert store.put(b"big", big, {})
        assert store.get(b"big") == big
        stats = store.stats()
    assert stats.entries == 301
    assert stats.bytes == 300 * 10_000 + len(big)
    assert stats.disk_bytes > len(big) > initial  # the file outgrew the first map


def test_a_map_grown_by_another_process_is_adopted(tmp_path):
    path = tmp_path / "memo"
    with MemoStore.open(path, map_size=64 << 10) as store:
        store.put(b"mine", b"small", {})
        grower = start_writer(path, "G", 0, 20, "--value-size", str(200_000), "--map-size", str(64 << 10))
        _, err = grower.communicate(timeout=60)
        assert grower.returncode == 0, err
        assert store.get(b"key-000019") == value_of("G", 19, 200_000)
        assert store.put(b"mine too", b"x" * 100_000, {})
        assert store.stats().entries == 22


def test_clear_then_import_of_an_export_gives_back_the_same_entries(tmp_path):
    path = tmp_path / "memo"
    exported, again = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    values = [episode_value(i, points=1 + i) for i in range(20)]
    with MemoStore.open(path) as store:
        for i in range(20):
            store.put(f"episode-{i}".encode(), values[i], {"flows": i, "ns3": "3.44"})
        assert store.export(exported) == 20
        removed = store.clear()
        assert (removed.entries, removed.bytes) == (20, sum(map(len, values)))
        assert store.entries() == []
        assert store.stats().bytes == 0
        assert store.import_file(exported) == 20
        assert store.import_file(exported) == 0  # existing keys are kept
        assert store.export(again) == 20
        assert [store.get(f"episode-{i}".encode()) for i in range(20)] == values
    # the entry lines are the same; the header says who wrote it when, the last line is a digest
    assert again.read_text().splitlines()[1:-1] == exported.read_text().splitlines()[1:-1]
    header, *lines, trailer = [json.loads(line) for line in exported.read_text().splitlines()]
    assert header["kind"] == schema.EXPORT_KIND and header["schema"] == schema.SCHEMA_VERSION
    assert header["entries"] == 20 and header["seal"] == "sha256" and "@" in header["written_by"]
    assert header["product"].startswith("wormhole-ns3 ") and header["ns3"] and header["written_at"]
    assert trailer["seal"] == "sha256" and len(trailer["digest"]) == 64
    assert sorted(line["meta"]["flows"] for line in lines) == list(range(20))


def test_a_damaged_export_is_refused_with_its_line(tmp_path):
    exported = tmp_path / "export.jsonl"
    with MemoStore.open(tmp_path / "memo") as store:
        store.put(b"a", episode_value(1), {})
        store.put(b"b", episode_value(2), {})
        store.export(exported)
        lines = exported.read_text().splitlines()
        entry = json.loads(lines[2])
        entry["value"] = "dGhyZWU="  # "three"
        exported.write_text("\n".join([lines[0], lines[1], json.dumps(entry), lines[3]]) + "\n")
        with pytest.raises(MemoStoreError, match=r"export.jsonl: digest mismatch: the export was edited"):
            store.import_file(exported)
        exported.write_text("\n".join(lines[:3]) + "\n")
        with pytest.raises(MemoStoreError, match=r"export.jsonl:3: no digest line \(the export is cut short"):
            store.import_file(exported)
        assert store.stats().entries == 2


def test_the_default_path_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("WORMHOLE_NS3_MEMO", str(tmp_path / "shared-memo"))
    assert default_memo_path() == tmp_path / "shared-memo"
    monkeypatch.delenv("WORMHOLE_NS3_MEMO")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_memo_path() == tmp_path / ".cache" / "wormhole-ns3" / "memo"


def test_a_track_record_survives_new_continuations_and_keeps_the_entry_meta(tmp_path):
    """How a key's replays went is kept with its continuations, across runs, and judged."""
    def record(finish_ns: int) -> EpisodeRecord:
        return EpisodeRecord(initial=1, arrivals=(Arrival(0, _sig("s")),), outcomes=(FlowOutcome(finish_ns, ()),),
                             close_ns=finish_ns, events=10, events_avoided=0)

    key = b"k" * 16
    with MemoStore.open(tmp_path / "memo") as store:
        # a key never recorded (a mirror of a recording that merged away) gets a track record too
        assert store.update(key, lambda value: add_replays(value, 0, 1))
        records, track = decode_value(store.get(key))
        assert records == [] and (track.completed, track.diverged) == (0, 1) and not track.trusted()
        assert store.update(key, lambda value: add_continuation(value, record(5)), {"flows": 1})
        assert store.update(key, lambda value: add_replays(value, 4, 0))
        entry = next(e for e in store.entries() if e.key == key.hex())
        assert entry.meta == {"flows": 1}  # add_replays kept the record's meta
    with MemoStore.open(tmp_path / "memo") as store:
        records, track = decode_value(store.get(key))
        assert [r.close_ns for r in records] == [5]
        assert (track.completed, track.diverged) == (4, 1) and track.trusted()
        store.update(key, lambda value: add_replays(value, 0, 1))
        assert not decode_value(store.get(key))[1].trusted()


def test_a_record_reads_back_as_written_with_its_trailing_queues_and_what_it_lacked():
    outcome = FlowOutcome(5000, (TrajectoryPoint(1000, 10, (10.0, 2.0)),), rank=1, trailing=(587, 29, 0))
    record = EpisodeRecord(initial=1, arrivals=(Arrival(0, _sig("flow")),), outcomes=(outcome,), close_ns=5000,
                           events=900, events_avoided=0, foreseen="p", left_out=616, seen=3)
    (read,), _ = decode_value(encode_continuations([record]))
    assert read == record
    assert decode_value(encode_continuations([read]))[0] == [record]


def test_a_recording_that_lacked_packets_gives_way_only_to_a_plain_like_one_of_its_situation():
    """Situation: the opening flows and the joiners foreseen, what a lookup tells records apart by."""
    def record(finish: int, foreseen: str, left_out: int) -> EpisodeRecord:
        return EpisodeRecord(initial=1, arrivals=(Arrival(0, _sig("flow")),), outcomes=(FlowOutcome(finish, ()),),
                             close_ns=finish, events=900, events_avoided=0, foreseen=foreseen, left_out=left_out)

    def kept(value: bytes) -> list[tuple[int, str, int]]:
        return [(r.close_ns, r.foreseen, r.left_out) for r in decode_value(value)[0]]

    value = add_continuation(None, record(100, "", 0))
    value = add_continuation(value, record(90, "joiner at +5", 7))  # another situation: kept beside it
    assert kept(value) == [(100, "", 0), (90, "joiner at +5", 7)]
    assert add_continuation(value, record(95, "", 7)) is None  # the plain-like one of its situation stays
    value = add_continuation(value, record(97, "joiner at +5", 0))  # takes the place of the one that lacked some
    assert kept(value) == [(100, "", 0), (97, "joiner at +5", 0)]


def test_a_recording_that_took_a_stored_course_counts_it_seen_once_more():
    record = EpisodeRecord(initial=1, arrivals=(Arrival(0, _sig("flow")), Arrival(50, _sig("joiner"))),
                           outcomes=(FlowOutcome(100, ()), FlowOutcome(120, ())), close_ns=120, events=900,
                           events_avoided=0)
    value = add_continuation(add_continuation(None, record), record)
    assert [r.seen for r in decode_value(value)[0]] == [2]
    later = EpisodeRecord(initial=1, arrivals=record.arrivals, outcomes=(FlowOutcome(100, ()), FlowOutcome(130, ())),
                          close_ns=130, events=900, events_avoided=0)
    assert [r.seen for r in decode_value(add_continuation(value, later))[0]] == [2, 1]
