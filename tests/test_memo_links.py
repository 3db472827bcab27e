"""The link facts a memo key and a signature read (memo/links.py): the values kept are the values made afresh."""

from __future__ import annotations

import hashlib

from wormhole_ns3.memo.links import LinkLedger, digest, link_state
from wormhole_ns3.memo.record import FlowOutcome
from wormhole_ns3.memo.signature import Direction, LinkState

from fakes import FakeMemoHost


def test_a_kept_link_state_is_the_one_made_afresh_and_keyed_on_every_field():
    state = link_state(Direction.DATA, 2, "ab12", 3)
    assert state == LinkState(Direction.DATA, 2, "ab12", 3)
    assert link_state(Direction.DATA, 2, "ab12", 3) is state
    others = [link_state(Direction.ACK, 2, "ab12", 3), link_state(Direction.DATA, 1, "ab12", 3),
              link_state(Direction.DATA, 2, "ab13", 3), link_state(Direction.DATA, 2, "ab12", 4)]
    assert others == [LinkState(Direction.ACK, 2, "ab12", 3), LinkState(Direction.DATA, 1, "ab12", 3),
                      LinkState(Direction.DATA, 2, "ab13", 3), LinkState(Direction.DATA, 2, "ab12", 4)]
    assert state not in others


def test_a_kept_digest_is_the_digest_of_its_text():
    for text in ("DataRate=10Gbps", "DataRate=10Gbps released 5 ns ago", "DataRate=10Gbps"):
        assert digest(text) == hashlib.sha1(text.encode()).hexdigest()[:16]
    assert digest("a") != digest("b")


def test_queues_are_read_in_the_order_asked_and_count_what_replays_left_out_now():
    host = FakeMemoHost(queues={1: 4, 2: 0, 3: 7})
    host.add(10, ((1, 2), (3,)))
    ledger = LinkLedger(host)
    ledger.now_ns = 100
    ledger.note_recorded_queues(100, 10, FlowOutcome(50, (), rank=0, trailing=(2, 5, 1)))
    assert ledger.queues([3, 1, 2]) == [7, 4, 5]  # link 2: 5 packets the replayed completion left out
    assert ledger.left_out_on([10]) == 5
    ledger.now_ns = 101  # packets left out earlier are not counted
    assert ledger.queues([3, 1, 2]) == [7, 4, 0]
    assert ledger.left_out_on([10]) == 0
