"""Real ns-3 runs whose outcome depends on ns-3's random streams (core/draws.py, memo/randomness.py).

The script is a user's MoE layer: two expert-parallel groups on disjoint
leaves, alike but for the random streams of their RED queues (Gentle, so RED
marks at random above its threshold). Plain ns-3 runs the two groups apart;
a mirror of one by the other stood for the draws of the first and ended far
off, unseen by the guard.
"""

import csv

import pytest

from wormhole_ns3.core.draws import DrawCase
from wormhole_ns3.core.trace import TraceKind
from wormhole_ns3.memo.decisions import Futile
from wormhole_ns3.memo.randomness import MayDraw
from wormhole_ns3.tools.report import comparison

from conftest import REPO, load_json

pytestmark = pytest.mark.slow

MOE = REPO / "experiments" / "zoo" / "moe_alltoall.py"
#: One MoE layer of one iteration, 16 hosts in two groups of 8 on disjoint leaves.
ONE_LAYER = ("--iterations", "1", "--layers", "1")


def trace_rows(path):
    with open(path) as rows:
        return list(csv.DictReader(rows))


def test_groups_whose_queues_draw_at_random_are_simulated_apart_and_exact(wormhole, memo_facts, tmp_path):
    # compare's two sides, the accelerated one run by memo_facts to keep its memo events' facts (why)
    plain = wormhole("run", "--baseline", "--results", tmp_path / "b.json", MOE, *ONE_LAYER)
    assert plain.returncode == 0, plain.stderr
    done, events = memo_facts("run", "--results", tmp_path / "a.json", MOE, *ONE_LAYER)
    assert done.returncode == 0, done.stderr
    summary = comparison(load_json(tmp_path / "b.json"), load_json(tmp_path / "a.json"))
    assert summary["fct_max_rel_err"] == 0.0
    assert summary["rx_bytes_exact"] and done.stdout == plain.stdout
    assert summary["memo_mirrored"] == 0
    refused = [event for event in events if event.draws is DrawCase.DEPENDS]
    assert refused and all(event.kind is TraceKind.MEMO_MISS for event in refused)
    refusal = refused[0].facts.refusal
    assert isinstance(refusal, MayDraw)
    assert "ns3::RedQueueDisc marks or drops at random above MaxTh (Gentle)" in refusal.models
    # the script creates its messages in callbacks on deliveries, so no later lookup can admit a
    # course: recording backs off (memo/episodes.py _back_off) and nothing is stored
    stopped = [event.facts for event in events if event.kind is TraceKind.BACK_OFF]
    assert len(stopped) == 1 and isinstance(stopped[0], Futile) and stopped[0].recordings >= 1
    assert not [event for event in events if event.kind is TraceKind.MEMO_RECORDED]


def test_the_guard_checks_mirrors_and_stops_one_that_stands_for_other_draws(wormhole, tmp_path):
    """Under statistical fidelity the second group mirrors the first; re-simulated, it ends elsewhere."""
    done = wormhole("run", "--fidelity", "statistical", "--verify", "1", "--results", tmp_path / "r.json",
                    "--trace", tmp_path / "t.csv", MOE, *ONE_LAYER)
    assert done.returncode == 0, done.stderr
    verify = load_json(tmp_path / "r.json")["verify"]
    mirror = verify["mirror"]
    assert mirror["checked"] >= 1 and mirror["error_max"] > 0.10
    assert mirror["stopped"] and "no more mirrors" in mirror["stopped"]
    assert any("no more mirrors" in line for line in done.stderr_lines)
    assert [r for r in trace_rows(tmp_path / "t.csv") if r["kind"] == "guard"]
    assert all(kind in verify for kind in ("skip", "replay", "mirror", "absorb", "resume"))


def test_the_guard_finds_a_mirror_of_twins_no_draw_parts_exact(wormhole, tmp_path):
    """Smaller messages never reach RED's threshold: no draw, and the mirrored group is the other's twin.

    (Statistical fidelity lets it mirror: under same-seed fidelity Gentle RED on its links rules that out.)
    """
    done = wormhole("run", "--fidelity", "statistical", "--verify", "1", "--results", tmp_path / "r.json",
                    MOE, *ONE_LAYER, "--hosts-per-leaf", "2", "--message-kb", "128")
    assert done.returncode == 0, done.stderr
    results = load_json(tmp_path / "r.json")
    assert results["memo_mirrored"] >= 1
    mirror = results["verify"]["mirror"]
    assert mirror["checked"] >= 1 and mirror["error_max"] == 0.0 and mirror["stopped"] is None
