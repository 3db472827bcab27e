"""``compare --seeds N`` on a script whose outcome depends on ns-3's random streams, and on one that pins its run.

``jittered_dumbbell.py``: 3 flows of 3 MB into one host of a 10 Gbps star,
each started after a jitter a UniformRandomVariable draws, so that under
another RngRun they overlap for other spans (their FCTs moved by 33-96% over
RngRun 1-3 when this test was written).
"""

import pytest

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

JITTERED = REPO / "tests" / "scripts" / "jittered_dumbbell.py"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_seed_runs_measure_ns3s_own_spread_beside_the_accelerated_error(wormhole, tmp_path):
    done = wormhole("compare", "--seeds", "3", "--json", "c.json", "--plot", "c.png", JITTERED)
    assert done.returncode == 0, done.stderr
    assert "running RngRun 2 baseline" in done.stderr and "running RngRun 3 baseline" in done.stderr
    summary = load_json(tmp_path / "c.json")
    seeds = summary["seeds"]
    assert seeds["case"] == "varies"
    assert (seeds["plain_runs"], seeds["asked"], seeds["rng_run"]) == (3, [None, 2, 3], [1, 2, 3])
    assert seeds["events"][0] == summary["events_baseline"] and len(set(seeds["events"])) > 1
    fct = seeds["fct"]
    assert fct["items"] == 3 and fct["spread"]["max"] > 0.1 and fct["cv"]["max"] > 0.05
    # the error beside the spread is the comparison's own, over the same three flows
    assert fct["error"] == {"mean": summary["fct_mean_rel_err"], "p99": summary["fct_p99_rel_err"],
                            "max": summary["fct_max_rel_err"]}
    for row in summary["flows"]:
        values = row["fct_seeds"]
        assert values[0] == row["fct_baseline"] and len(values) == 3
        assert row["seed_spread"] == pytest.approx((max(values) - min(values)) / sorted(values)[1])
    assert fct["within"] == sum(row["rel_err"] <= row["seed_spread"] for row in summary["flows"])
    assert "ns-3 seed spread      over the 3 plain runs under RngRun 1, 2, 3" in done.stdout
    verdict = "within ns-3's own noise" if fct["within_noise"] else "ABOVE ns-3's own noise"
    assert (f"  FCT                 accelerated error p99 {fct['error']['p99']:.3%} vs ns-3 seed spread "
            f"p99 {fct['spread']['p99']:.3%}: {verdict}; {fct['within']} of 3 flows within their own spread"
            in done.stdout)
    assert (tmp_path / "c.png").read_bytes()[:8] == PNG_SIGNATURE


def test_a_script_that_pins_its_rngrun_is_named_instead_of_a_zero_spread(wormhole, tmp_path):
    done = wormhole("compare", "--seeds", "2", "--json", "c.json", "--plot", "c.png", JITTERED, "--pin-run", "1")
    assert done.returncode == 0, done.stderr
    seeds = load_json(tmp_path / "c.json")["seeds"]
    assert seeds["case"] == "pinned" and seeds["rng_run"] == [1, 1]
    assert seeds["events"][0] == seeds["events"][1] and seeds["fct"]["spread"]["max"] == 0.0
    assert ("ns-3 seed spread      not measured: asked for RngRun 2, the plain runs ran under 1: the script sets "
            "RngRun itself (RngSeedManager.SetRun), so their spread is not ns-3's noise") in done.stdout
    assert "within ns-3's own noise" not in done.stdout
    assert "wormhole-ns3: c.png not drawn: the plain runs have no seed spread to draw (pinned)" in done.stderr
    assert not (tmp_path / "c.png").exists()
