"""The progress bar follows the rows a running script appends, complete lines only."""

from wormhole_ns3.models.workloads import WorkloadBuilder
from wormhole_ns3.tools.experiment.progress import FlowsTail, RunProgress
from wormhole_ns3.tools.experiment.results import ResultWriter


def test_the_tail_counts_complete_rows_and_the_latest_finish(tmp_path):
    path = tmp_path / "flows.csv"
    tail = FlowsTail(path)
    assert not tail.poll() and tail.rows == 0  # no file yet
    path.write_text('task,group,finish\n1,"dp,pp0",0.5\n2,dp,0.7')  # the second row is still being written
    assert tail.poll() and (tail.rows, tail.sim_time) == (1, 0.5)
    with path.open("a") as handle:
        handle.write("5\n")
    assert tail.poll() and (tail.rows, tail.sim_time) == (2, 0.75)
    assert not tail.poll()


def test_the_bar_counts_the_workloads_flows(tmp_path):
    builder = WorkloadBuilder("w", 3)
    for dst in (1, 2):
        builder.add_flow(0, dst, 100)
    builder.add_compute(0, 0.1)
    with ResultWriter(tmp_path, builder.build()) as writer:
        progress = RunProgress(tmp_path, "run", enabled=True)
        progress.poll()
        assert (progress.bar.total, progress.bar.n) == (2, 0)
        writer.flow_finished(1, 0.25, 1.5)
        progress.poll()
        assert (progress.bar.n, progress.flows.sim_time) == (1, 1.5)
        progress.close()
