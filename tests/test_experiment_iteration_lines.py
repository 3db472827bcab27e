"""Iterations a script that writes no tables prints, made into ``iterations.csv`` by the experiment runner.

The runner tests run trivial scripts (they print, and simulate nothing)
through the real harness, a few seconds each.
"""

import re

import pandas as pd
import pytest

from wormhole_ns3.tools.experiment.child import ChildOptions
from wormhole_ns3.tools.experiment.iteration_lines import IterationLines, IterationLinesError
from wormhole_ns3.tools.experiment.registry import Experiment, ExperimentError
from wormhole_ns3.tools.experiment.results import ITERATION_COLUMNS
from wormhole_ns3.tools.experiment.run import run_experiment

OUTPUT = """\
iteration 0 end 0.010499041
alltoall iteration 0 end 0.021940857
iteration 1 end 0.023785259
host 0 received 84000000 bytes
iteration 2 end 0.5
"""


def test_each_iteration_starts_where_the_one_before_finished_and_the_first_at_zero():
    assert IterationLines().rows(OUTPUT) == [
        (0, 0.0, 0.010499041, 0.010499041),
        (1, 0.010499041, 0.023785259, 0.023785259 - 0.010499041),
        (2, 0.023785259, 0.5, 0.5 - 0.023785259),
    ]


def test_an_iteration_that_did_not_finish_ends_the_rows():
    output = "iteration 0 end 0.25\niteration 1 end unfinished\niteration 2 end unfinished\n"
    assert IterationLines().rows(output) == [(0, 0.0, 0.25, 0.25)]


def test_an_experiment_may_say_how_its_script_prints_them():
    lines = IterationLines(re.compile(r"alltoall iteration (\d+) end (\S+)"))
    assert lines.rows(OUTPUT) == [(0, 0.0, 0.021940857, 0.021940857)]


@pytest.mark.parametrize("output, problem", [
    ("host 0 received 84000000 bytes\n", r"printed no line matching 'iteration (\d+) end (\S+)'"),
    ("iteration 1 end 0.5\n", "printed iteration 1 where iteration 0 was due (iterations count from 0, in order)"),
    ("iteration 0 end 0.5\niteration 0 end 0.6\n", "printed iteration 0 where iteration 1 was due"),
])
def test_no_lines_or_lines_out_of_order_are_a_problem(output, problem):
    with pytest.raises(IterationLinesError, match=re.escape(problem)):
        IterationLines().rows(output)


def printing_experiment(tmp_path, text: str) -> Experiment:
    script = tmp_path / "prints.py"
    script.write_text(f"print({text!r}, end='')\n")
    return Experiment("prints", script, "", {"p": []}, "p", results_dir_option=None,
                      iteration_lines=IterationLines())


def test_the_runner_writes_the_printed_iterations_as_iterations_csv(tmp_path):
    summary = run_experiment(printing_experiment(tmp_path, OUTPUT), "p", tmp_path / "out",
                             ChildOptions(baseline=True, echo=False))
    table = pd.read_csv(tmp_path / "out" / "iterations.csv")
    assert tuple(table.columns) == ITERATION_COLUMNS
    assert list(table.itertuples(index=False, name=None)) == IterationLines().rows(OUTPUT)
    assert summary["iteration_times_s"] == list(table["time"])


def test_a_script_that_prints_no_iteration_is_one_line_naming_its_output(tmp_path):
    experiment = printing_experiment(tmp_path, "host 0 received 84000000 bytes\n")
    with pytest.raises(ExperimentError) as error:
        run_experiment(experiment, "p", tmp_path / "out", ChildOptions(baseline=True, echo=False))
    staged = next(tmp_path.glob("out*.partial"))
    assert str(error.value) == (rf"the baseline prints p run printed no line matching 'iteration (\d+) end (\S+)' "
                                f"(its output: {staged / 'stdout.txt'})")
    assert error.value.exit_code == 2
