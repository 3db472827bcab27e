"""What an experiment script writes while it runs, and how the runner reads it back.

An experiment script (an ordinary ns-3 script running a ``Workload`` on a
``FlowDag``) creates a ``ResultWriter`` on the folder the runner gives it
with ``--results-dir`` and hands it each finished task, e.g.
``WorkloadRun(ns, workload, hosts, on_finish=writer.task_finished)``. Rows are
appended and flushed as the run goes, so a run that is interrupted after hours
keeps every flow and iteration it finished.
Values are written the same way every time (fixed column order, ``repr`` of
floats), so the same run gives the same files byte for byte.

Files in the folder:

* ``workload.json`` -- the workload, written before the run starts;
* ``flows.csv`` -- one row per finished flow task (``FLOW_COLUMNS``): the task's
  labels from the workload, its start (release + delay) and finish (last byte
  received) in simulated seconds, and ``fct = finish - start``;
* ``iterations.csv`` -- one row per finished training iteration (``ITERATION_COLUMNS``);
* ``fct.txt`` -- with ``FctLabels``, one line per finished flow as HPCC writes it
  (its node-id addresses, the flow's ports, a standalone FCT), so that HPCC's
  own analysis scripts read it; without, the runner writes one from the
  harness's results.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from wormhole_ns3.models.workloads import Workload, fct_line, hpcc_address, write_fct
from wormhole_ns3.models.workloads.dag import FLOW

WORKLOAD_FILE = "workload.json"
FLOWS_FILE = "flows.csv"
ITERATIONS_FILE = "iterations.csv"
FCT_FILE = "fct.txt"

FLOW_COLUMNS = (
    "task", "iteration", "collective", "group", "step", "phase", "src", "dst", "bytes", "start", "finish", "fct",
)
ITERATION_COLUMNS = ("iteration", "start", "finish", "time")
#: Columns read back as text even when a file holds none (labels may be empty).
_TEXT_COLUMNS = ("collective", "group", "phase")


@dataclass(frozen=True)
class FctLabels:
    """What HPCC's ``fct.txt`` names and a workload does not hold.

    ``node_ids`` maps a rank to its node id (in a topology file, else the
    rank), ``ports`` a flow task to its (source, destination) port, and
    ``standalone_s`` a flow task to its FCT alone on the idle fabric.
    """

    node_ids: Sequence[int]
    ports: Callable[[int], tuple[int, int]]
    standalone_s: Callable[[int], float]


class ResultWriter:
    """Appends a script's finished flows and iterations to CSV files in ``out_dir`` as they happen.

    ``start_time`` is when the workload started (the simulated time of
    ``FlowDag::Start``): the first iteration is timed from it, every later one
    from the end of the previous one, since the next iteration's tasks wait
    for that end (``WorkloadBuilder.end_iteration``).
    """

    def __init__(self, out_dir: Path, workload: Workload, start_time: float = 0.0,
                 fct: FctLabels | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.workload = workload
        write_parts_atomically(self.out_dir / WORKLOAD_FILE, workload.json_parts())
        self._iteration_of_end = {task: k for k, task in enumerate(workload.iteration_ends)}
        self._iteration_finish: dict[int, float] = {}
        self._start_time = start_time
        self._flows, self._flow_rows = _open_table(self.out_dir / FLOWS_FILE, FLOW_COLUMNS)
        self._iterations, self._iteration_rows = _open_table(self.out_dir / ITERATIONS_FILE, ITERATION_COLUMNS)
        self._fct_labels = fct
        self._fct = (self.out_dir / FCT_FILE).open("w") if fct is not None else None

    def task_finished(self, task_id: int, start: float, finish: float) -> None:
        """Record any finished task: a flow gets its row, an iteration's end closes the iteration."""
        task = self.workload.tasks[task_id]
        if task.kind == FLOW:
            self.flow_finished(task_id, start, finish)
        k = self._iteration_of_end.get(task_id)
        if k is not None:
            if k > 0 and k - 1 not in self._iteration_finish:
                raise ValueError(f"iteration {k} ended before iteration {k - 1}")
            self.iteration_finished(k, self._iteration_finish.get(k - 1, self._start_time), finish)

    def flow_finished(self, task_id: int, start: float, finish: float) -> None:
        """One row of ``flows.csv`` for flow task ``task_id``, flushed at once."""
        t = self.workload.tasks[task_id]
        self._flow_rows.writerow(
            (t.id, t.iteration, t.collective, t.group, t.step, t.phase, t.src, t.dst, t.bytes,
             float(start), float(finish), float(finish) - float(start))
        )
        self._flows.flush()
        if self._fct is not None and self._fct_labels is not None:
            labels = self._fct_labels
            sport, dport = labels.ports(task_id)
            self._fct.write(fct_line(hpcc_address(labels.node_ids[t.src]), hpcc_address(labels.node_ids[t.dst]),
                                     sport, dport, t.bytes, float(start), float(finish) - float(start),
                                     labels.standalone_s(task_id)))
            self._fct.flush()

    def iteration_finished(self, k: int, start: float, finish: float) -> None:
        """One row of ``iterations.csv`` for iteration ``k``, flushed at once."""
        self._iteration_finish[k] = float(finish)
        self._iteration_rows.writerow((k, float(start), float(finish), float(finish) - float(start)))
        self._iterations.flush()

    def close(self) -> None:
        self._flows.close()
        self._iterations.close()
        if self._fct is not None:
            self._fct.close()

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _open_table(path: Path, columns: tuple[str, ...]):
    """A fresh CSV file with its header written; csv writes floats as their repr."""
    handle = path.open("w", newline="")
    rows = csv.writer(handle, lineterminator="\n")
    rows.writerow(columns)
    handle.flush()
    return handle, rows


def counted(n: int, noun: str) -> str:
    """``n`` and the noun, in the singular for one: "1 iteration", "4 iterations"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def write_atomically(path: Path, text: str) -> None:
    """Write a whole text file so that a reader sees the old file or the new one, never half of one."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    partial.replace(path)


def write_parts_atomically(path: Path, parts: Iterable[str]) -> None:
    """``write_atomically`` for text made piece by piece (a workload of millions of tasks), never held whole."""
    partial = path.with_name(path.name + ".partial")
    with partial.open("w") as handle:
        handle.writelines(parts)
    partial.replace(path)


def read_flows(path: Path):
    """``flows.csv`` as a DataFrame (empty labels stay empty strings)."""
    return _read_table(path, FLOW_COLUMNS)


def read_iterations(path: Path):
    """``iterations.csv`` as a DataFrame."""
    return _read_table(path, ITERATION_COLUMNS)


def _read_table(path: Path, columns: tuple[str, ...]):
    import pandas as pd  # here: the scripts import this module inside the simulation and never read

    text = {c: str for c in _TEXT_COLUMNS if c in columns}
    frame = pd.read_csv(path, dtype=text, keep_default_na=False)
    if tuple(frame.columns) != columns:
        raise ValueError(f"{path}: columns {', '.join(frame.columns)}, expected {', '.join(columns)}")
    return frame


def write_flow_table(rows: list[tuple], path: Path) -> None:
    """Write ``flows.csv`` at once from rows in ``FLOW_COLUMNS`` order (for scripts without a ResultWriter)."""
    _write_table(FLOW_COLUMNS, rows, path)


def write_iteration_table(rows: list[tuple], path: Path) -> None:
    """Write ``iterations.csv`` at once from rows in ``ITERATION_COLUMNS`` order (for scripts without a
    ResultWriter)."""
    _write_table(ITERATION_COLUMNS, rows, path)


def _write_table(columns: tuple[str, ...], rows: list[tuple], path: Path) -> None:
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows(rows)
    partial.replace(path)


def write_hpcc_fct(run_results: dict, path: Path) -> None:
    """HPCC-style ``fct.txt`` of every finished flow of a run, from the harness's results (``run.json``).

    The harness knows each flow's addresses and ports, which ``fct.txt`` needs
    and the workload does not, and its standalone FCT (FlowTracker::GetStandaloneTime).
    """
    write_fct(run_results["flows"], path)
