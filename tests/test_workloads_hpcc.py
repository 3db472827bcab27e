import pytest

from wormhole_ns3.models.workloads import HpccFlow, Workload, hpcc_flows_to_workload, ideal_schedule, read_flows


def test_hpcc_flows_become_independent_flows_that_start_at_their_start_times(tmp_path):
    path = tmp_path / "flow.txt"
    path.write_text("3\n0 4 3 100 125000000 2.0\n1 4 3 101 1000 2.5\n4 2 1 102 250000000 2.0\n")
    workload = hpcc_flows_to_workload(read_flows(path))
    assert workload.ranks == 5 and workload.iterations == 1
    flows = workload.flows
    assert [(f.src, f.dst, f.bytes, f.duration, f.deps, f.group) for f in flows] == [
        (0, 4, 125000000, 2.0, (), "pg3"),
        (1, 4, 1000, 2.5, (), "pg3"),
        (4, 2, 250000000, 2.0, (), "pg1"),
    ]
    assert workload.tasks[workload.iteration_ends[0]].deps == (0, 1, 2)
    assert workload.metadata == {"source": "hpcc", "priorities": [3, 3, 1], "dports": [100, 101, 102]}
    schedule = ideal_schedule(workload, bandwidth_bps=1e9)
    assert schedule.finish[:3] == pytest.approx((3.0, 2.500008, 4.0))  # start + size * 8 / 1 Gbps
    assert schedule.iteration_times == pytest.approx([4.0])
    assert Workload.from_json(workload.to_json()) == workload


def test_ranks_can_be_given_and_no_flows_is_an_error():
    flows = [HpccFlow(0, 1, 3, 100, 10, 0.0)]
    assert hpcc_flows_to_workload(flows, ranks=8).ranks == 8
    with pytest.raises(ValueError, match="^task 0: dst rank 1 outside 0..0$"):
        hpcc_flows_to_workload(flows, ranks=1)
    with pytest.raises(ValueError, match="^no HPCC flows to convert$"):
        hpcc_flows_to_workload([])
