"""--out and --force: a result folder is replaced only when it is one this product wrote."""

import pytest

from wormhole_ns3.tools.experiment.outdir import StagedDir, check_writable, is_result
from wormhole_ns3.tools.experiment.registry import ExperimentError


def finished_result(folder, marker="summary.json"):
    folder.mkdir()
    (folder / marker).write_text("{}\n")
    (folder / "flows.csv").write_text("task\n")
    return folder


def users_folder(folder):
    folder.mkdir()
    (folder / "thesis.tex").write_text("my own work\n")
    return folder


def stage_and_commit(out, force):
    staged = StagedDir.create(out, force)
    (staged.staging / "summary.json").write_text('{"new": true}\n')
    return staged.commit()


@pytest.mark.parametrize("force", [False, True])
def test_a_folder_of_the_users_own_files_is_never_replaced(tmp_path, force):
    out = users_folder(tmp_path / "out")
    with pytest.raises(ExperimentError) as error:
        StagedDir.create(out, force)
    assert str(error.value) == (
        f"{out} holds files that are not a wormhole-ns3 result: refusing to replace it; choose another --out")
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]
    assert not (tmp_path / "out.partial").exists()


def test_a_result_is_refused_without_force(tmp_path):
    out = finished_result(tmp_path / "out")
    with pytest.raises(ExperimentError) as error:
        StagedDir.create(out)
    assert str(error.value) == f"{out} already holds results; choose another --out or pass --force to replace them"


@pytest.mark.parametrize("marker", ["summary.json", "runs.csv"])
def test_force_replaces_a_result_the_product_wrote(tmp_path, marker):
    out = finished_result(tmp_path / "out", marker)
    assert stage_and_commit(out, force=True) == out
    assert [p.name for p in out.iterdir()] == ["summary.json"]
    assert (out / "summary.json").read_text() == '{"new": true}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging or replaced folder left


def test_an_empty_folder_or_none_receives_a_result_without_force(tmp_path):
    (tmp_path / "empty").mkdir()
    assert stage_and_commit(tmp_path / "empty", force=False).is_dir()
    assert stage_and_commit(tmp_path / "new" / "out", force=False).is_dir()


def test_user_files_that_appear_during_the_run_are_kept_even_with_force(tmp_path):
    out = tmp_path / "out"
    staged = StagedDir.create(out, force=True)
    (staged.staging / "summary.json").write_text("{}\n")
    users_folder(out)
    with pytest.raises(ExperimentError, match="was filled while this run went on; its result is kept in"):
        staged.commit()
    assert [p.name for p in out.iterdir()] == ["thesis.tex"]
    assert (staged.staging / "summary.json").exists()


def test_what_counts_as_a_result(tmp_path):
    assert is_result(finished_result(tmp_path / "run"))
    assert is_result(finished_result(tmp_path / "sweep", "runs.csv"))
    assert not is_result(users_folder(tmp_path / "mine"))
    assert not is_result(tmp_path / "missing")
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "summary.json").mkdir()  # a folder of that name is not the product's file
    assert not is_result(tmp_path / "odd")


def test_a_sweep_folder_is_checked_the_same_way(tmp_path):
    check_writable(finished_result(tmp_path / "sweep", "runs.csv"), force=True)
    with pytest.raises(ExperimentError, match="holds files that are not a wormhole-ns3 result"):
        check_writable(users_folder(tmp_path / "mine"), force=True)
