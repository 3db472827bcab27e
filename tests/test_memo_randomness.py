"""The memo's shortcuts with ns-3's random draws as an input (memo/randomness.py), against a fake run.

A course recorded while its flows drew random numbers is one sample, and
replaying it would leave out the draws plain ns-3 makes there: under same-seed
fidelity it never stands in; under statistical fidelity it does, courses that
recordings under other draws agreed on first. A mirror follows a recording
still being made only where no draw can part the twins, and leaves a leader
that drew.
"""

from dataclasses import replace

import pytest

from wormhole_ns3.core.draws import DrawCase, Fidelity, RandomSource
from wormhole_ns3.core.links import link_id, link_node
from wormhole_ns3.memo.decisions import Cause, MemoDecision
from wormhole_ns3.memo.episodes import Memoizer
from wormhole_ns3.memo.randomness import (
    AGREEMENT_BOUND,
    DependsOnDraws,
    DrewAtItsNodes,
    MayDraw,
    StoredCoursesDrew,
    admit_mirror,
    admit_records,
    agree,
)
from wormhole_ns3.memo.record import Arrival, EpisodeRecord, FlowOutcome, add_continuation, decode_value
from wormhole_ns3.memo.signature import Signature
from wormhole_ns3.memo.store import MemoStore

from fakes import MS, FakeMemoHost, incast, kinds, record_episode


def _sig(name: str) -> Signature:
    """A signature naming a flow and none of its links: enough for a record's bookkeeping."""
    return Signature(name, (), ())


@pytest.fixture
def store(tmp_path):
    with MemoStore.open(tmp_path / "memo") as opened:
        yield opened


RED = RandomSource("ns3::RedQueueDisc marks or drops at random between MinTh and MaxTh", True)


def record(finishes: list[int], draws: int = 0, digest: int = 1) -> EpisodeRecord:
    return EpisodeRecord(
        initial=len(finishes), arrivals=tuple(Arrival(0, _sig(f"flow {i}")) for i in range(len(finishes))),
        outcomes=tuple(FlowOutcome(finish, ()) for finish in finishes), close_ns=max(finishes),
        events=10_000, events_avoided=0, draws=draws, draw_digests=(digest,) if draws else ())


def drawing_incast(host: FakeMemoHost, first_flow: int, switch: int, digest: int) -> list[int]:
    flows = incast(host, first_flow, switch)
    for flow in flows:
        host.draws[flow] = (40, digest + flow)
    return flows


# ------------------------------------------------------------ admission rules
def test_recordings_agree_when_every_flow_ends_within_the_bound_of_its_fct():
    a = record([1_000_000, 2_000_000])
    assert agree(a, record([1_000_000 + int(0.9 * AGREEMENT_BOUND * 1e6), 2_000_000]))
    assert not agree(a, record([1_000_000 + int(1.1 * AGREEMENT_BOUND * 1e6), 2_000_000]))
    assert not agree(a, replace(record([1_000_000, 2_000_000]), foreseen="a joiner"))


def test_under_same_seed_a_course_that_drew_never_stands_in():
    steady, alone = record([MS, 2 * MS]), record([MS, 2 * MS], draws=30, digest=7)
    assert admit_records([steady], Fidelity.SAME_SEED).case is DrawCase.DREW_NOTHING
    refused = admit_records([alone], Fidelity.SAME_SEED)
    assert refused.records == [] and refused.case is DrawCase.DEPENDS
    assert refused.refusal == StoredCoursesDrew(drawing=1, most=30)
    # not even once recordings under other draws took its course: its draws would still be left out
    other = record([MS + 1_000, 2 * MS], draws=25, digest=8)
    assert admit_records([alone, other], Fidelity.SAME_SEED).records == []
    # a course that drew nothing beside it stands in
    assert admit_records([alone, steady], Fidelity.SAME_SEED).records == [steady]


def test_statistical_fidelity_lets_a_course_that_drew_stand_in_agreed_ones_first():
    alone = record([MS, 2 * MS], draws=30)
    admitted = admit_records([alone, record([3 * MS, 4 * MS], draws=3, digest=2)], Fidelity.STATISTICAL)
    assert admitted.case is DrawCase.STATISTICAL and admitted.records == [alone]  # one course, the first stored
    other = record([MS + 1_000, 2 * MS], draws=25, digest=8)
    lone = record([3 * MS, 4 * MS], draws=3, digest=2)
    agreed = admit_records([lone, alone, other], Fidelity.STATISTICAL)
    assert agreed.case is DrawCase.AGREED and agreed.records == [alone]
    # recordings under other draws that took the very same course are one record with two digests
    merged = decode_value(add_continuation(add_continuation(None, alone), replace(alone, draw_digests=(9,))))[0]
    assert merged[0].draw_digests == (1, 9) and admit_records(merged, Fidelity.STATISTICAL).case is DrawCase.AGREED


def test_a_mirror_needs_twins_no_draw_can_part():
    links = [link_id(5, 1), link_id(6, 1)]
    none = frozenset()
    assert admit_mirror([], links, {}, none, Fidelity.SAME_SEED).case is DrawCase.NO_SOURCE
    gentle = {links[1]: (RandomSource("ns3::RedQueueDisc marks or drops at random above MaxTh (Gentle)", True),)}
    red = admit_mirror([], links, gentle, none, Fidelity.SAME_SEED)
    assert red.case is DrawCase.DEPENDS and red.refusal == MayDraw((gentle[links[1]][0].what,))
    # RED draws only once a queue stands: where its flows cannot make one, it never does
    assert admit_mirror([], links, gentle, none, Fidelity.SAME_SEED, queueless=lambda link: True).case \
        is DrawCase.QUIET_SO_FAR
    jitter = {links[1]: (RandomSource("ns3::OnOffApplication::OffTime is a ns3::UniformRandomVariable", False),)}
    assert admit_mirror([], links, jitter, none, Fidelity.SAME_SEED, queueless=lambda link: True).case \
        is DrawCase.DEPENDS
    drew_here = admit_mirror([], links, {}, frozenset({6}), Fidelity.SAME_SEED)
    assert drew_here.case is DrawCase.DEPENDS and drew_here.refusal == DrewAtItsNodes((6,))
    assert admit_mirror([record([MS])], links, gentle, none, Fidelity.SAME_SEED).case \
        is DrawCase.DREW_NOTHING  # a recording of the key drew nothing: a deterministic course
    assert admit_mirror([record([MS], draws=4)], links, {}, none, Fidelity.SAME_SEED).case is DrawCase.DEPENDS
    assert admit_mirror([record([MS], draws=4)], links, {}, none, Fidelity.STATISTICAL).case is DrawCase.STATISTICAL


# ------------------------------------------------------- the Memoizer's decisions
def test_an_episode_whose_recording_drew_is_simulated_under_same_seed(store):
    host = FakeMemoHost()
    memo = Memoizer(store, "context", host)
    record_episode(memo, host, drawing_incast(host, 0, 100, digest=10), t0=0, finishes=[3 * MS, 4 * MS])
    assert memo.trace[-1].facts.draws == 80

    # the same incast again, twice: its course depends on the draws, so it is simulated every time
    record_episode(memo, host, drawing_incast(host, 10, 200, digest=20), t0=10 * MS, finishes=[3 * MS, 4 * MS])
    miss = memo.trace[-2]
    assert miss.kind is MemoDecision.MISS and miss.draws is DrawCase.DEPENDS and memo.stats.draw_dependent == 1
    assert isinstance(miss.facts.refusal, DependsOnDraws)
    memo.arrive(20 * MS, drawing_incast(host, 20, 300, digest=30))
    assert memo.trace[-1].kind is MemoDecision.MISS and memo.stats.draw_dependent == 2


def test_under_statistical_fidelity_a_course_that_drew_is_replayed_at_once(store):
    host = FakeMemoHost()
    memo = Memoizer(store, "context", host, Fidelity.STATISTICAL)
    record_episode(memo, host, drawing_incast(host, 0, 100, digest=10), t0=0, finishes=[3 * MS, 4 * MS])
    memo.arrive(10 * MS, drawing_incast(host, 10, 200, digest=20))
    assert memo.trace[-1].kind is MemoDecision.REPLAY and memo.trace[-1].draws is DrawCase.STATISTICAL


def test_twins_on_links_whose_models_may_draw_are_recorded_not_mirrored(store):
    host = FakeMemoHost()
    memo = Memoizer(store, "context", host)
    leader, twin = incast(host, 0, switch=100), incast(host, 10, switch=200)
    host.random_sources = {link_id(200, 1): (RED,)}  # where the twin's two flows meet
    memo.arrive(MS, leader + twin)
    assert kinds(memo) == [MemoDecision.MISS, MemoDecision.MISS] and memo.stats.mirrored == 0
    assert memo.trace[1].draws is DrawCase.DEPENDS and memo.trace[1].facts.refusal == MayDraw((RED.what,))
    assert host.started == leader + twin


def test_a_twin_mirrors_where_nothing_may_draw_and_resumes_once_its_leader_drew(store):
    host = FakeMemoHost()
    memo = Memoizer(store, "context", host)
    leader, twin = incast(host, 0, switch=100), incast(host, 10, switch=200)
    memo.arrive(MS, leader + twin)
    assert kinds(memo) == [MemoDecision.MISS, MemoDecision.MIRROR]
    assert memo.trace[1].draws is DrawCase.NO_SOURCE and host.held == twin

    # a model no catalogue knows drew as the leader ran: its twin would draw numbers of its own
    host.draws[leader[0]] = (3, 99)
    memo.finished(3 * MS, leader[0])
    diverged = memo.trace[-1]
    assert diverged.kind is MemoDecision.DIVERGED and diverged.draws is DrawCase.DEPENDS
    assert diverged.facts.cause is Cause.LEADER_DREW and set(host.resumed) == set(twin)


def test_flows_drawing_at_a_node_keep_later_twins_there_from_mirroring(store):
    host = FakeMemoHost(drawing_nodes=frozenset({link_node(link_id(201, 1))}))
    memo = Memoizer(store, "context", host)
    memo.arrive(MS, incast(host, 0, switch=100) + incast(host, 10, switch=200))
    assert kinds(memo) == [MemoDecision.MISS, MemoDecision.MISS]
    assert memo.trace[1].draws is DrawCase.DEPENDS
    assert memo.trace[1].facts.refusal == DrewAtItsNodes((link_node(link_id(201, 1)),))


def test_twins_on_links_whose_models_may_draw_mirror_once_links_like_theirs_were_seen_quiet(store):
    """DCQCN marks at random between Kmin and Kmax: where no queue reaches Kmin, no episode draws."""
    host = FakeMemoHost()
    red = (RED,)
    memo = Memoizer(store, "context", host)
    first = incast(host, 0, switch=100)
    host.random_sources = {link: red for route in host.routes.values() for link in route[0] + route[1]}
    record_episode(memo, host, first, t0=0, finishes=[3 * MS, 4 * MS])  # links of this kind crossed, no draw

    leader, twin = incast(host, 10, switch=200, senders=3), incast(host, 20, switch=300, senders=3)
    host.random_sources = {link: red for route in host.routes.values() for link in route[0] + route[1]}
    memo.arrive(10 * MS, leader + twin)
    assert kinds(memo)[-2:] == [MemoDecision.MISS, MemoDecision.MIRROR]
    assert memo.trace[-1].draws is DrawCase.QUIET_SO_FAR


def test_once_flows_drew_on_links_of_a_kind_twins_there_are_recorded_not_mirrored(store):
    host = FakeMemoHost()
    red = (RED,)
    memo = Memoizer(store, "context", host)
    first = drawing_incast(host, 0, 100, digest=1)
    host.draws = {flow: (5, 1) for flow in first}
    record_episode(memo, host, first, t0=0, finishes=[3 * MS, 4 * MS])
    leader, twin = incast(host, 10, switch=200, senders=3), incast(host, 20, switch=300, senders=3)
    host.random_sources = {link: red for route in host.routes.values() for link in route[0] + route[1]}
    memo.arrive(10 * MS, leader + twin)
    assert kinds(memo)[-2:] == [MemoDecision.MISS, MemoDecision.MISS]
    assert memo.trace[-1].draws is DrawCase.DEPENDS and memo.trace[-1].facts.refusal == MayDraw((RED.what,))


def test_twins_whose_flows_cannot_make_a_queue_mirror_on_links_whose_models_draw_only_at_a_queue(store):
    """One flow a link, no faster than what sends it: a ring's step never reaches RED's threshold."""
    host = FakeMemoHost()
    memo = Memoizer(store, "context", host)
    leader, twin = incast(host, 0, switch=100, senders=1), incast(host, 10, switch=200, senders=1)
    host.random_sources = {link_id(100, 1): (RED,), link_id(200, 1): (RED,)}  # the switches' ports
    memo.arrive(MS, leader + twin)
    assert kinds(memo) == [MemoDecision.MISS, MemoDecision.MIRROR]
    assert memo.trace[1].draws is DrawCase.QUIET_SO_FAR
