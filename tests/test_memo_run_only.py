"""``--memo :memory:``: a memo store of one run, recorded and replayed within it, gone after it."""

from pathlib import Path

import pytest

from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.memo.store import RUN_ONLY, MemoStore
from wormhole_ns3.tools.cli import build_parser
from wormhole_ns3.tools.options import run_command

from conftest import DUMBBELL, load_json


def test_a_run_only_store_works_and_leaves_nothing_behind():
    store = MemoStore.in_memory()
    folder = store.path.parent
    assert store.run_only and folder.is_dir()
    assert store.put(b"episode", b"outcome", {"flows": 2})
    assert store.get(b"episode") == b"outcome"
    assert store.stats().entries == 1
    store.close()
    assert not folder.exists()


def test_two_run_only_stores_are_apart():
    with MemoStore.in_memory() as first, MemoStore.in_memory() as second:
        first.put(b"episode", b"outcome", {})
        assert first.path != second.path
        assert second.get(b"episode") is None


def test_a_kept_store_is_not_run_only(tmp_path):
    with MemoStore.open(tmp_path / "memo") as store:
        assert not store.run_only
    assert (tmp_path / "memo").is_dir()


def test_the_run_only_store_is_named_like_sqlites():
    for command in (["run", "--memo", RUN_ONLY, "s.py"], ["experiment", "run", "ring", "--memo", RUN_ONLY]):
        assert str(build_parser().parse_args(command).memo) == ":memory:"
    child = run_command("s.py", [], Path("r.json"), False, AcceleratorConfig(), memo=Path(RUN_ONLY))
    assert child[child.index("--memo") + 1] == ":memory:"
    assert "--memo" not in run_command("s.py", [], Path("r.json"), True, AcceleratorConfig(), memo=Path(RUN_ONLY))


@pytest.mark.slow
def test_with_the_default_memo_a_flow_it_never_replays_runs_exactly_as_in_plain_ns3(wormhole, tmp_path):
    """Each start is decided at its own start event: nothing of its instant moves.

    H-TCP keeps wall-clock state, so the memo never replays it, and it is never
    skipped: with a memo store (the default), the run is plain ns-3 event for event.
    """
    args = [DUMBBELL, "--tcp", "TcpHtcp", "--flows", "3", "--min-mb", "5", "--max-mb", "10", "--stagger-ms", "1"]
    plain = wormhole("run", "--baseline", "--results", tmp_path / "plain.json", *args)
    memo = wormhole("run", "--results", tmp_path / "memo.json", "--trace", tmp_path / "trace.csv", *args)
    assert plain.returncode == memo.returncode == 0, memo.stderr
    assert plain.stdout == memo.stdout
    base, fast = load_json(tmp_path / "plain.json"), load_json(tmp_path / "memo.json")
    assert fast["memo_path"] is None and fast["memo_hits"] == 0  # the default: a store of this run
    assert fast["events"] == base["events"]
    assert [(f["id"], f["start"], f["fct"]) for f in fast["flows"]] == [
        (f["id"], f["start"], f["fct"]) for f in base["flows"]]
