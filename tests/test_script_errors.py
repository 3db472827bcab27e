"""Bad input gets Python's own answer: same exit code, same traceback, one-line errors."""

import textwrap

import pytest


@pytest.fixture
def broken_script(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text(
        textwrap.dedent(
            """\
            import sys

            def helper():
                raise ValueError("the script's own error")

            print("before the error")
            helper()
            """
        )
    )
    return script


def test_a_script_error_gives_the_scripts_own_traceback_and_exit_code(wormhole, plain_python, broken_script):
    plain = plain_python(broken_script)
    ours = wormhole("run", broken_script)
    assert plain.returncode == ours.returncode == 1
    assert ours.stdout == plain.stdout == "before the error\n"
    assert ours.stderr_lines == plain.stderr_lines
    assert ours.stderr_lines[-1] == "ValueError: the script's own error"


def test_a_scripts_exit_code_is_passed_through(wormhole, tmp_path):
    script = tmp_path / "exits.py"
    script.write_text("import sys\nprint(sys.argv[1:])\nsys.exit(3)\n")
    done = wormhole("run", script, "--", "--flag", "value")
    assert done.returncode == 3
    assert done.stdout == "['--flag', 'value']\n"


def test_a_missing_script_is_a_one_line_error(wormhole, tmp_path):
    done = wormhole("run", tmp_path / "nowhere.py")
    assert done.returncode == 2
    assert len(done.stderr_lines) == 1
    assert "nowhere.py" in done.stderr_lines[0]


def test_an_unknown_option_is_a_one_line_usage_error(wormhole):
    done = wormhole("run", "--no-such-option", "x.py")
    assert done.returncode == 2
    assert done.stderr_lines[-1] == "wormhole-ns3: error: unrecognized arguments: --no-such-option"


def test_a_bad_setting_is_refused_before_anything_runs(wormhole, tmp_path):
    done = wormhole("run", "--theta", "2", tmp_path / "x.py")
    assert done.returncode == 2
    assert "theta" in done.stderr_lines[-1]


def test_a_results_file_in_a_missing_folder_gets_its_folder(wormhole, tmp_path):
    script = tmp_path / "prints.py"
    script.write_text("print('done')\n")
    results = tmp_path / "new" / "deeper" / "run.json"
    done = wormhole("run", "--results", results, script)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "done\n"
    assert results.is_file()


def test_a_results_file_that_cannot_be_written_is_refused_before_the_script_runs(wormhole, tmp_path):
    script = tmp_path / "prints.py"
    script.write_text("print('ran')\n")
    (tmp_path / "a-file").write_text("")
    done = wormhole("run", "--results", tmp_path / "a-file" / "run.json", script)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr_lines == [
        f"wormhole-ns3: error: cannot write the results file {tmp_path}/a-file/run.json: "
        f"{tmp_path}/a-file is a file, not a folder"]
