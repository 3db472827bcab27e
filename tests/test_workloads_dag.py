import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wormhole_ns3.models.workloads import Task, Workload, WorkloadBuilder, ideal_schedule


@st.composite
def workloads(draw):
    """Random valid graphs: flows and compute tasks over a few ranks, deps on earlier tasks, some iterations."""
    ranks = draw(st.integers(2, 6))
    builder = WorkloadBuilder(draw(st.text(max_size=8)), ranks, {"seed": draw(st.integers(0, 9))})
    for _ in range(draw(st.integers(1, 30))):
        deps = draw(st.lists(st.integers(0, len(builder) - 1), max_size=3)) if len(builder) else []
        src = draw(st.integers(0, ranks - 1))
        if draw(st.booleans()):
            dst = (src + draw(st.integers(1, ranks - 1))) % ranks
            builder.add_flow(src, dst, draw(st.integers(1, 10**10)), deps,
                             delay=draw(st.floats(0, 1e-3)), phase=draw(st.sampled_from(["forward", "grad-sync"])))
        else:
            builder.add_compute(src, draw(st.floats(0, 1.0)), deps, group=draw(st.text(max_size=5)))
        if draw(st.integers(0, 9)) == 0:
            builder.end_iteration(range(len(builder)))
    builder.end_iteration([len(builder) - 1])
    return builder.build()


@given(workloads())
@settings(max_examples=60, deadline=None)
def test_json_round_trip_is_identity_and_byte_stable(workload):
    text = workload.to_json()
    again = Workload.from_json(text)
    assert again == workload
    assert again.to_json() == text


@given(workloads())
@settings(max_examples=30, deadline=None)
def test_frame_has_one_row_per_task_with_the_same_values(workload):
    frame = workload.to_frame()
    assert list(frame["id"]) == list(range(len(workload.tasks)))
    assert int(frame["bytes"].sum()) == workload.total_bytes
    assert (frame["kind"] == "flow").sum() == len(workload.flows)
    assert tuple(frame.loc[len(frame) - 1, "deps"]) == workload.tasks[-1].deps


def test_builder_numbers_tasks_labels_them_and_counts_iterations():
    builder = WorkloadBuilder("w", 3)
    a = builder.add_compute(0, 0.5, phase="forward")
    f = builder.add_flow(0, 1, 1000, [a, a], collective="sendrecv", group="pp/dp0/tp0", step=0)
    end = builder.end_iteration([f])
    g = builder.add_flow(1, 2, 10, [end], delay=1e-6)
    workload = builder.build()
    assert (a, f, end, g) == (0, 1, 2, 3)
    assert workload.tasks[f] == Task(1, "flow", 0, 1, 1000, 0.0, (0,), 0, "sendrecv", "pp/dp0/tp0", 0, "")
    assert workload.tasks[a].collective == "compute" and workload.tasks[a].dst == 0
    assert workload.tasks[end].phase == "iteration-end" and workload.tasks[end].duration == 0.0
    assert workload.tasks[g].iteration == 1 and workload.tasks[g].duration == 1e-6
    assert workload.iteration_ends == (end,) and workload.iterations == 1
    assert workload.total_bytes == 1010


def test_ideal_schedule_follows_dependencies_line_rate_and_delays():
    builder = WorkloadBuilder("w", 2)
    c = builder.add_compute(0, 0.25)
    f = builder.add_flow(0, 1, 125_000_000, [c], delay=0.5)  # 1 Gbit
    builder.end_iteration([f])
    d = builder.add_compute(1, 1.0, [2])
    builder.end_iteration([d])
    schedule = ideal_schedule(builder.build(), bandwidth_bps=1e9, latency_s=1e-3)
    assert schedule.start[f] == 0.75 and schedule.finish[f] == pytest.approx(1.751)
    assert schedule.iteration_times == pytest.approx([1.751, 1.0])


@pytest.mark.parametrize(
    "task, problem",
    [
        (Task(0, "flow", 1, 1, 10, 0.0), "task 0: flow from rank 1 to itself"),
        (Task(0, "flow", 0, 1, 0, 0.0), "task 0: flow size must be > 0 bytes, got 0"),
        (Task(0, "flow", 0, 1, 1.5, 0.0), "task 0: flow size must be > 0 bytes, got 1.5"),
        (Task(0, "flow", 0, 4, 10, 0.0), "task 0: dst rank 4 outside 0..3"),
        (Task(0, "compute", -1, -1, 0, 0.0), "task 0: src rank -1 outside 0..3"),
        (Task(0, "compute", 0, 1, 0, 1.0), "task 0: compute task has src 0 != dst 1"),
        (Task(0, "compute", 0, 0, 5, 1.0), "task 0: compute task must carry 0 bytes, got 5"),
        (Task(0, "compute", 0, 0, 0, -1.0), "task 0: duration must be a finite number >= 0, got -1.0"),
        (Task(0, "compute", 0, 0, 0, float("nan")), "task 0: duration must be a finite number >= 0, got nan"),
        (Task(0, "compute", 0, 0, 0, 1.0, (0,)), "task 0: depends on task 0, which is not an earlier task"),
        (Task(0, "compute", 0, 0, 0, 1.0, [1]), "task 0: deps must be a tuple of task ids, got list"),
        (Task(0, "send", 0, 1, 10, 0.0), "task 0: kind must be 'flow' or 'compute', got 'send'"),
    ],
)
def test_an_invalid_task_is_one_clear_line(task, problem):
    with pytest.raises(ValueError) as error:
        Workload("w", 4, (task,), ())
    assert str(error.value) == problem


@pytest.mark.parametrize(
    "ranks, tasks, ends, problem",
    [
        (0, (), (), "workload 'w': needs at least 1 rank, got 0"),
        (2, (Task(1, "compute", 0, 0, 0, 0.0),), (), "task at position 0 has id 1; ids must be 0..n-1 in order"),
        (2, (Task(0, "compute", 0, 0, 0, 0.0),), (1,),
         "iteration 0 ends at task 1; ends must be increasing task ids below 1"),
        (2, (Task(0, "compute", 0, 0, 0, 0.0), Task(1, "compute", 0, 0, 0, 0.0)), (1, 0),
         "iteration 1 ends at task 0; ends must be increasing task ids below 2"),
    ],
)
def test_an_invalid_workload_is_one_clear_line(ranks, tasks, ends, problem):
    with pytest.raises(ValueError) as error:
        Workload("w", ranks, tasks, ends)
    assert str(error.value) == problem


def test_builder_rejects_a_bad_task_at_the_call_that_adds_it():
    builder = WorkloadBuilder("w", 2)
    with pytest.raises(ValueError, match=r"^task 0: flow from rank 1 to itself$"):
        builder.add_flow(1, 1, 10)
    with pytest.raises(TypeError, match=r"unknown task label\(s\) stage; labels are iteration, collective"):
        builder.add_compute(0, 1.0, stage=3)
    assert len(builder) == 0


def test_metadata_must_be_plain_json_and_is_normalized():
    with pytest.raises(ValueError, match=r"^workload 'w': metadata must be plain JSON"):
        Workload("w", 1, (), (), {"bad": {1, 2}})
    assert Workload("w", 1, (), (), {"sizes": (1, 2)}).metadata == {"sizes": [1, 2]}


@pytest.mark.parametrize(
    "edit, problem",
    [
        (lambda d: d.update(format="other"), 'not a workload: expected "format": "wormhole-ns3-workload"'),
        (lambda d: d.update(version=7), "workload version 7 is not supported (expected 1)"),
        (lambda d: d["tasks"][0].pop(), "task at position 0 has 11 fields, expected 12"),
        (lambda d: d["tasks"][1].__setitem__(4, -5), "task 1: flow size must be > 0 bytes, got -5"),
    ],
)
def test_a_broken_json_workload_says_what_is_wrong(edit, problem):
    builder = WorkloadBuilder("w", 2)
    builder.add_flow(0, 1, 10, [builder.add_compute(0, 1.0)])
    document = json.loads(builder.build().to_json())
    edit(document)
    with pytest.raises(ValueError) as error:
        Workload.from_json(json.dumps(document))
    assert str(error.value) == problem


def test_text_that_is_not_json_is_rejected():
    with pytest.raises(ValueError, match=r"^not a workload: invalid JSON"):
        Workload.from_json("{tasks")
