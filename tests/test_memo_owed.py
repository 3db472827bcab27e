"""The end of a replayed transfer, owed (memo/owed.py), against the fakes: when a replayed completion's
ACK is left off the wire, when it is sent, and what a key reads meanwhile. No ns-3, no cppyy."""

from __future__ import annotations

import pytest

from wormhole_ns3.core.links import link_id
from wormhole_ns3.memo.episodes import Memoizer
from wormhole_ns3.memo.store import MemoStore

from fakes import MS, FakeMemoHost, incast, record_episode

HOP_NS = 100  #: how long an ACK takes to leave a link's egress (the fakes' links delay 1 us)


@pytest.fixture
def store(tmp_path):
    with MemoStore.open(tmp_path / "memo") as opened:
        yield opened


def replaying(store, hop_ns: int | None = HOP_NS) -> tuple[FakeMemoHost, Memoizer]:
    """An incast recorded at 0 (its flows end at +3 and +4 ms), replayed from 10 ms (held: flows 10, 11)."""
    host = FakeMemoHost(end_hop_ns=hop_ns)
    memo = Memoizer(store, "context", host)
    record_episode(memo, host, incast(host, 0, switch=100), t0=0, finishes=[3 * MS, 4 * MS])
    memo.arrive(10 * MS, incast(host, 10, switch=200))
    assert host.held == [10, 11]
    return host, memo


def starting_on(host: FakeMemoHost, flow: int, link: int, hop: int = 0) -> int:
    """A flow on fresh links of its own but for ``link``, at ``hop`` of its data path."""
    data = [link_id(900 + flow, 1), link_id(920 + flow, 1)]
    data.insert(hop, link)
    host.add(flow, (tuple(data), (link_id(950 + flow, 1),)))
    return flow


def test_a_replayed_completion_on_idle_links_owes_its_ack(store):
    host, memo = replaying(store)
    assert memo.completing(13 * MS, 10)
    assert host.owing == [10] and host.ends_sent == []
    assert memo.stats.ends_owed == 1 and memo.stats.ends_sent == 0


def test_a_flow_simulated_on_its_path_in_its_instant_is_preceded_by_the_owed_ack(store):
    host, memo = replaying(store)
    assert memo.completing(13 * MS, 10)
    first_ack_link = host.routes[10][1][0]
    memo.arrive(13 * MS, [starting_on(host, 30, first_ack_link)])  # a new key: simulated and recorded
    assert 30 in host.started
    assert host.ends_sent == [10] and host.owing == []
    assert memo.stats.ends_paid == 1 and memo.stats.ends_late == 0


def test_a_flow_simulated_on_its_path_after_its_instant_is_a_late_meeting_and_nothing_is_sent(store):
    host, memo = replaying(store)
    assert memo.completing(13 * MS, 10)
    memo.arrive(13 * MS + HOP_NS // 2, [starting_on(host, 30, host.routes[10][1][0])])
    assert host.ends_sent == [] and memo.stats.ends_late == 1


def test_a_flow_simulated_on_its_path_once_it_drained_meets_nothing(store):
    host, memo = replaying(store)
    assert memo.completing(13 * MS, 10)
    memo.arrive(13 * MS + HOP_NS + 1_000 + HOP_NS, [starting_on(host, 30, host.routes[10][1][1])])
    assert host.ends_sent == [] and memo.stats.ends_late == 0 and memo.stats.ends_paid == 0


def test_a_flow_whose_first_packet_reaches_its_path_after_it_left_leaves_it_owed(store):
    host, memo = replaying(store)
    assert memo.completing(13 * MS, 10)
    # on its first link, but one hop (1 us) into its own path: the ACK left that link 100 ns in
    memo.arrive(13 * MS, [starting_on(host, 30, host.routes[10][1][0], hop=1)])
    assert 30 in host.started and host.owing == [10] and memo.stats.ends_late == 0
    memo.arrive(13 * MS + HOP_NS // 2, [starting_on(host, 31, host.routes[10][1][0], hop=1)])
    assert host.owing == [10] and memo.stats.ends_late == 0


def test_a_flow_simulated_elsewhere_leaves_it_owed(store):
    host, memo = replaying(store)
    assert memo.completing(13 * MS, 10)
    memo.arrive(13 * MS, [starting_on(host, 30, link_id(777, 1))])
    assert host.owing == [10] and host.ends_sent == []


def test_an_ack_whose_path_is_busy_is_sent_with_its_completion(store):
    host, memo = replaying(store)
    host.queues[host.routes[10][1][1]] = 1  # the last packet of a flow that ended is still queued there
    assert memo.completing(13 * MS, 10)
    assert host.owing == [] and memo.stats.ends_sent == 1 and memo.stats.ends_owed == 0


def test_an_ack_sent_pays_first_the_acks_owed_in_its_instant_that_share_its_path(store):
    host, memo = replaying(store)
    assert memo.completing(13 * MS, 10)  # owed: its path is idle
    host.queues[host.routes[11][1][1]] = 1
    assert memo.completing(13 * MS, 11)  # sent; flow 10's owed ACK leaves the receiver on the same link, first
    assert host.ends_sent == [10] and memo.stats.ends_sent == 1 and memo.stats.ends_paid == 1


def test_an_ack_of_the_instant_an_ack_was_sent_on_its_path_is_sent_too(store):
    host, memo = replaying(store)
    host.queues[host.routes[10][1][1]] = 1
    assert memo.completing(13 * MS, 10)  # sent: its path is busy
    host.queues.clear()
    assert memo.completing(13 * MS, 11)  # its first link carries flow 10's ACK now
    assert host.owing == [] and memo.stats.ends_sent == 2


def test_a_key_read_in_their_instant_counts_the_owed_acks_a_plain_run_queues(store):
    host, memo = replaying(store)
    assert memo.completing(13 * MS, 10) and memo.completing(13 * MS, 11)
    shared = host.routes[10][1][0]  # both ACKs leave the receiver on it: one is sent, one waits
    assert host.routes[11][1][0] == shared and host.owing == [10, 11]
    memo.ledger.now_ns = 13 * MS
    assert memo.ledger.queues([shared, host.routes[10][1][1]]) == [1, 0]
    memo.ledger.now_ns = 13 * MS + 1  # a plain run's second ACK has left by then
    assert memo.ledger.queues([shared]) == [0]


def test_a_flow_that_cannot_owe_sends_its_ack_with_its_completion(store):
    host, memo = replaying(store, hop_ns=None)
    assert memo.completing(13 * MS, 10)
    assert host.owing == [] and memo.stats.ends_sent == 1


def test_a_replay_diverging_in_the_ack_s_instant_resumes_flows_that_reach_its_path_too_late_to_meet_it(store):
    host, memo = replaying(store)
    assert memo.completing(13 * MS, 10)
    # an unexpected flow on the replay's bottleneck: flow 11 resumes for real; its own ACKs leave
    # the receiver on the link 10's ACK left by, but only after its data crossed the fabric
    memo.arrive(13 * MS, [starting_on(host, 30, link_id(200, 1))])
    assert 11 in host.resumed
    assert host.owing == [10] and memo.stats.ends_late == 0


@pytest.mark.parametrize("after_ns, late", [(2 * HOP_NS + 50, 0), (HOP_NS + 50, 2)])
def test_acks_owed_on_one_link_hold_each_other_back_where_a_later_flow_could_meet_them(store, after_ns, late):
    host, memo = replaying(store)
    assert memo.completing(13 * MS, 10) and memo.completing(13 * MS, 11)  # both leave on the receiver's link
    # a flow on that link after both could have left it, or after one only
    memo.arrive(13 * MS + after_ns, [starting_on(host, 30, host.routes[10][1][0])])
    assert memo.stats.ends_late == late and host.ends_sent == []
