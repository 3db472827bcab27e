"""The result files an experiment script writes as it runs, and what the runner derives from a run's results."""

import csv

import pytest

from wormhole_ns3.models.workloads import Workload, WorkloadBuilder, ring_allreduce
from wormhole_ns3.tools.experiment.comparison import join_flows
from wormhole_ns3.tools.experiment.registry import ExperimentError
from wormhole_ns3.tools.experiment.results import (
    FLOW_COLUMNS,
    ITERATION_COLUMNS,
    ResultWriter,
    read_flows,
    read_iterations,
    write_hpcc_fct,
)
from wormhole_ns3.tools.experiment.run import harness_flow_rows


def two_iterations() -> Workload:
    """Iteration 0: compute on both ranks, then a 2-rank all-reduce; iteration 1: the all-reduce again."""
    builder = WorkloadBuilder("two", 2)
    ready = {rank: (builder.add_compute(rank, 0.001),) for rank in (0, 1)}
    for _ in range(2):
        done = ring_allreduce(builder, [0, 1], 2000, ready, group="dp", phase="backward")
        end = builder.end_iteration([task for tasks in done.values() for task in tasks])
        ready = {0: (end,), 1: (end,)}
    return builder.build()


def rows(path):
    with path.open() as handle:
        return list(csv.reader(handle))


def test_the_workload_is_written_before_anything_runs(tmp_path):
    workload = two_iterations()
    with ResultWriter(tmp_path / "out", workload):
        assert (tmp_path / "out" / "workload.json").read_text() == workload.to_json()
        assert rows(tmp_path / "out" / "flows.csv") == [list(FLOW_COLUMNS)]
        assert rows(tmp_path / "out" / "iterations.csv") == [list(ITERATION_COLUMNS)]


def test_each_row_is_on_disk_as_soon_as_it_is_reported(tmp_path):
    workload = two_iterations()
    flow = workload.flows[0]
    writer = ResultWriter(tmp_path, workload)
    writer.flow_finished(flow.id, 0.001, 0.0013)
    # still open: another process (the runner's progress bar, a reader after a crash) sees the row now
    assert rows(tmp_path / "flows.csv")[1] == [
        str(flow.id), "0", "allreduce", "dp", "0", "backward", "0", "1", "1000", "0.001", "0.0013",
        repr(0.0013 - 0.001),
    ]
    writer.close()


def test_finished_tasks_become_flow_rows_and_iterations(tmp_path):
    workload = two_iterations()
    writer = ResultWriter(tmp_path, workload, start_time=0.5)
    clock = 0.5
    for task in workload.tasks:  # in dependency order, one after the other
        writer.task_finished(task.id, clock, clock + 0.25)
        clock += 0.25
    writer.close()
    flows = read_flows(tmp_path / "flows.csv")
    assert list(flows["task"]) == [t.id for t in workload.flows]
    assert (flows["fct"] == flows["finish"] - flows["start"]).all()
    iterations = read_iterations(tmp_path / "iterations.csv")
    ends = [workload.tasks[e] for e in workload.iteration_ends]
    finish = [0.5 + 0.25 * (e.id + 1) for e in ends]
    assert list(iterations["iteration"]) == [0, 1]
    assert list(iterations["start"]) == [0.5, finish[0]]
    assert list(iterations["finish"]) == finish
    assert list(iterations["time"]) == [finish[0] - 0.5, finish[1] - finish[0]]


def test_an_iteration_that_ends_before_the_previous_one_is_a_bug(tmp_path):
    workload = two_iterations()
    with ResultWriter(tmp_path, workload) as writer, pytest.raises(ValueError, match="iteration 1 ended before"):
        writer.task_finished(workload.iteration_ends[1], 0.0, 1.0)


def test_empty_labels_read_back_as_empty_text(tmp_path):
    builder = WorkloadBuilder("bare", 2)
    builder.add_flow(0, 1, 10)
    workload = builder.build()
    with ResultWriter(tmp_path, workload) as writer:
        writer.flow_finished(0, 0.0, 1.0)
    flows = read_flows(tmp_path / "flows.csv")
    assert flows.loc[0, "collective"] == "" and flows.loc[0, "phase"] == ""
    assert flows.loc[0, "step"] == -1


HARNESS_RESULTS = {
    "flows": [
        {"id": 0, "src": "10.0.0.1", "dst": "10.0.1.1", "sport": 49153, "dport": 5000, "bytes": 30000000,
         "start": 0.1, "fct": 0.0262, "rx_bytes": 30000000, "credited_bytes": 0, "kind": "bulk-tcp"},
        {"id": 1, "src": "10.0.0.2", "dst": "10.0.1.2", "sport": 49153, "dport": 5001, "bytes": 60000000,
         "start": 0.104, "fct": None, "rx_bytes": 1448, "credited_bytes": 0, "kind": "bulk-tcp"},
    ]
}


def test_fct_txt_is_hpcc_style_for_the_finished_flows(tmp_path):
    write_hpcc_fct(HARNESS_RESULTS, tmp_path / "fct.txt")
    assert (tmp_path / "fct.txt").read_text() == "0a000001 0a000101 49153 5000 30000000 100000000 26200000 0\n"


def test_a_script_without_tables_gets_its_flows_from_the_harness():
    (row,) = harness_flow_rows(HARNESS_RESULTS)  # the unfinished flow has no row
    assert dict(zip(FLOW_COLUMNS, row)) == {
        "task": 0, "iteration": 0, "collective": "", "group": "", "step": -1, "phase": "",
        "src": "10.0.0.1", "dst": "10.0.1.1", "bytes": 30000000, "start": 0.1, "finish": 0.1 + 0.0262,
        "fct": 0.0262,
    }


def flows_frame(tmp_path, name, finished):
    """flows.csv of a run that finished the given (task, start, finish) of ``two_iterations``."""
    workload = two_iterations()
    with ResultWriter(tmp_path / name, workload) as writer:
        for task, start, finish in finished:
            writer.flow_finished(task, start, finish)
    return read_flows(tmp_path / name / "flows.csv")


def test_flows_are_joined_by_task_with_their_relative_error(tmp_path):
    baseline = flows_frame(tmp_path, "b", [(3, 0.0, 2.0), (2, 0.0, 1.0), (8, 1.0, 2.0)])
    accelerated = flows_frame(tmp_path, "a", [(2, 0.0, 1.01), (3, 0.0, 1.98)])  # task 8 unfinished
    joined = join_flows(baseline, accelerated)
    assert list(joined["task"]) == [2, 3]
    assert list(joined["fct_baseline"]) == [1.0, 2.0] and list(joined["fct_accelerated"]) == [1.01, 1.98]
    assert list(joined["rel_err"]) == [abs(1.01 - 1.0) / 1.0, abs(1.98 - 2.0) / 2.0]
    assert list(joined["bytes"]) == [1000, 1000]


def test_runs_that_moved_different_flows_are_not_compared(tmp_path):
    baseline = flows_frame(tmp_path, "b", [(2, 0.0, 1.0)])
    accelerated = baseline.assign(bytes=999)
    with pytest.raises(ExperimentError, match="the two runs moved different flows: task 2 differs in its bytes"):
        join_flows(baseline, accelerated)
