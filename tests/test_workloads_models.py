from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wormhole_ns3.models.workloads import (
    ComputeModel,
    DenseModel,
    MoeModel,
    Parallelism,
    Workload,
    ideal_schedule,
    one_f_one_b,
    training_workload,
)

GPT = DenseModel(name="gpt-tiny", layers=8, hidden=512, heads=8, seq_len=256, vocab=1000, micro_batches=4)
MOE = MoeModel(name="moe-tiny", layers=4, hidden=256, heads=4, seq_len=128, vocab=500, micro_batches=2, experts=4,
               top_k=2, ffn_hidden=512)
INSTANT = 1e18  # bits/s: flows take no time, only compute counts


def ancestors(workload, task_id):
    seen, stack = set(), [task_id]
    while stack:
        for dep in workload.tasks[stack.pop()].deps:
            if dep not in seen:
                seen.add(dep)
                stack.append(dep)
    return seen


def test_rank_layout_is_megatron_order_with_tp_fastest():
    par = Parallelism(tp=8, dp=4, pp=2)
    assert par.world == 64
    assert par.rank(tp=3, dp=2, pp=1) == 3 + 8 * (2 + 4 * 1)
    assert par.dp_group(pp=1, tp=3) == [35, 43, 51, 59]
    assert par.stage_ranks(0) == list(range(32))


def test_dp_pp_and_ep_traffic_stays_on_one_rail_when_tp_fills_the_server():
    workload = training_workload(MOE, Parallelism(tp=8, dp=4, pp=2, ep=2), dp_buckets=2)
    kinds = Counter((f.collective, f.phase) for f in workload.flows)
    assert {"allreduce", "alltoall", "sendrecv"} <= {c for c, _ in kinds}
    assert all(f.src % 8 == f.dst % 8 for f in workload.flows)
    servers = {f.src // 8 for f in workload.flows} | {f.dst // 8 for f in workload.flows}
    assert all(f.src // 8 != f.dst // 8 for f in workload.flows) and servers == set(range(8))


@pytest.mark.parametrize("stages, micro_batches", [(1, 3), (2, 4), (4, 8), (4, 2), (3, 7)])
def test_1f1b_runs_every_pass_once_in_dependency_order_with_bounded_in_flight_micro_batches(stages, micro_batches):
    order = one_f_one_b(stages, micro_batches)
    assert sorted(order) == sorted((p, k, m) for p in range(stages) for k in "FB" for m in range(micro_batches))
    position = {op: i for i, op in enumerate(order)}
    for p, kind, m in order:
        if kind == "F" and p > 0:
            assert position[(p - 1, "F", m)] < position[(p, "F", m)]
        if kind == "B":
            assert position[(p, "F", m)] < position[(p, "B", m)]
            if p < stages - 1:
                assert position[(p + 1, "B", m)] < position[(p, "B", m)]
    for p in range(stages):
        own = [(k, m) for q, k, m in order if q == p]
        in_flight = [sum(1 for k, _ in own[: i + 1] if k == "F") - sum(1 for k, _ in own[: i + 1] if k == "B")
                     for i in range(len(own))]
        assert max(in_flight) == min(stages - p, micro_batches)


@pytest.mark.parametrize("pp, micro_batches", [(1, 4), (2, 4), (4, 8)])
def test_an_iteration_takes_the_1f1b_makespan_on_an_ideal_network(pp, micro_batches):
    model = DenseModel(name="flat", layers=8, hidden=1024, heads=8, seq_len=512, vocab=1,
                       micro_batches=micro_batches)
    compute = ComputeModel()
    workload = training_workload(model, Parallelism(tp=1, dp=1, pp=pp, gpus_per_server=1), compute, iterations=2)
    sizes = workload.metadata["sizes"]
    forward = sizes["forward_seconds"][0]
    makespan = (micro_batches + pp - 1) * 3 * forward  # (M + P - 1)(F + B), B = 2F
    expected = makespan + sizes["optimizer_seconds"][0]
    assert ideal_schedule(workload, INSTANT).iteration_times == pytest.approx([expected, expected], rel=1e-4)


def test_bucketed_gradient_sync_overlaps_the_last_backward():
    par = Parallelism(tp=1, dp=4, pp=1, gpus_per_server=1)
    times = [ideal_schedule(training_workload(GPT, par, dp_buckets=b), 100e9).iteration_times[0] for b in (1, 4)]
    assert times[1] < times[0]
    one, four = (training_workload(GPT, par, dp_buckets=b) for b in (1, 4))
    assert one.total_bytes == four.total_bytes
    assert len({f.group for f in four.flows}) == 1 and max(f.step for f in four.flows) == 5


@given(
    tp=st.sampled_from([1, 2, 4]),
    dp=st.integers(1, 4),
    pp=st.sampled_from([1, 2, 4]),
    micro_batches=st.integers(1, 4),
    buckets=st.integers(1, 2),
)
@settings(max_examples=25, deadline=None)
def test_dense_bytes_match_the_model_and_the_graph_is_sound(tp, dp, pp, micro_batches, buckets):
    model = DenseModel(name="g", layers=8, hidden=256, heads=4, seq_len=64, vocab=300, micro_batches=micro_batches)
    par = Parallelism(tp=tp, dp=dp, pp=pp, gpus_per_server=4)
    workload = training_workload(model, par, iterations=2, dp_buckets=buckets)
    sizes = workload.metadata["sizes"]
    grad_sync = sum(tp * 2 * (dp - 1) * b for b in sizes["dense_grad_bytes"])
    pipeline = 2 * (pp - 1) * micro_batches * dp * tp * (model.tokens * model.hidden * 2 // tp)
    assert workload.total_bytes == 2 * (grad_sync + pipeline)
    assert_graph_is_sound(workload)


def test_moe_bytes_match_the_model():
    par = Parallelism(tp=2, dp=4, pp=2, ep=2, gpus_per_server=2)
    workload = training_workload(MOE, par)
    sizes = workload.metadata["sizes"]
    groups_per_stage = par.tp * par.dp // par.ep
    alltoall = MOE.layers * MOE.micro_batches * 4 * groups_per_stage * (par.ep - 1) * sizes["alltoall_bytes"]
    dense_sync = sum(par.tp * 2 * (par.dp - 1) * b for b in sizes["dense_grad_bytes"])
    expert_sync = par.pp * par.tp * par.ep * 2 * (par.dp // par.ep - 1) * sizes["expert_grad_bytes"]
    pipeline = 2 * (par.pp - 1) * MOE.micro_batches * par.dp * par.tp * sizes["activation_bytes"]
    by_collective = Counter()
    for flow in workload.flows:
        by_collective[flow.collective] += flow.bytes
    assert by_collective == {"alltoall": alltoall, "allreduce": dense_sync + expert_sync, "sendrecv": pipeline}
    assert sizes["alltoall_bytes"] == MOE.tokens // par.tp * MOE.top_k * MOE.hidden * 2
    assert_graph_is_sound(workload)


def assert_graph_is_sound(workload: Workload):
    """Every task belongs to its iteration and leads to its end; no GPU computes two things at once."""
    ends = workload.iteration_ends
    for k, end in enumerate(ends):
        before = ancestors(workload, end)
        members = {t.id for t in workload.tasks if t.iteration == k} - {end}
        assert members <= before
        if k:
            assert ends[k - 1] in before
    schedule = ideal_schedule(workload, 100e9)
    busy = defaultdict(list)
    for task in workload.tasks:
        if task.kind == "compute" and task.duration > 0:
            busy[task.src].append((schedule.start[task.id], schedule.finish[task.id]))
    for spans in busy.values():
        spans.sort()
        assert all(a_end <= b_start * (1 + 1e-12) for (_, a_end), (b_start, _) in zip(spans, spans[1:]))


def test_generation_is_deterministic():
    par = Parallelism(tp=2, dp=4, pp=2, ep=4, gpus_per_server=2)
    assert training_workload(MOE, par, iterations=2).to_json() == training_workload(MOE, par, iterations=2).to_json()


def test_compute_gaps_follow_the_flop_model():
    compute = ComputeModel(peak_tflops=100.0, efficiency=0.5)
    workload = training_workload(GPT, Parallelism(tp=2, dp=1, pp=2, gpus_per_server=2), compute)
    b, s, h = GPT.micro_batch, GPT.seq_len, GPT.hidden
    per_layer = 24 * b * s * h * h + 4 * b * s * s * h
    first_stage = 4 * per_layer / 2 / 50e12
    forward = [t.duration for t in workload.tasks if t.phase == "forward" and t.kind == "compute" and t.src == 0]
    backward = [t.duration for t in workload.tasks if t.phase == "backward" and t.kind == "compute" and t.src == 0]
    assert forward == pytest.approx([first_stage] * GPT.micro_batches)
    assert backward == pytest.approx([2 * first_stage] * GPT.micro_batches)


@pytest.mark.parametrize(
    "build, problem",
    [
        (lambda: Parallelism(tp=16, dp=1), "parallelism: TP=16 must divide the 8 GPUs of a server"),
        (lambda: Parallelism(tp=8, dp=4, ep=8),
         r"parallelism: EP=8 must divide DP=4 \(EP groups are formed inside DP\)"),
        (lambda: Parallelism(tp=0), "parallelism: tp must be a positive integer, got 0"),
        (lambda: DenseModel(name="m", layers=2, hidden=100, heads=3, seq_len=8, vocab=8),
         "model m: hidden=100 is not a multiple of heads=3"),
        (lambda: MoeModel(name="m", layers=2, hidden=64, heads=4, seq_len=8, vocab=8, experts=2, top_k=3),
         r"model m: top_k=3 must be within 1..experts=2"),
        (lambda: training_workload(GPT, Parallelism(pp=3, gpus_per_server=1)),
         "model gpt-tiny: 8 layers do not split into PP=3 stages"),
        (lambda: training_workload(GPT, Parallelism(dp=2, ep=2, gpus_per_server=1)),
         "model gpt-tiny is dense; EP=2 needs a MoeModel"),
        (lambda: training_workload(MOE, Parallelism(dp=3, ep=3, gpus_per_server=1)),
         "model moe-tiny: 4 experts do not split over EP=3"),
        (lambda: training_workload(GPT, Parallelism(gpus_per_server=1), iterations=0),
         "iterations must be a positive integer, got 0"),
        (lambda: training_workload(GPT, Parallelism(pp=2, gpus_per_server=1), dp_buckets=5),
         r"dp_buckets must be within 1..4 \(layers per stage\), got 5"),
    ],
)
def test_bad_parameters_are_clear_errors(build, problem):
    with pytest.raises(ValueError, match=f"^{problem}"):
        build()
