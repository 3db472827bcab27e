"""experiments/scenarios: the seeded generator of scenarios, and a small sweep of them against plain ns-3."""

from __future__ import annotations

import csv
import importlib
import json
import subprocess
import sys

import pytest

from conftest import REPO, child_environment, load_json, steady_skips

SCENARIOS = REPO / "experiments" / "scenarios"
SWEEP = SCENARIOS / "sweep.py"
CASES = SCENARIOS / "cases"
sys.path.insert(0, str(SCENARIOS))
generator = importlib.import_module("generator")
spec_module = importlib.import_module("spec")
readme = importlib.import_module("readme")

#: Scenarios of the fast tests' seeds.
SEEDS = range(200)


@pytest.fixture(scope="module")
def specs():
    return [generator.generate(seed, 0) for seed in SEEDS]


def test_the_same_seed_and_index_give_the_same_spec_byte_for_byte():
    assert generator.generate(11, 4).to_json() == generator.generate(11, 4).to_json()
    assert generator.generate(11, 4) != generator.generate(11, 5) != generator.generate(12, 4)


def test_two_hundred_seeds_cover_every_topology_transport_red_kind_start_pattern_and_size_mix(specs):
    assert {s.shape.topology for s in specs} == set(spec_module.TopologyKind)
    assert {s.transport.congestion_control for s in specs} == set(spec_module.CongestionControl)
    assert {s.switch_queue.kind for s in specs} == set(spec_module.RedKind)
    assert {s.shape.starts for s in specs} == set(spec_module.StartPattern)
    assert {s.shape.sizes for s in specs} == set(spec_module.SizeMix)
    assert {s.topology.random_ecmp for s in specs} == {True, False}
    assert {s.transport.ecn for s in specs if s.transport.congestion_control != "TcpDctcp"} == {True, False}
    assert {s.switch_queue.qw for s in specs if s.switch_queue.kind != "step"} == {1.0, 0.1, 0.01, 0.002}
    assert {s.device_queue_packets for s in specs} == {1, 100}


def test_every_spec_lies_in_the_generators_ranges_and_reads_back_from_its_json(specs):
    for s in specs:
        links, flows, red = s.topology.links, s.flows, s.switch_queue
        assert all(10**9 <= link.rate_bps <= 100 * 10**9 for link in links)
        assert all(1_000 <= link.delay_ns <= 50_000 for link in links)
        assert 2 <= len(flows) <= 24
        assert all(100_000 <= flow.bytes <= 200_000_000 for flow in flows)
        assert generator.packet_hops([f.bytes for f in flows], [s.flow_hops(f) for f in flows]) \
            <= generator.PACKET_HOP_BUDGET
        assert s.transport.ecn or s.transport.congestion_control != "TcpDctcp"
        if red.kind == "step":
            assert (red.min_th, red.gentle, red.qw) == (red.max_th, False, 1.0)
        assert red.max_packets > 2 * red.max_th
        assert spec_module.from_json(s.to_json()) == s


def test_a_budget_scales_sizes_down_together_never_below_the_smallest():
    full, small = generator.generate(1, 0), generator.generate(1, 0, budget=20_000)
    assert full.shape.size_scale == 1.0 and small.shape.size_scale < 1.0
    assert [f.bytes for f in small.flows] != [f.bytes for f in full.flows]
    assert min(f.bytes for f in small.flows) == generator.MIN_BYTES
    assert generator.packet_hops([f.bytes for f in small.flows], [small.flow_hops(f) for f in small.flows]) <= 20_000


@pytest.mark.parametrize("text, problem", [
    ("{", "not JSON"),
    ("[]", "ScenarioSpec must be a JSON object"),
    ('{"name": "x"}', "ScenarioSpec: missing device_queue_packets, flows, host_queue_packets"),
])
def test_a_broken_spec_is_named_in_one_line(tmp_path, text, problem):
    path = tmp_path / "broken.json"
    path.write_text(text)
    with pytest.raises(spec_module.SpecError, match=problem) as error:
        spec_module.load(path)
    assert str(error.value).startswith(str(path)) and "\n" not in str(error.value)


def test_a_spec_that_ns3_could_not_build_is_refused():
    document = json.loads(generator.generate(3, 0).to_json())
    document["flows"][0]["dst"] = document["flows"][0]["src"]
    with pytest.raises(spec_module.SpecError, match="flow 0 must run between two different hosts"):
        spec_module.from_json(json.dumps(document))
    document = json.loads(generator.generate(3, 0).to_json())
    document["transport"]["congestion_control"] = "TcpVegas"
    with pytest.raises(spec_module.SpecError, match="Transport.congestion_control must be one of TcpNewReno"):
        spec_module.from_json(json.dumps(document))


def _sweep(tmp_path, *args, timeout=1800):
    return subprocess.run([sys.executable, str(SWEEP), *map(str, args)], cwd=tmp_path, env=child_environment(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("args, problem", [
    (["--scenarios", "0", "--seed", "1", "--out", "o"], "--scenarios must be at least 1, got 0"),
    (["--scenarios", "2", "--seed", "1", "--jobs", "0", "--out", "o"], "--jobs must be at least 1, got 0"),
    (["--scenarios", "2", "--seed", "x", "--out", "o"], "argument --seed: invalid int value: 'x'"),
    (["--scenarios", "2", "--seed", "1", "--out", "o", "--frobnicate"], "unrecognized arguments: --frobnicate"),
])
def test_bad_arguments_of_the_sweep_are_named_in_one_line(tmp_path, args, problem):
    done = _sweep(tmp_path, *args)
    assert done.returncode == 2 and done.stderr.splitlines()[-1].endswith(problem)


def test_a_sweep_folder_of_another_seed_is_refused_not_mixed_in(tmp_path):
    (tmp_path / "o" / "specs").mkdir(parents=True)
    (tmp_path / "o" / "specs" / "0000.json").write_text(generator.generate(1, 0).to_json())
    done = _sweep(tmp_path, "--scenarios", "1", "--seed", "2", "--out", "o")
    assert done.returncode == 2
    assert done.stderr.strip() == ("sweep.py: error: o/specs/0000.json holds another scenario (seed1-0000, not "
                                   "seed2-0000): o was made with another seed or generator; use another --out")


def test_the_readmes_sweep_findings_are_what_the_kept_summary_gives():
    assert readme.main(["--check"]) == 0


def test_a_hand_edited_sweep_finding_fails_the_check_and_a_readme_without_markers_is_refused(tmp_path, capsys):
    text = (SCENARIOS / "README.md").read_text()
    edited = tmp_path / "README.md"
    edited.write_text(text.replace("per-scenario max FCT error: p99 ", "per-scenario max FCT error: p99 1", 1))
    assert readme.main(["--readme", str(edited), "--check"]) == 1
    assert readme.main(["--readme", str(edited)]) == 0 and edited.read_text() == text
    edited.write_text("no markers\n")
    assert readme.main(["--readme", str(edited)]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"readme.py: error: {edited}: no {readme.BEGIN} ... {readme.END} markers to write the sweep's findings between")


@pytest.mark.long
def test_a_small_sweep_is_exact_within_the_bounds_and_resumes_from_its_finished_comparisons(tmp_path):
    """Seed 7's first three scenarios, scaled down: exact, and each skip the table counts is in the trace.

    Scaled down to a 20,000-packet budget their flows end before two whole congestion cycles, so since
    steadiness waits for them none is skipped: the sweep's shortcuts show in the full sweep's results."""
    done = _sweep(tmp_path, "--scenarios", "3", "--seed", "7", "--budget", "20000", "--out", "sweep")
    assert done.returncode == 0, done.stdout + done.stderr
    out = tmp_path / "sweep"
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["scenarios"], summary["compared"], summary["failed"]) == (3, 3, [])
    assert summary["packet_sink_totals_differ"] == 0 and summary["script_output_differs"] == 0
    assert summary["per_scenario_max_fct_error"]["p99"] <= 0.03
    assert summary["per_scenario_mean_fct_error"]["mean"] <= 0.005
    with (out / "scenarios.csv").open() as table:
        rows = list(csv.DictReader(table))
    assert [row["name"] for row in rows] == ["seed7-0000", "seed7-0001", "seed7-0002"]
    skipped = [row for row in rows if int(row["skips"])]
    assert summary["shortcuts"]["with_skips"] == len(skipped)
    assert all(float(row["events_ratio"]) > 1.5 and int(row["trace_steady"]) == int(row["skips"]) for row in skipped)
    for row in rows:  # real runs: both sides finished every flow of the spec, and the accelerated one ran events
        assert int(row["flows_finished_baseline"]) == int(row["flows_finished_accelerated"]) == int(row["flows"])
        assert int(row["events_baseline"]) > 10_000 and int(row["events_accelerated"]) > 0
    assert (out / "errors.png").stat().st_size > 10_000

    comparisons = {path: path.stat().st_mtime_ns for path in (out / "runs").glob("*.json")}
    first = (out / "summary.json").read_bytes()
    again = _sweep(tmp_path, "--scenarios", "3", "--seed", "7", "--budget", "20000", "--out", "sweep", timeout=120)
    assert again.returncode == 0, again.stderr
    assert {path: path.stat().st_mtime_ns for path in (out / "runs").glob("*.json")} == comparisons
    assert (out / "summary.json").read_bytes() == first


@pytest.mark.slow
def test_a_flow_joining_a_dctcp_pair_meets_it_as_plain_ns3_has_it(wormhole, tmp_path):
    """cases/newcomer_on_a_dctcp_pair.json: two 12 MB DCTCP flows into one host, a 500 KB flow joining at 18 ms.

    Skipped 24 RTTs after they started (before ``steady._cycle_unseen``), the pair kept the cuts
    that ended its slow start, DCTCP's estimate of the marks at 0.79 where plain ns-3 has it at
    0.1 within 13 ms, and the newcomer, meeting that, ended 60% off; skipped after two cycles up
    to the newcomer's start, 0.7%. No skip now ends at a newcomer's start
    (``SkipEngine._newcomer_due``), and the pair, refused while its windows have not cycled
    twice, is judged ever more rarely (``core/backoff.py``): it runs packet by packet and the
    newcomer meets it as plain ns-3 has it.
    """
    out, trace = tmp_path / "c.json", tmp_path / "skips.csv"
    done = wormhole("compare", "--json", out, "--trace", trace, SCENARIOS / "scenario.py",
                    "--spec", CASES / "newcomer_on_a_dctcp_pair.json")
    assert done.returncode == 0, done.stderr
    summary = load_json(out)
    assert summary["rx_bytes_exact"] and summary["stdout_identical"]
    assert summary["fct_max_rel_err"] == 0.0
    assert steady_skips(trace) == []
    assert summary["packet_level_time_s"]["congestion cycles not yet repeating"] > 0
