"""Training iterations a script reports in its output, for a script that writes no tables of its own.

A user's script (``experiments/zoo``) has no ``ResultWriter``: it prints what a
user prints, among which one line per training iteration, such as
``iteration 3 end 0.412``. An experiment that says so
(``Experiment.iteration_lines``) has the runner turn those lines into
``iterations.csv``, as it turns the flows the harness tracked into
``flows.csv``, so that ``compare`` reports its iteration time error too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

#: ``iteration K end SECONDS``: K counts from 0, SECONDS is when its last flow finished (simulated time).
ITERATION_END = re.compile(r"iteration (\d+) end (\S+)")


class IterationLinesError(ValueError):
    """A script's output holds no iteration lines, or lines that do not count its iterations from 0.

    Its message is a predicate of the script ("printed no line matching ...").
    """


@dataclass(frozen=True)
class IterationLines:
    """How a script prints its iterations: each whole line matching ``pattern``, whose groups are the
    iteration's number and the simulated second its last flow finished.

    A line whose time is not a number (``iteration 3 end unfinished``) is an
    iteration that did not finish; it and the iterations after it get no row.
    """

    pattern: re.Pattern[str] = field(default=ITERATION_END)

    def rows(self, output: str) -> list[tuple[int, float, float, float]]:
        """``iterations.csv`` rows (iteration, start, finish, time) of the iterations ``output`` reports.

        An iteration starts where the one before it finished, the first at 0,
        when the simulation starts, as ``ResultWriter`` times a workload's.
        """
        reported = [match.groups() for match in map(self.pattern.fullmatch, output.splitlines()) if match]
        if not reported:
            raise IterationLinesError(f"printed no line matching '{self.pattern.pattern}'")
        rows: list[tuple[int, float, float, float]] = []
        for expected, (number, end) in enumerate(reported):
            if int(number) != expected:
                raise IterationLinesError(f"printed iteration {number} where iteration {expected} was due "
                                          "(iterations count from 0, in order)")
            try:
                finish = float(end)
            except ValueError:
                break
            start = rows[-1][2] if rows else 0.0
            rows.append((expected, start, finish, finish - start))
        return rows
