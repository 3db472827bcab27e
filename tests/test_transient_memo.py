"""The transient memo's decisions (memo/transient.py) against a fake host: hit, miss, refusals, the key's buckets."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pytest

from wormhole_ns3.core.draws import Fidelity
from wormhole_ns3.core.trace import TraceKind
from wormhole_ns3.memo.schema import record_problem
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.memo.transient import (
    QUEUE_STEP_PACKETS,
    Change,
    Convergence,
    FlowAtChange,
    LinkAtChange,
    Progress,
    Restore,
    TransientDecision,
    TransientMemo,
    transient_key,
)
from wormhole_ns3.memo.transient_record import CcState, TransientRecord

MSS = 1448
LINE = 10e9 / 8  # bytes/s
SRTT = 60_000  # ns


def flow(cwnd_segments: float, path: tuple[int, ...], ack: tuple[int, ...], size: int | None = 100_000_000,
         alpha: float = 0.1) -> FlowAtChange:
    state = CcState(cwnd=cwnd_segments * MSS, ssthresh=cwnd_segments * MSS / 2, alpha=alpha, srtt=SRTT,
                    rttvar=5_000, rto=1_000_000_000)
    return FlowAtChange(attributes="ns3::TcpDctcp size 100MB", data_path=path, ack_path=ack, state=state,
                        bottleneck=LINE, remaining=size, sendable=size or 10**12)


def dumbbell(flows: dict[int, float], base: int = 0, queued: int = 60, time_ns: int = 1_000_000,
             **flow_args) -> Change:
    """Flows over one shared bottleneck (link ``base``) with a private access link each (and its ACK link)."""
    described, links = {}, {base: LinkAtChange("10Gbps 10us red K65", queued),
                            base + 1: LinkAtChange("10Gbps 10us fifo", 0)}
    for i, (f, cwnd) in enumerate(sorted(flows.items())):
        access, ack = base + 10 + 2 * i, base + 11 + 2 * i
        links[access] = LinkAtChange("10Gbps 10us fifo", 0)
        links[ack] = LinkAtChange("10Gbps 10us red K65", 0)
        described[f] = flow(cwnd, (access, base), (base + 1, ack), **flow_args)
    return Change(time_ns=time_ns, flows=described, links=links)


@dataclass
class FakeHost:
    """The run as the transient memo sees it: one partition's facts at a time, and what it was told."""

    fidelity: Fidelity = Fidelity.SAME_SEED
    time_ns: int = 1_000_000
    facts: Change | None = None
    delivered: dict[int, int] = field(default_factory=dict)
    events: int = 0
    draws: int = 0
    #: what is due on the partition's links (None: nothing), and until when the memo asked (restore end, flows end)
    due: str | None = None
    asked_until: list[tuple[int, int]] = field(default_factory=list)
    steady: Convergence | None = None
    #: the steady judge's last limit since the change while it is not steady (None: not judged)
    judged: str | None = None
    restored: list[tuple[frozenset[int], Restore]] = field(default_factory=list)

    def now_ns(self) -> int:
        return self.time_ns

    def change(self, flows: frozenset[int]) -> Change | None:
        return self.facts

    def progress(self, flows: frozenset[int]) -> Progress:
        return Progress(delivered={f: self.delivered.get(f, 0) for f in flows}, events=self.events, draws=self.draws)

    def next_change(self, flows: frozenset[int], restore_end_ns: int, flows_end_ns: int) -> str | None:
        self.asked_until.append((restore_end_ns, flows_end_ns))
        return self.due

    def converged(self, flows: frozenset[int]) -> Convergence | None:
        return self.steady

    def unsteady(self, flows: frozenset[int]) -> str | None:
        return self.judged

    def restore(self, flows: frozenset[int], restore: Restore) -> None:
        self.restored.append((flows, restore))


@pytest.fixture
def store(tmp_path):
    with MemoStore.open(tmp_path / "memo", key=None) as opened:
        yield opened


def end_state(cwnd_segments: float) -> CcState:
    return CcState(cwnd=cwnd_segments * MSS, ssthresh=cwnd_segments * MSS, alpha=0.05, srtt=70_000, rttvar=4_000,
                   rto=1_000_000_000)


def record_one(memo: TransientMemo, host: FakeHost, flows: dict[int, float], *, draws: int = 0,
               delivered: dict[int, int] | None = None) -> None:
    """Simulate a change of ``flows``, then its convergence 20 ms and 300,000 events later."""
    host.facts = dumbbell(flows)
    host.delivered = {f: 1_000 * f for f in flows}
    host.events, host.draws = 1_000, 0
    assert memo.changed(frozenset(flows)) is TransientDecision.MISS
    host.time_ns += 20_000_000
    host.delivered = {f: 1_000 * f + (delivered or {}).get(f, 5_000_000 + f) for f in flows}
    host.events, host.draws = 301_000, draws
    host.steady = Convergence(states={f: end_state(30 + f) for f in flows}, queued=70)
    memo.sampled()
    host.steady = None


def test_a_miss_is_recorded_at_convergence_and_the_next_alike_change_restores_it(store):
    host = FakeHost()
    memo = TransientMemo(host, store, "ctx")
    record_one(memo, host, {1: 40, 2: 40, 3: 10})
    assert [lookup.decision for lookup in memo.lookups] == [TransientDecision.MISS, TransientDecision.RECORDED]
    recorded = memo.lookups[-1]
    assert (recorded.duration_ns, recorded.events) == (20_000_000, 300_000)
    assert not memo.recordings
    # the same pattern later, on other flows (ids) and links: a hit, each flow given its counterpart's bytes and state
    host.facts = dumbbell({7: 40, 8: 40, 9: 10}, base=100, time_ns=host.time_ns)
    assert memo.changed(frozenset({7, 8, 9})) is TransientDecision.HIT
    [(flows, restore)] = host.restored
    assert flows == {7, 8, 9} and restore.duration_ns == 20_000_000 and restore.events == 300_000
    # the new flow (10 segments) is the third in both: 5,000,003 bytes and its end state
    assert restore.credits[9] == 5_000_003 and restore.states[9] == end_state(33)
    assert sorted(restore.credits.values()) == [5_000_001, 5_000_002, 5_000_003]
    # asked what is due until the restore ends, and until its flows end at the transient's rates: the
    # slowest, 5,000,001 bytes in 20 ms, has 100,000,000 - 5,000,001 left after it
    [(restore_end, flows_end)] = host.asked_until
    assert restore_end == host.time_ns + 20_000_000
    assert flows_end == restore_end + (100_000_000 - 5_000_001) * 20_000_000 // 5_000_001
    assert memo.counts() == {"hit": 1, "miss": 1, "recorded": 1, "refused-draws": 0, "refused-change-due": 0,
                             "refused-flow-ends": 0, "refused-slow-start": 0, "abandoned": 0}


def test_a_change_with_no_record_is_a_miss_and_nothing_is_restored(store):
    host = FakeHost(facts=dumbbell({1: 40, 2: 10}))
    memo = TransientMemo(host, store, "ctx")
    assert memo.changed(frozenset({1, 2})) is TransientDecision.MISS
    assert not host.restored and set(memo.recordings) == {frozenset({1, 2})}


def test_a_recording_whose_flow_set_changes_before_it_converges_is_dropped_with_a_row_saying_why(store):
    host = FakeHost(facts=dumbbell({1: 40, 2: 10}))
    memo = TransientMemo(host, store, "ctx")
    memo.changed(frozenset({1, 2}))
    host.time_ns += 3_000_000  # a joiner 3 ms on, before a steady verdict
    host.facts = dumbbell({1: 40, 2: 12, 3: 10})
    memo.changed(frozenset({1, 2, 3}))
    assert set(memo.recordings) == {frozenset({1, 2, 3})}
    abandoned = memo.lookups[1]
    assert abandoned.decision is TransientDecision.ABANDONED and abandoned.flows == (1, 2)
    assert abandoned.duration_ns == 3_000_000 and abandoned.time_ns == host.time_ns
    assert abandoned.key == memo.lookups[0].key and "never judged since; 0 left: none; 1 joined: 3" in abandoned.detail
    assert abandoned.decision.trace_kind is TraceKind.TRANSIENT_ABANDONED
    # judged unsteady, then not judged at the next sample: its row keeps what the judge last found
    host.judged = "window not full"
    memo.sampled()
    host.judged = None
    memo.sampled()
    # a flow leaving abandons the three-flow recording in turn; nothing was stored for either
    host.time_ns += 1_000_000
    host.facts = dumbbell({1: 40, 2: 10})
    assert memo.changed(frozenset({1, 2})) is TransientDecision.MISS
    assert "last judged unsteady: window not full; 1 left: 3; 0 joined: none" in memo.lookups[-2].detail
    assert memo.counts()["abandoned"] == 2 and memo.counts()["recorded"] == 0
    # a change of flows the recording does not hold leaves it be
    host.facts = dumbbell({5: 40}, base=100)
    memo.changed(frozenset({5}))
    assert set(memo.recordings) == {frozenset({1, 2}), frozenset({5})} and memo.counts()["abandoned"] == 2
    # a partition whose flows all finished: its recording goes, a row says so; one not recorded is no matter
    memo.ended(frozenset({5}))
    memo.ended(frozenset({6}))
    assert set(memo.recordings) == {frozenset({1, 2})} and memo.counts()["abandoned"] == 3
    assert "1 left: 5; 0 joined: none" in memo.lookups[-1].detail


def test_a_record_that_drew_random_numbers_is_refused_under_same_seed_fidelity(store):
    host = FakeHost()
    memo = TransientMemo(host, store, "ctx")
    record_one(memo, host, {1: 40, 2: 10}, draws=3)
    host.facts = dumbbell({1: 40, 2: 10})
    assert memo.changed(frozenset({1, 2})) is TransientDecision.REFUSED_DRAWS
    assert not host.restored
    # a run held to ns-3's seed-to-seed spread may take it
    statistical = FakeHost(fidelity=Fidelity.STATISTICAL, facts=dumbbell({1: 40, 2: 10}))
    assert TransientMemo(statistical, store, "ctx").changed(frozenset({1, 2})) is TransientDecision.HIT
    assert statistical.restored[0][1].draws == 3


def test_a_record_is_refused_when_a_change_is_due_within_its_duration(store):
    host = FakeHost()
    memo = TransientMemo(host, store, "ctx")
    record_one(memo, host, {1: 40, 2: 10})
    host.facts = dumbbell({1: 40, 2: 10}, time_ns=500_000_000)
    host.due = "a flow is due on its links at 0.610000000 s"
    assert memo.changed(frozenset({1, 2})) is TransientDecision.REFUSED_CHANGE_DUE
    assert host.asked_until[-1][0] == 520_000_000 and not host.restored
    assert "due on its links" in memo.lookups[-1].detail


def test_a_record_is_refused_while_a_flow_is_in_slow_start(store):
    """A flow joining has not left slow start: its transient is recorded, never restored."""
    change = dumbbell({1: 40, 2: 10})
    joining = change.flows[2]
    change = replace(change, flows={**change.flows, 2: replace(joining, state=replace(joining.state, ssthresh=1e9))})
    host = FakeHost(facts=change)
    memo = TransientMemo(host, store, "ctx")
    assert memo.changed(frozenset({1, 2})) is TransientDecision.MISS
    host.time_ns += 20_000_000
    host.delivered = {1: 4_000_000, 2: 3_000_000}
    host.steady = Convergence(states={1: end_state(30), 2: end_state(30)}, queued=70)
    memo.sampled()
    assert memo.lookups[-1].decision is TransientDecision.RECORDED
    assert memo.changed(frozenset({1, 2})) is TransientDecision.REFUSED_SLOW_START
    assert not host.restored and "flow 2 is in slow start" in memo.lookups[-1].detail


@pytest.mark.parametrize("alike, other", [
    # windows anywhere within a rate step share a key (rate share 40 * 1448 / 60 us / 1.25 GB/s = 0.77 -> step 6)
    (dict(cwnd={1: 41, 2: 10}), dict(cwnd={1: 48, 2: 10})),
    # queues within a step share a key
    (dict(queued=5), dict(queued=60 + QUEUE_STEP_PACKETS)),
    # DCTCP's alpha within an eighth
    (dict(alpha=0.12), dict(alpha=0.3)),
])
def test_the_key_buckets_each_flows_state_and_the_queues(alike, other):
    def key(cwnd=None, queued=60, alpha=0.1):
        return transient_key(dumbbell(cwnd or {1: 40, 2: 10}, queued=queued, alpha=alpha), "ctx").key

    base = key()
    assert key(**alike) == base
    assert key(**other) != base


def test_the_key_is_the_contention_graph_not_its_numbering_and_holds_the_context():
    key = transient_key(dumbbell({1: 40, 2: 10}), "ctx")
    renumbered = transient_key(dumbbell({20: 10, 30: 40}, base=500), "ctx")
    assert renumbered.key == key.key
    assert renumbered.order == (30, 20) if key.order == (1, 2) else (20, 30)
    assert transient_key(dumbbell({1: 40, 2: 10}), "ns-3 3.45").key != key.key
    # a flow more, or a link of another rate, is another graph
    assert transient_key(dumbbell({1: 40, 2: 10, 3: 10}), "ctx").key != key.key
    slower = dumbbell({1: 40, 2: 10})
    slower = replace(slower, links={**slower.links, 0: LinkAtChange("1Gbps 10us red K65", 60)})
    assert transient_key(slower, "ctx").key != key.key


def test_a_stored_transient_record_reads_back_and_passes_the_stores_checks():
    record = TransientRecord(duration_ns=20_000_000, delivered=(5, 6), states=(end_state(30), end_state(31)),
                             events=300_000, draws=0, queued_at_change=60, queued_at_convergence=70)
    value = record.encode()
    assert TransientRecord.decode(value) == record
    assert record_problem(value) is None
    assert record_problem(value.replace(b'"format":1', b'"format":9')) is not None
