import hashlib
import re
from collections import Counter

import pytest

from wormhole_ns3.models.workloads import WorkloadBuilder, estimate_plain_ns3, list_presets, preset_workload, presets

PAPER = ["gpt-7b-64g", "gpt-13b-128g", "moe-8x7b-64g"]


def documented_gb(name):
    return float(re.search(r"([0-9.]+) GB", list_presets()[name]).group(1))


def test_every_preset_has_a_one_line_description():
    described = list_presets()
    assert set(described) == {"gpt-small", "moe-small", "gpt-medium", "moe-medium", *PAPER}
    assert all(text and "\n" not in text for text in described.values())


def test_an_unknown_preset_names_the_known_ones():
    with pytest.raises(ValueError) as error:
        preset_workload("gpt-3")
    assert str(error.value) == f"unknown workload preset 'gpt-3'; known presets: {', '.join(list_presets())}"


@pytest.mark.parametrize("name", ["gpt-small", "moe-small"])
def test_small_presets_fit_a_quick_plain_ns3_run(name):
    workload = preset_workload(name)
    assert 8 <= workload.ranks <= 16 and workload.iterations == 2
    assert estimate_plain_ns3(workload).seconds < 30
    assert round(workload.total_bytes / 1e9, 2) == documented_gb(name)
    messages = {(f.collective, f.group, f.phase, f.step) for f in workload.flows}
    assert len(messages) > 1
    dp_message = workload.metadata["sizes"]["dense_grad_bytes"][0]
    assert 1e6 <= dp_message <= 8e6


@pytest.mark.parametrize("name, minutes", [("gpt-medium", 26.2), ("moe-medium", 23.7)])
def test_medium_presets_match_their_documented_size_and_plain_ns3_estimate(name, minutes):
    workload = preset_workload(name)
    assert 32 <= workload.ranks <= 64 and workload.iterations >= 4
    assert round(workload.total_bytes / 1e9, 2) == documented_gb(name)
    estimate = estimate_plain_ns3(workload)
    assert round(estimate.minutes, 1) == minutes
    assert 20 <= estimate.minutes <= 60
    doc_line = next(line for line in presets.__doc__.splitlines() if line.startswith(f"* ``{name}``"))
    assert f"{estimate.packets / 1e6:.1f} M packets" in doc_line and f"~{estimate.minutes:.0f} min" in doc_line


@pytest.mark.parametrize("name", PAPER)
def test_paper_presets_have_the_cited_shape_and_keep_traffic_on_rails(name):
    workload = preset_workload(name, iterations=1)
    parallelism = workload.metadata["parallelism"]
    expected = {"gpt-7b-64g": (64, 8, 4, 2), "gpt-13b-128g": (128, 8, 4, 4), "moe-8x7b-64g": (64, 8, 4, 2)}[name]
    assert (workload.ranks, parallelism["tp"], parallelism["dp"], parallelism["pp"]) == expected
    assert all(f.src % 8 == f.dst % 8 for f in workload.flows)
    assert workload.total_bytes * 2 / 1e9 == pytest.approx(documented_gb(name), abs=0.05)
    kinds = Counter(f.collective for f in workload.flows)
    assert ("alltoall" in kinds) == name.startswith("moe")


def test_paper_model_sizes_are_what_their_names_say():
    assert presets.GPT_7B.parameters / 1e9 == pytest.approx(6.65, abs=0.01)
    assert presets.GPT_13B.parameters / 1e9 == pytest.approx(12.84, abs=0.01)
    assert presets.MIXTRAL_8X7B.parameters / 1e9 == pytest.approx(47.38, abs=0.01)


def test_a_preset_is_the_same_bytes_every_time_and_iterations_can_be_changed():
    first, second = preset_workload("moe-small").to_json(), preset_workload("moe-small").to_json()
    assert hashlib.sha256(first.encode()).hexdigest() == hashlib.sha256(second.encode()).hexdigest()
    longer = preset_workload("gpt-small", iterations=3)
    assert longer.iterations == 3
    assert longer.total_bytes == preset_workload("gpt-small").total_bytes * 3 // 2


def test_one_gradient_bucket_is_the_papers_shape_the_same_bytes_in_fewer_longer_ring_flows():
    bucketed = preset_workload("moe-medium", iterations=1)
    whole = preset_workload("moe-medium", iterations=1, dp_buckets=1)
    assert whole.total_bytes == bucketed.total_bytes
    rings = [[f.bytes for f in w.flows if f.collective == "allreduce"] for w in (bucketed, whole)]
    assert sum(rings[1]) == sum(rings[0])
    # moe-medium's preset has 2 buckets of dense gradients per stage; the experts' all-reduce is one already
    assert len(rings[1]) < len(rings[0])
    assert max(rings[1]) > max(rings[0])
    for wrong in (0, 99):
        with pytest.raises(ValueError, match=f"dp_buckets must be within 1..2 .layers per stage., got {wrong}"):
            preset_workload("moe-medium", dp_buckets=wrong)


def test_plain_ns3_estimate_counts_segments_acks_hops_and_events():
    builder = WorkloadBuilder("w", 3)
    builder.add_flow(0, 1, 1448 * 10)
    builder.add_flow(1, 2, 1449)  # two segments
    builder.add_compute(2, 5.0)
    estimate = estimate_plain_ns3(builder.build(), hops=3)
    assert estimate.packets == 2 * (10 + 2)
    assert estimate.events == 24 * 3 * 6
    assert estimate.seconds == pytest.approx(24 * 3 * 6 * 2.5e-6)
