"""The memo pipeline's pieces against the fakes: signatures as records store them, the admission of
courses, a replay's states, the transport policies and the trace's facts. No ns-3, no cppyy."""

from __future__ import annotations

import json

import pytest

from wormhole_ns3.core.draws import DrawCase, Fidelity
from wormhole_ns3.core.links import link_id
from wormhole_ns3.core.shortcuts import MEMO_KINDS, GuardKind
from wormhole_ns3.core.transport import DCQCN, HPCC, TCP, policy_of
from wormhole_ns3.memo.admission import Admission, one_course
from wormhole_ns3.memo.decisions import (
    Cause,
    Intruders,
    MemoDecision,
    MemoStats,
    Miss,
    UnforeseeableFlows,
)
from wormhole_ns3.memo.episodes import Memoizer
from wormhole_ns3.memo.forecast import Forecast
from wormhole_ns3.memo.links import LinkLedger
from wormhole_ns3.memo.randomness import DrewAtItsNodes, StoredCoursesDrew
from wormhole_ns3.memo.record import (
    Arrival,
    EpisodeRecord,
    FlowOutcome,
    RecordError,
    TrackRecord,
    decode_value,
    encode_continuations,
    parse_signature,
    signature_text,
)
from wormhole_ns3.memo.schema import record_problem
from wormhole_ns3.memo.signature import ApartSignature, Direction, LinkName, LinkState, Signature
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.memo.table import Batch, EpisodeMode, OpenEpisode, ReplayState

from fakes import MS, FakeMemoHost, incast, kinds, record_episode

JOINER = Signature("0123456789abcdef", (LinkName(0, Direction.DATA, 1), LinkState(Direction.DATA, 2, "fedcba98", 7)),
                   (LinkName(1, Direction.ACK, 0),), created=2)


@pytest.fixture
def store(tmp_path):
    with MemoStore.open(tmp_path / "memo") as opened:
        yield opened


# -------------------------------------------------------------- signatures, as record.py stores them
def test_a_joiners_signature_is_stored_as_text_and_read_back_equal():
    text = signature_text(JOINER)
    assert text == "0123456789abcdef|0d1,xd2:fedcba98:7|1a0 created 2"
    assert parse_signature(text) == JOINER
    assert JOINER.named_links() == ((0, 1), 1)
    assert JOINER.without_rank() == Signature(JOINER.attributes, JOINER.data, JOINER.ack)


def test_an_opening_flows_and_an_absorbed_openings_signatures_round_trip():
    opening = Signature("ab", (), (LinkState(Direction.ACK, 0, "cd", 0),))
    apart = ApartSignature(bytes.fromhex("beef01"), 3)
    assert [signature_text(s) for s in (opening, apart)] == ["ab||xa0:cd:0", "apart beef01 3"]
    assert [parse_signature(signature_text(s)) for s in (opening, apart)] == [opening, apart]
    assert apart.without_rank() is apart


def test_a_record_with_typed_signatures_decodes_to_the_same_record():
    record = EpisodeRecord(initial=1, arrivals=(Arrival(0, Signature("ab", (), ())), Arrival(50, JOINER),
                                                Arrival(70, ApartSignature(b"\x01", 0))),
                           outcomes=(FlowOutcome(100, ()), FlowOutcome(120, ()), FlowOutcome(90, ())),
                           close_ns=130, events=1_000, events_avoided=0)
    (decoded,), track = decode_value(encode_continuations([record]))
    assert decoded == record and track == TrackRecord()


@pytest.mark.parametrize("text", ["no links at all", "ab|0q1|", "ab|xd1:zz:3|", "ab|0d0| created two"])
def test_a_stored_signature_that_is_none_is_a_record_error(text):
    with pytest.raises(RecordError):
        parse_signature(text)
    document = json.loads(encode_continuations([EpisodeRecord(1, (Arrival(0, Signature("ab", (), ())),),
                                                              (FlowOutcome(1, ()),), 1, 1, 0)]))
    document["continuations"][0]["flows"][0][1] = text
    assert record_problem(json.dumps(document).encode()).startswith("not an episode record (signature ")


# -------------------------------------------------------------- transport policies
def test_each_kind_of_flow_has_its_policy():
    kinds = [("bulk-tcp", False), ("onoff-udp", False), ("rdma-dcqcn", True), ("rdma-hpcc", True),
             ("rdma-timely", True)]
    assert [policy_of(kind, paced) for kind, paced in kinds] == [TCP, TCP, DCQCN, HPCC, HPCC]
    # pacing is the tracker's fact (FlowTracker::IsPaced), not the kind's name: a paced kind of another name
    assert policy_of("bulk-tcp", True) == HPCC and policy_of("rdma-dcqcn", False) == TCP
    # HPCC groups as DCQCN does since a replayed completion puts its last ACK on the wire (moe-small-hpcc exact)
    assert (TCP.guarded, DCQCN.guarded, HPCC.guarded) == (False, True, True)
    assert not DCQCN.rank_sensitive and TCP.rank_sensitive and HPCC.rank_sensitive


# -------------------------------------------------------------- joining patterns
def up(node: int) -> int:
    return link_id(node, 1)


def down(node: int) -> int:
    return link_id(node, 2)


def ring_step(host: FakeMemoHost, first_flow: int, first_rank: int, hpcc: bool = False) -> list[int]:
    """A ring step over hosts 0-3 (rank r sends to r + 1), its flows made starting at ``first_rank``."""
    flows = []
    for i in range(4):
        src = (first_rank + i) % 4
        flow = first_flow + i
        host.add(flow, ((up(src), down((src + 1) % 4)), (up((src + 1) % 4), down(src))), attributes="rdma")
        (host.hpcc if hpcc else host.grouped).add(flow)
        flows.append(flow)
    return flows


def beyond(rank: int, into: bool = False, spine: int = 0) -> tuple[int, tuple[int, int], frozenset[int]]:
    """A flow due at +2 us from ring host ``rank`` to host 10 + rank (into the ring if ``into``), over ``spine``."""
    src, dst = (10 + rank, rank) if into else (rank, 10 + rank)
    return 2_000, (up(src), up(dst)), frozenset({up(src), down(dst), up(dst), down(src), link_id(50, spine)})


@pytest.mark.parametrize("hpcc", [False, True])
def test_a_ring_step_made_from_another_rank_is_the_same_pattern_where_joiners_match_in_any_order(hpcc):
    """The same ring step and joiners, its flows made from rank 3 or from rank 0: one pattern over DCQCN.

    The step before it completes in an order a few ns decide, and releases the ring's flows
    so. Joiners that meet on no link break no ties among themselves, whatever order they are
    made in, and DCQCN joiners are matched in any order (``TransportPolicy.rank_sensitive``):
    a continuation recorded with them stands for both (gpt-13b-128g over DCQCN: a step
    recorded again, 323,000 events, for want of it). HPCC keeps the order of ranks.
    """
    host = FakeMemoHost()
    forecast = Forecast(host, LinkLedger(host))
    joiners = [beyond(rank, spine=rank) for rank in range(4)]
    from_three = forecast.pattern(ring_step(host, 0, 3, hpcc), joiners)
    from_zero = forecast.pattern(ring_step(host, 10, 0, hpcc), joiners)
    assert (from_three == from_zero) is not hpcc
    # which opening flow's ends each joiner meets still counts: joiners into the ring are another pattern
    inward = [beyond(rank, into=True, spine=rank) for rank in range(4)]
    assert forecast.pattern(ring_step(host, 20, 3, hpcc), inward) != from_three


def test_joiners_that_meet_keep_the_order_they_are_made_in():
    """Joiners of one instant that share a link (here one spine) are told apart by the order they are made in.

    On moe-small-dcqcn, whose all-to-all joiners meet on the uplinks, replays taken for
    steps whose joiners were made in another order ended flows up to 0.18% off.
    """
    host = FakeMemoHost()
    forecast = Forecast(host, LinkLedger(host))
    joiners = [beyond(rank) for rank in range(4)]
    assert forecast.pattern(ring_step(host, 0, 3), joiners) != forecast.pattern(ring_step(host, 10, 0), joiners)


# -------------------------------------------------------------- admission
def admission(host: FakeMemoHost, fidelity: Fidelity = Fidelity.SAME_SEED) -> Admission:
    ledger = LinkLedger(host)
    return Admission(host, ledger, Forecast(host, ledger), MemoStats(), fidelity)


def course(left_out: int = 0, draws: int = 0, finish_ns: int = 300_000, seen: int = 1) -> EpisodeRecord:
    return EpisodeRecord(initial=1, arrivals=(Arrival(0, Signature("ab", (), ())),),
                         outcomes=(FlowOutcome(finish_ns, ()),), close_ns=finish_ns, events=1_000, events_avoided=0,
                         left_out=left_out, seen=seen, draws=draws)


def admit(host: FakeMemoHost, records: list[EpisodeRecord], left_out: int = 0,
          allowed: frozenset[GuardKind] = frozenset(MEMO_KINDS), fidelity: Fidelity = Fidelity.SAME_SEED,
          ) -> tuple[list[EpisodeRecord], OpenEpisode]:
    episode = OpenEpisode(0, 0, EpisodeMode.UNMEMOIZED, left_out=left_out)
    admitted = admission(host, fidelity).stored(0, episode, [0], [], records, lambda arrivals: True, allowed,
                                                Batch())
    return admitted, episode


def test_a_course_that_lacked_packets_stands_in_only_for_an_opening_that_lacks_some_too():
    host = FakeMemoHost()
    incast(host, 0, switch=100, senders=1)
    lacking = course(left_out=5)
    assert admit(host, [lacking])[0] == []
    admitted, episode = admit(host, [lacking], left_out=3)
    assert admitted == [lacking] and episode.draw_case is DrawCase.DREW_NOTHING and episode.refusal is None


def test_a_course_that_drew_is_refused_under_same_seed_and_admitted_under_statistical_fidelity():
    host = FakeMemoHost()
    incast(host, 0, switch=100, senders=1)
    drew = course(draws=12)
    admitted, episode = admit(host, [drew])
    assert admitted == [] and episode.draw_case is DrawCase.DEPENDS
    assert episode.refusal == StoredCoursesDrew(drawing=1, most=12)
    admitted, episode = admit(host, [drew], fidelity=Fidelity.STATISTICAL)
    assert admitted == [drew] and episode.draw_case is DrawCase.STATISTICAL


def test_no_course_stands_in_where_the_guard_allows_no_replay():
    host = FakeMemoHost()
    incast(host, 0, switch=100, senders=1)
    assert admit(host, [course()], allowed=frozenset(MEMO_KINDS) - {GuardKind.REPLAY})[0] == []


def test_a_guarded_kinds_course_is_refused_where_a_flow_nobody_foresees_may_reach_it():
    host = FakeMemoHost()
    (flow,) = incast(host, 0, switch=100, senders=1)
    host.paced = host.grouped = {flow}
    host.unforeseen = [(100_000, frozenset({link_id(100, 1)}))]
    admitted, episode = admit(host, [course()])
    assert admitted == [] and episode.refusal == Intruders(links=1, horizon_ns=300_000)
    host.unforeseen = [(400_000, frozenset({link_id(100, 1)}))]  # after the course ends
    assert admit(host, [course()])[0] == [course()]


def test_once_a_callback_on_a_delivery_started_a_flow_no_course_stands_in():
    host = FakeMemoHost()
    assert admission(host).unforeseeable() is None
    host.delivery_creation = "flow 9, created at 0.1 s by a callback on a packet of the flow tagged 2"
    assert admission(host).unforeseeable() == UnforeseeableFlows(host.delivery_creation)


def test_of_courses_ending_alike_the_one_most_recordings_took_is_followed():
    first, second = course(seen=1), course(finish_ns=300_000 - 200, seen=3)
    assert one_course([first, second], DCQCN.end_tolerance) is second
    assert one_course([first, course(finish_ns=300_000 - 400)], DCQCN.end_tolerance) is None  # 400 > 0.1% of span


# -------------------------------------------------------------- a replay's states
def replaying(store) -> tuple[FakeMemoHost, Memoizer, OpenEpisode]:
    host = FakeMemoHost()
    memo = Memoizer(store, "context", host)
    record_episode(memo, host, incast(host, 0, switch=100), t0=0, finishes=[3 * MS, 4 * MS])
    memo.arrive(10 * MS, incast(host, 10, switch=200))
    (episode,) = memo.table.episodes.values()
    assert episode.mode is EpisodeMode.REPLAYING and host.held == [10, 11]
    assert episode.replay is ReplayState.HOLDING  # its course has no joiner: only completions remain
    return host, memo, episode


def test_a_replay_whose_flows_all_completed_closes_and_counts_for_its_key(store):
    host, memo, episode = replaying(store)
    assert memo.completing(13 * MS, 10) and episode.unfinished == {11}
    assert memo.completing(14 * MS, 11)
    assert memo.table.episodes == {} and memo.table.of_flow == {} and episode.replay is ReplayState.COMPLETED
    assert memo.continuations.replays == {episode.key: TrackRecord(completed=1)}
    assert memo.stats.events_avoided == host.events and memo.stats.diverged == 0


def test_a_replay_met_by_a_flow_no_course_has_diverges_and_its_key_is_recorded_again(store):
    host, memo, episode = replaying(store)
    host.add(20, ((link_id(299, 1), link_id(200, 1)), (link_id(201, 1), link_id(200, 9))))
    memo.arrive(12 * MS, [20])
    assert episode.mode is EpisodeMode.UNMEMOIZED and episode.replay is ReplayState.DIVERGED
    diverged = memo.trace[-1]
    assert diverged.kind is MemoDecision.DIVERGED and diverged.facts.cause is Cause.UNEXPECTED_JOINER
    assert (diverged.facts.offset_ns, diverged.facts.resumed) == (2 * MS, 2)
    assert episode.key in memo.continuations.relearn
    assert memo.continuations.replays == {}  # a joiner no course has teaches the key; it is no merge
    assert memo.held_as([10, 11]) == {10: GuardKind.RESUME, 11: GuardKind.RESUME}


def replaying_with_a_joiner(store) -> tuple[FakeMemoHost, Memoizer, OpenEpisode]:
    """An incast recorded with a third sender joining at +1 ms, replayed where that joiner is foreseen."""
    host = FakeMemoHost()
    memo = Memoizer(store, "context", host)
    host.add(5, ((link_id(199, 1), link_id(100, 1)), (link_id(101, 1), link_id(100, 9))))
    memo.arrive(0, incast(host, 0, switch=100))
    memo.arrive(MS, [5])
    for flow, end in ((0, 3 * MS), (1, 4 * MS), (5, 5 * MS)):
        memo.finished(end, flow)
    assert kinds(memo) == [MemoDecision.MISS, MemoDecision.RECORDED]

    host.add(15, ((link_id(299, 1), link_id(200, 1)), (link_id(201, 1), link_id(200, 9))))
    host.due = [(11 * MS, frozenset(sum(host.routes[15], ())))]
    memo.arrive(10 * MS, incast(host, 10, switch=200))
    assert kinds(memo)[-1] is MemoDecision.REPLAY
    (episode,) = memo.table.episodes.values()
    assert episode.replay is ReplayState.MATCHING
    return host, memo, episode


def test_a_replay_matches_its_joiner_then_holds_then_completes(store):
    host, memo, episode = replaying_with_a_joiner(store)
    memo.arrive(11 * MS, [15])
    assert episode.replay is ReplayState.HOLDING and host.held == [10, 11, 15]
    for flow in (10, 11, 15):
        assert memo.completing(host.completions[flow], flow)
    assert episode.replay is ReplayState.COMPLETED and memo.stats.diverged == 0


def test_a_replay_whose_recorded_joiner_does_not_come_diverges_at_its_check(store):
    host, memo, episode = replaying_with_a_joiner(store)
    (check_at, check), = host.calls
    assert check_at == 11 * MS + 1
    check()
    assert episode.replay is ReplayState.DIVERGED
    diverged = memo.trace[-1]
    assert diverged.facts.cause is Cause.MISSING_ARRIVALS and diverged.facts.offset_ns == MS + 1


def test_a_miss_renders_its_facts_as_its_trace_row():
    miss = Miss(bytes.fromhex("00112233445566778899"), flows=2, left_out=0, relearn=False, refusal=None)
    assert miss.render() == ("memo miss 001122334455: 2 flows simulated and recorded "
                             "(no stored continuation opens like it)")
    assert Miss(b"\x01", 1, 3, False, DrewAtItsNodes((6, 7))).render() == (
        "memo miss 01: 1 flows simulated and recorded, kept only until one like a plain run is: replays just "
        "ended on its links left out 3 queued packets a plain run has there (no recording of its key yet, and "
        "flows drew random numbers at nodes 6, 7 of its links earlier in this run)")
