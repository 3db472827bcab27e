"""Memoization is on by default, in a store of the run's own; ``--memo PATH`` keeps it, ``--no-memo`` turns it off."""

from pathlib import Path

import pytest

from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.tools.cli import build_parser
from wormhole_ns3.tools.options import run_command


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


@pytest.mark.parametrize("command", ["run", "compare"])
def test_memo_and_no_memo_exclude_each_other(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([command, "--memo", "m", "--no-memo", "script.py"])
    assert exit_.value.code == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_the_default_is_neither_kept_nor_off():
    args = build_parser().parse_args(["run", "script.py"])
    assert args.memo is None and args.no_memo is False


def test_experiment_commands_take_no_memo():
    args = build_parser().parse_args(["experiment", "run", "llm-training", "--no-memo"])
    assert args.no_memo is True


def _accelerated(**memo) -> list[str]:
    return run_command("s.py", [], Path("r.json"), False, AcceleratorConfig(), **memo)


def test_the_child_command_says_which_memo():
    assert "--memo" not in _accelerated() and "--no-memo" not in _accelerated()
    assert "--no-memo" in _accelerated(no_memo=True)
    kept = _accelerated(memo=Path("m"))
    assert kept[kept.index("--memo") + 1] == "m"
    baseline = run_command("s.py", [], Path("r.json"), True, AcceleratorConfig(), no_memo=True)
    assert "--no-memo" not in baseline
