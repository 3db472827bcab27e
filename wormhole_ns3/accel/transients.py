"""The transient memo in a run (``--transient-memo``): what ``memo/transient.py`` asks of a run, and its restores.

``memo/transient.py`` decides: at each change of a partition's flow set, a
lookup; a recording until the steady judge finds the partition steady. This
object is its host: it reads a partition's flows, links and congestion state
through the tracker, tells what may change the partition within a record's
duration (the same forecast a skip asks: flows due on its links, a workload's
releases, unattributed events), and carries a restore out. A restore is a
skip with a recorded duration, bytes and end state (``Skipper.pause``: credit,
move the partition's events, pause it), after which each flow's congestion
state is set as it was at convergence (``FlowTracker::SetTcpState``). The
partition then samples afresh and is judged as any other: steady skipping, or
the next change's lookup, takes over. A flow nobody foresaw cuts a restore
short as it does a skip (``Skipper.revert``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from wormhole_ns3.accel.arrivals import Arrivals
from wormhole_ns3.accel.fastforward import SkipEnd, SkipPlan
from wormhole_ns3.accel.network import Network
from wormhole_ns3.accel.partitioner import Partitioner, PartitionState
from wormhole_ns3.accel.skipper import Skipper
from wormhole_ns3.accel.verify import Verifier
from wormhole_ns3.core.draws import DrawCase, Fidelity
from wormhole_ns3.core.flows import FlowKind
from wormhole_ns3.core.ports import MemoTrackerPort
from wormhole_ns3.core.shortcuts import GuardKind
from wormhole_ns3.core.trace import SkipRecord
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.memo.transient import (
    CcState,
    Change,
    Convergence,
    FlowAtChange,
    LinkAtChange,
    Progress,
    Restore,
    TransientDecision,
    TransientMemo,
)


@dataclass
class RunTransients:
    """The transient memo's host in one simulation (``memo.transient.TransientHost``)."""

    network: Network
    partitioner: Partitioner
    arrivals: Arrivals
    skipper: Skipper
    verifier: Verifier
    fidelity: Fidelity
    #: Whether the whole-episode memo holds any of these flows (a replay's): they are its, not ours.
    held: Callable[[frozenset[int]], bool]
    #: The partitions' states a lookup was made for (by identity): each change is looked up once.
    _seen: dict[frozenset[int], int] = field(default_factory=dict)
    _flow_attributes: dict[int, str] = field(default_factory=dict)
    _link_attributes: dict[int, str] = field(default_factory=dict)
    memo: TransientMemo | None = None

    @classmethod
    def make(cls, network: Network, partitioner: Partitioner, arrivals: Arrivals, skipper: Skipper,
             verifier: Verifier, fidelity: Fidelity, held: Callable[[frozenset[int]], bool], store: MemoStore,
             context: str) -> RunTransients:
        host = cls(network, partitioner, arrivals, skipper, verifier, fidelity, held)
        host.memo = TransientMemo(host, store, context)
        return host

    @property
    def tracker(self) -> MemoTrackerPort:
        return self.network.tracker

    # ------------------------------------------------------------ the run's hooks
    def repartitioned(self) -> None:
        """After the flow events of an instant: look up each partition whose flow set changed."""
        assert self.memo is not None
        if self._in_child():
            return
        states = self.partitioner.partitions
        self._seen = {flows: seen for flows, seen in self._seen.items() if flows in states}
        for flows, st in list(states.items()):
            if self._seen.get(flows) != id(st):
                self._seen[flows] = id(st)
                self.memo.changed(flows)
        for flows in [r for r in self.memo.recordings if r not in states]:
            self.memo.ended(flows)  # every flow of it finished: no change of another partition took it

    def sampled(self) -> None:
        """After a sample: recordings whose partitions were found steady are stored."""
        assert self.memo is not None
        if self._in_child():
            return
        self.memo.sampled()

    def _in_child(self) -> bool:
        """Whether this process is a child the guard forked (``--verify``): it neither restores nor stores.

        Its store is the parent's (the same LMDB pages, its descriptors on /dev/null): a
        recording the child stored there was lost to the parent's later lookups.
        """
        if self.verifier.verifying is None:
            return False
        assert self.memo is not None
        self.memo.recordings.clear()
        return True

    def trace_rows(self) -> list[SkipRecord]:
        """The lookups' rows of the skip trace (a hit's row is the skipper's, which a skip-back shortens)."""
        assert self.memo is not None
        return [
            SkipRecord(time=lookup.time_ns * 1e-9, flow_ids=lookup.flows, dt=lookup.duration_ns * 1e-9,
                       events_moved=0, events_avoided=0, credited_bytes=0, queue_packets=0,
                       limit=lookup.decision.value, reason=f"transient {lookup.key[:12]}: {lookup.detail}",
                       kind=lookup.decision.trace_kind)
            for lookup in self.memo.lookups if lookup.decision is not TransientDecision.HIT
        ]

    # ------------------------------------------------------------ TransientHost
    def now_ns(self) -> int:
        return int(self.network.ns3.Simulator.Now().GetTimeStep())

    def _state(self, flows: frozenset[int]) -> PartitionState | None:
        return self.partitioner.partitions.get(flows)

    def change(self, flows: frozenset[int]) -> Change | None:
        """The partition's facts at its change; None if it is not one the memo may restore.

        Only TCP flows the skipper may pause (window-clocked, skip-aware RTT), in a
        partition no model on whose links draws once a queue stands, that the
        whole-episode memo holds no flow of, and while the guard allows transients.
        """
        st = self._state(flows)
        if st is None or st.blocker or st.draws_at or st.paused or not self.verifier.allows(GuardKind.TRANSIENT):
            return None
        network, tracker = self.network, self.tracker
        if any(network.flows[f].kind != FlowKind.BULK_TCP for f in flows) or self.held(flows):
            return None
        described = {}
        for f in sorted(flows):
            info = network.flows[f]
            size, delivered = info.size, int(tracker.GetDelivered(f))
            if f not in self._flow_attributes:
                self._flow_attributes[f] = str(tracker.GetFlowFingerprint(f))
            described[f] = FlowAtChange(
                attributes=self._flow_attributes[f], data_path=info.path, ack_path=info.reverse_path,
                state=_cc_state(tracker.GetTcpState(f)),
                bottleneck=min(network.link_rate(link) for link in info.path) / 8,
                remaining=size - delivered if size else None, sendable=int(tracker.GetSendable(f)),
            )
        links = {}
        for link in sorted(st.partition.links):
            if link not in self._link_attributes:
                self._link_attributes[link] = str(tracker.GetLinkFingerprint(link))
            links[link] = LinkAtChange(self._link_attributes[link], int(tracker.GetQueuedPackets(link)))
        return Change(time_ns=self.now_ns(), flows=described, links=links)

    def progress(self, flows: frozenset[int]) -> Progress:
        """Delivered bytes (less a skip made at this very instant), the partition's events and draws."""
        st = self._state(flows)
        assert st is not None
        just_skipped = st.paused and st.paused_from is not None and abs(st.paused_from - self.network.now()) < 1e-12
        credits = st.credits if just_skipped else {}
        return Progress(
            delivered={f: int(self.tracker.GetDelivered(f)) - credits.get(f, 0) for f in flows},
            events=self.partitioner.class_events(st), draws=self.partitioner.class_draws(st),
        )

    def next_change(self, flows: frozenset[int], restore_end_ns: int, flows_end_ns: int) -> str | None:
        """What would meet the partition, in words (None: nothing the run can foresee).

        A flow connecting, due or released on its links before its flows end (it would meet
        the congestion cycle in the phase the restore leaves: ``SkipEngine._newcomer_due``),
        or an unattributed event before the restore ends (it may observe any flow).
        """
        st = self._state(flows)
        assert st is not None
        now, until = self.network.now(), flows_end_ns * 1e-9
        links = st.partition.links
        connecting = self.arrivals.connecting_on(links, now)
        if connecting is not None:
            return f"flow {connecting} connects over its links"
        due = self.arrivals.next_on(links, now)
        if due < until:
            return f"a flow is due on its links at {due:.9f} s"
        released = self.arrivals.release_on(links, now, until)
        if released < until:
            return f"a workload may release a flow on its links at {released:.9f} s"
        unattributed = self.network.simulator.NextUnattributedEventTime().GetSeconds()
        if unattributed < restore_end_ns * 1e-9:
            return f"an unattributed event runs at {unattributed:.9f} s"
        return None

    def converged(self, flows: frozenset[int]) -> Convergence | None:
        """The partition's state if the steady judge found it steady since its change (None otherwise)."""
        st = self._state(flows)
        if st is None or st.last_verdict is None or not st.last_verdict.steady:
            return None
        tracker = self.tracker
        return Convergence(
            states={f: _cc_state(tracker.GetTcpState(f)) for f in flows},
            queued=max((int(tracker.GetQueuedPackets(link)) for link in st.partition.links), default=0),
        )

    def unsteady(self, flows: frozenset[int]) -> str | None:
        """What the partition's last verdict since its change found in the way (None: not judged since)."""
        st = self._state(flows)
        if st is None or st.last_verdict is None or st.last_verdict.limit is None:
            return None
        return st.last_verdict.limit.value

    def restore(self, flows: frozenset[int], restore: Restore) -> None:
        """Skip the transient: credit, move and pause as a skip does, then set each flow's recorded state."""
        st = self._state(flows)
        assert st is not None
        network, tracker = self.network, self.tracker
        now = network.now()
        ordered = tuple(sorted(flows))
        if self.verifier.selects(GuardKind.TRANSIENT):
            plan = SkipPlan(start=now, duration=restore.duration_ns * 1e-9, credits=restore.credits,
                            end=SkipEnd.HORIZON)
            if self.verifier.fork_skip(ordered, plan, GuardKind.TRANSIENT):
                return  # this is the child: it simulates the transient packet by packet
        queued = max((int(tracker.GetQueuedPackets(link)) for link in st.partition.links), default=0)
        credited, moved = self.skipper.pause(st, now, restore.duration_ns, restore.credits, [])
        for f in ordered:
            tracker.SetTcpState(f, _tcp_state(network.ns3, restore.states[f]))
        st.end, st.rates = SkipEnd.HORIZON, None
        self.skipper.skips.append(SkipRecord(
            time=now, flow_ids=ordered, dt=restore.duration_ns * 1e-9, events_moved=moved,
            events_avoided=restore.events, credited_bytes=sum(credited.values()), queue_packets=queued,
            limit=TransientDecision.HIT.value, reason=restore.why(),
            kind=TransientDecision.HIT.trace_kind,
            draws=DrawCase.DREW_NOTHING if not restore.draws else DrawCase.STATISTICAL,
        ))
        self.skipper.skipped_events += restore.events


def _cc_state(state) -> CcState:
    """A ``TcpFlowState`` (cppyy struct, or a fake's) as the memo keeps it."""
    return CcState(float(state.cwnd), float(state.ssthresh), float(state.alpha), int(state.srtt),
                   int(state.rttvar), int(state.rto))


def _tcp_state(ns3, state: CcState):
    """The ``TcpFlowState`` FlowTracker::SetTcpState takes."""
    made = ns3.TcpFlowState()
    made.cwnd, made.ssthresh, made.alpha = state.cwnd, state.ssthresh, state.alpha
    made.srtt, made.rttvar, made.rto = state.srtt, state.rttvar, state.rto
    return made
