"""The memo inside an ns-3 run: decides flow starts and carries out what the Memoizer decides.

With a memo store, each tracked flow's start event is *gated* when the flow is
discovered (before it could send): it stays where it is in the event queue,
and when its turn comes the flows starting at that instant are handed to the
Memoizer as one batch. The Memoizer says, per flow, start it for real (its own
start event then runs, at its own place among the events of the instant, as in
plain ns-3), or let a recorded episode's completion stand in for it (the flow
starts held in its start event's place); this driver does it with the tracker
and the simulator: per episode and per flow, never per packet.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import numpy as np

from wormhole_ns3.core.backoff import Ledger
from wormhole_ns3.core.draws import Draws, Fidelity, RandomSource
from wormhole_ns3.core.flows import ACK_CLOCKED_CONGESTION_CONTROL, FlowKind, TrajectoryPoint
from wormhole_ns3.core.ports import (
    BoundaryPort,
    Callback,
    Creation,
    DueFlow,
    MemoHost,
    MemoSimulatorPort,
    MemoTrackerPort,
    Release,
    Unforeseen,
)
from wormhole_ns3.core.shortcuts import GuardKind
from wormhole_ns3.core.transport import TransportPolicy, policy_of
from wormhole_ns3.memo.decisions import MemoEvent, MemoStats
from wormhole_ns3.memo.episodes import Memoizer
from wormhole_ns3.memo.record import STATE_FIELDS
from wormhole_ns3.memo.store import MemoStore
from wormhole_ns3.runtime.boundary import (
    int_rows,
    int_values,
    length_prefixed,
    lookup_facts,
    queued_packets,
    unforeseen,
)

PENDING = 0
#: a bound of the bytes of an end of transfer's packet (an RDMA ACK), for how long it crosses a link
_MTU = 1500


class MemoRun(Protocol):
    """What the driver needs from the run it memoizes (the controller is one)."""

    @property
    def ns3(self) -> Any:
        """The loaded ``ns3`` namespace (times, the simulator's clock): C++ names, not a port."""
        ...

    @property
    def tracker(self) -> MemoTrackerPort: ...

    @property
    def impl(self) -> MemoSimulatorPort | None:
        """The run's WormholeSimulatorImpl, once Run() started (the memo acts only inside Run())."""
        ...

    @property
    def boundary(self) -> BoundaryPort:
        """The run's runtime.boundary.Boundary (the vectors C++ takes)."""
        ...

    @property
    def ledger(self) -> Ledger:
        """The run's account of its bets, judgements and recordings (core/backoff.py)."""
        ...

    def events_saved(self) -> int:
        """Packet-level events the run's skips and replays avoided so far."""
        ...

    def callback(self, function: Callable[..., None], *signature: str) -> Callback:
        """An ns3::Callback calling ``function``, kept alive for the run."""
        ...

    def before_flow_start(self, flow: int) -> None:
        """A flow is about to start (or resume) for real: cut short the skips on its links."""
        ...

    def completed_virtually(self, flow: int) -> None:
        """A held flow's completion was injected: it is finished."""
        ...

    def watch_unattributed_events(self) -> None:
        """The driver keeps something an unattributed event may change: report every one."""
        ...

    def steady_events_avoided(self, flows: set[int]) -> int:
        """Events the skips of partitions made only of these flows avoided."""
        ...

    def replay_guard(self) -> tuple[frozenset[GuardKind], bool]:
        """(the memo shortcuts still allowed, should these starts be checked): the error guard's word
        (accel/verify.py)."""
        ...

    def fork_replay_check(self, flows: tuple[int, ...]) -> Any:
        """Fork a child to simulate these flows packet by packet; the parent's check, None in the child."""
        ...

    def replay_check_decided(self, check: Any, held: tuple[int, ...]) -> None:
        """The memo held these flows of a checked batch (replayed, mirrored, absorbed)."""
        ...


class MemoDriver(MemoHost):
    """The run's side of memoization: the Memoizer's host, on the run's tracker and simulator."""

    def __init__(self, run: MemoRun, store: MemoStore, context: str,
                 fidelity: Fidelity = Fidelity.SAME_SEED) -> None:
        self.run = run
        self.tracker = run.tracker
        self.ns3 = run.ns3
        self.memo = Memoizer(store, context, self, fidelity)
        self._routes: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}
        self._route_between: dict[tuple[int, int, int, int], frozenset[int]] = {}
        #: the routes of flows to come, by the number FlowTracker::GetUpcomingDue gives each
        self._route_sets: list[frozenset[int]] = []
        #: What never changes for a flow, asked at every arrival, lookup and completion: its identity
        #: read with its batch's (``_learn``), its route where it is first needed
        self._flow_attributes: dict[int, str] = {}
        self._kinds: dict[int, str] = {}
        self._paced: dict[int, bool] = {}
        self._planned_ops: dict[int, str] = {}
        self._sizes: dict[int, int] = {}
        self._nodes: dict[int, tuple[int, int]] = {}
        #: What a link is, as long as only flows' events ran (``forget_link_attributes``)
        self._link_attributes: dict[int, str] = {}
        self._link_rates: dict[int, float] = {}
        self._link_delays: dict[int, int] = {}
        self._lossless: dict[int, bool] = {}
        self._random_sources: dict[int, tuple[RandomSource, ...]] = {}
        self._waiting: set[int] = set()  #: pending flows whose start event is not scheduled yet
        self._order = itertools.count()
        #: flows whose start event is gated and not decided yet -> (start time, start event uid)
        self._gated: dict[int, tuple[int, int]] = {}
        self._completions: list[tuple[int, int, int]] = []
        self._cancelled: set[int] = set()  #: order numbers of cancelled completions
        self._completion_of: dict[int, tuple[int, int]] = {}  #: flow -> (time, order number) of its completion
        self._calls: list[tuple[int, int, Callable[[], None]]] = []
        #: (time ns, event count) of the held flow's completion being injected: a callback it runs
        #: is a callback on that flow's delivery (``take_over``)
        self._completion_event: tuple[int, int] = (-1, -1)
        #: the first flow a callback on a flow's delivery created, described (``delivery_started``)
        self._delivery_started: str | None = None
        #: while a batch is decided: each start decided (flow, 1 if held), told in one crossing at its end
        self._decisions: list[int] | None = None
        #: flows whose course the tracker keeps at each sample (``_snapshot_if_recorded``)
        self._snapshotting: set[int] = set()
        self.tracker.SetGatedStartCallback(run.callback(self._decide_starts, "unsigned int"))
        self._on_completion = run.callback(self._run_completion)
        self._on_call = run.callback(self._run_call)

    # ------------------------------------------------------- the run's view
    @property
    def inert(self) -> bool:
        """In a child checking a decision (accel/verify.py): new flows start for real, the decisions
        made before the fork go on, and the store is never touched (it belongs to the parent)."""
        return self.memo.inert

    @inert.setter
    def inert(self, inert: bool) -> None:
        self.memo.inert = inert

    def held_as(self, flows: Iterable[int]) -> dict[int, GuardKind]:
        """The shortcut standing in for each of these flows the memo held (``Memoizer.held_as``)."""
        return self.memo.held_as(flows)

    @property
    def _impl(self) -> MemoSimulatorPort:
        """The run's simulator: the memo acts only inside Run(), once the run has it."""
        impl = self.run.impl
        assert impl is not None, "the memo acts only inside Run()"
        return impl

    @property
    def store(self) -> MemoStore:
        return self.memo.store

    @property
    def stats(self) -> MemoStats:
        return self.memo.stats

    @property
    def events(self) -> list[MemoEvent]:
        """The memo's trace so far: replays, mirrors, misses, recordings, divergences."""
        return self.memo.trace

    def run_ended(self) -> None:
        """Simulator::Run() returned: store this run's replays in their keys' track records."""
        self.memo.save_track_records()

    def close(self) -> None:
        """Close the memo store (after the run's last Run())."""
        self.memo.store.close()

    # ------------------------------------------------ flows the run creates
    def take_over(self, created: Creation) -> None:
        """Gate the start events of new (and still waiting) pending flows: the memo decides each start.

        Called right after the event that created them, with the new flows as the
        controller read them, their starts gated already (FlowTracker::TakeCreatedFlows:
        one crossing for the event, not a dozen a flow): if it was a flow's packet event
        (a sink's or an application's callback on what arrived) or a held flow's injected
        completion (the same callbacks), what they are is noted (``delivery_started``).
        A flow whose node is not initialized yet is gated after a later event.
        """
        new = [flow for flow in created.flows if flow.state == PENDING]
        if new and self._delivery_started is None:
            self._note_delivery_started(new[0].flow, created)
        for flow in list(self._waiting):
            if int(self.tracker.GetState(flow)) != PENDING:
                self._waiting.discard(flow)
        for flow in sorted(self._waiting):
            uid = int(self.tracker.GetStartEventUid(flow))
            start = self.tracker.GateStart(flow)
            if start.IsNegative():
                continue  # its node is not initialized yet: try again after the next event
            self._waiting.discard(flow)
            self._gated[flow] = (int(start.GetTimeStep()), uid)
        for created_flow in new:
            # what never changes for a flow, known from its creation
            flow = created_flow.flow
            self._nodes[flow], self._sizes[flow] = created_flow.nodes, created_flow.size
            if created_flow.gated_ns < 0:
                self._waiting.add(flow)  # its node is not initialized yet: try again after the next event
            else:
                self._gated[flow] = (created_flow.gated_ns, created_flow.start_uid)

    def _note_delivery_started(self, flow: int, created: Creation) -> None:
        """Whether the running event, which created ``flow``, reacted to a flow's delivery (see ``take_over``)."""
        tags = self.ns3.WormholeSimulatorImpl
        tag, now = created.tag, created.now_ns
        in_completion = now == self._completion_event[0] and created.event_count == self._completion_event[1]
        if in_completion or tag not in (int(tags.UNATTRIBUTED), int(tags.SYSTEM), int(tags.WORKLOAD)):
            by = "a held flow's completion" if in_completion else f"a packet of the flow tagged {tag}"
            self._delivery_started = f"flow {flow}, created at {now * 1e-9:.9f} s by a callback on {by}"

    def delivery_started(self) -> str | None:
        """The first flow a callback on a flow's delivery created (a PacketSink's Rx trace), described; None
        while none was. No workload oracle tells when such flows come, nor where."""
        return self._delivery_started

    def forget_link_attributes(self) -> None:
        """Something outside the flows ran: a link's parameters may have changed."""
        self._link_attributes.clear()
        self._link_rates.clear()
        self._link_delays.clear()
        self._lossless.clear()
        self._random_sources.clear()

    @property
    def keeps_link_attributes(self) -> bool:
        """True while link facts are cached, which an unattributed event may make stale."""
        return bool(self._link_attributes or self._link_rates or self._link_delays or self._lossless
                    or self._random_sources)

    def _link_fact(self, cache: dict[int, Any], link: int, read: Callable[[int], Any]) -> Any:
        """A fact about a link, read from C++ once until something outside the flows runs."""
        if link not in cache:
            if not self.keeps_link_attributes:
                self.run.watch_unattributed_events()
            cache[link] = read(link)
        return cache[link]

    def _decide_starts(self, flow: int) -> None:
        """A gated start event is next: decide the starts of every flow gated for this instant.

        The decisions (held, or started for real) are told to the tracker in one
        crossing once the batch is decided (FlowTracker::DecideStarts): the tracker reads
        them only when each flow's start event runs, after this callback returns.
        """
        self._decisions = []
        self._decide_batch(flow)
        decisions, self._decisions = self._decisions, None
        if decisions:
            self.tracker.DecideStarts(np.array(decisions, dtype=np.int64), len(decisions))

    def _decide_batch(self, flow: int) -> None:
        """Decide the starts of every flow gated for this instant (``_decide_starts``).

        They reach the Memoizer as one batch, in the order of their start events (the
        order a plain run starts them), their routes and identities read in one crossing
        (``_learn``). A flow whose start event was cancelled in the meantime (its
        application stopped first) is left out: it never starts.
        """
        now = self._now_ns()
        due = [gated for _, gated in sorted((key, f) for f, key in self._gated.items() if key[0] <= now)]
        # whose start event is still pending, in one crossing for the instant's flows
        others = [gated for gated in due if gated != flow]
        uids = dict(zip(others, int_values(self.tracker.GetStartEventUids(np.array(others, dtype=np.int64),
                                                                          len(others))) if others else ()))
        batch = []
        for gated in due:
            del self._gated[gated]
            if gated == flow or uids[gated] != 0:
                batch.append(gated)
        if self.inert:
            self._start_for_real(now, batch)  # a child checking a decision: packet by packet
            return
        allowed, checked = self.run.replay_guard()
        self.memo.allowed = allowed
        check = self.run.fork_replay_check(tuple(batch)) if checked else None
        if checked and check is None:
            self._start_for_real(now, batch)  # this is the child: the batch runs for real
            return
        self._learn(batch)
        self.memo.arrive(now, batch)
        if check is not None:
            self.run.replay_check_decided(check, tuple(sorted(self.memo.held_as(batch))))

    def _start_for_real(self, now: int, batch: list[int]) -> None:
        """A child checking a decision: the batch starts for real, and so do the replays it meets."""
        self.memo.resume_touched(now, batch)
        for started in batch:
            self.start_flow(started)

    # ------------------------------------------------------ MemoHost: facts
    def _learn(self, flows: Sequence[int]) -> None:
        """Read what a lookup asks of each of these flows, for those not known yet, in one crossing
        (FlowTracker::GetLookupFacts): its kind, pacing, fingerprint and planned congestion control,
        and its route unless an earlier question read it (the first answer is kept, as one flow's is).

        A lookup asks all of them of every flow of its batch: one crossing for the batch, not four
        a flow.
        """
        new = [flow for flow in flows if flow not in self._kinds]
        if not new:
            return
        routes = [flow not in self._routes for flow in new]
        facts = lookup_facts(self.tracker.GetLookupFacts(np.array(new, dtype=np.int64), len(new), any(routes), True))
        for flow, fact, route in zip(new, facts, routes):
            self._kinds[flow], self._paced[flow] = fact.kind, fact.paced
            self._flow_attributes[flow], self._planned_ops[flow] = fact.fingerprint, fact.planned_congestion_ops
            if route:
                self._routes[flow] = fact.route

    def _learn_routes(self, flows: Sequence[int]) -> None:
        """Read the planned routes of these flows not known yet, in one crossing (flows to come: their
        identities are read when they start, with their batch's)."""
        new = [flow for flow in flows if flow not in self._routes]
        if new:
            facts = lookup_facts(self.tracker.GetLookupFacts(np.array(new, dtype=np.int64), len(new), True, False))
            self._routes.update(zip(new, (fact.route for fact in facts)))

    def flow_route(self, flow: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        if flow not in self._routes:
            self._learn_routes([flow])
        return self._routes[flow]

    def flow_attributes(self, flow: int) -> str:
        if flow not in self._flow_attributes:
            self._learn([flow])
        return self._flow_attributes[flow]

    def link_attributes(self, link: int) -> str:
        known = self._link_attributes.get(link)  # asked for every new link of every signature: no closure made
        if known is not None:
            return known
        return self._link_fact(self._link_attributes, link, lambda id_: str(self.tracker.GetLinkFingerprint(id_)))

    def link_queues(self, links: Sequence[int]) -> list[int]:
        # one crossing for all: a numpy array C++ overwrites in place (a list converted to a
        # std::vector, or a vector returned, would cost as much as a crossing per link)
        return queued_packets(self.tracker, links)

    def link_random_sources(self, link: int) -> tuple[RandomSource, ...]:
        return self._link_fact(self._random_sources, link, lambda id_: tuple(
            RandomSource(str(s.what), bool(s.needsQueue)) for s in self.tracker.GetLinkRandomSources(id_)))

    def link_rate(self, link: int) -> float:
        return self._link_rate(link)

    def drawn_nodes(self) -> frozenset[int]:
        return frozenset(int(node) for node in self._impl.GetDrawNodes())

    def flow_transport(self, flow: int) -> TransportPolicy:
        kind = self._kind(flow)
        return policy_of(kind, self._paced[flow])

    def _kind(self, flow: int) -> str:
        if flow not in self._kinds:
            self._learn([flow])
        return self._kinds[flow]

    def memo_blocker(self, flow: int) -> str | None:
        tracker = self.tracker
        kind = self._kind(flow)
        if kind not in STATE_FIELDS:
            return f"{kind} flows are not memoized"
        if self._size(flow) == 0:
            return "an unlimited flow never completes"
        data, ack = self.flow_route(flow)
        if not data or not ack:
            return "route unknown"
        if kind == FlowKind.BULK_TCP:
            # the flow has not started: its socket, and so its congestion control, is still to come
            control = self._planned_ops[flow]
            if control not in ACK_CLOCKED_CONGESTION_CONTROL:
                # a record holds cwnd, ssthresh and RTTs: a flow resumed from it would lose Cubic's epoch
                return f"{control or 'unknown'} keeps time-based state"
        if not all(self._link_fact(self._lossless, link, lambda id_: bool(tracker.IsLossless(id_)))
                   for link in (*data, *ack)):
            return "a link on its route drops packets at random"
        return None

    def trajectory(self, flow: int) -> list[TrajectoryPoint]:
        return [
            TrajectoryPoint(int(s.time), int(s.delivered), tuple(float(x) for x in s.state))
            for s in self.tracker.GetSnapshots(flow)
        ]

    def bets_paid(self) -> bool:
        """Whether the run's shortcuts so far paid for its bets (``core/backoff.py``)."""
        return self.run.ledger.pays(self.run.events_saved())

    def recorded_flow(self) -> None:
        """A recorded flow ended and its course was read: a bet the run's ledger counts."""
        self.run.ledger.recorded(1)

    def flow_nodes(self, flow: int) -> tuple[int, int]:
        if flow not in self._nodes:
            self._nodes[flow] = int(self.tracker.GetSrcNode(flow)), int(self.tracker.GetDstNode(flow))
        return self._nodes[flow]

    def _size(self, flow: int) -> int:
        if flow not in self._sizes:
            self._sizes[flow] = int(self.tracker.GetSize(flow))
        return self._sizes[flow]

    def upcoming(self, now_ns: int, horizon_ns: int) -> list[DueFlow]:
        """Flows whose start within the horizon is already known, with the links they will load and their nodes.

        Those waiting for their start (taken over from their applications), and those
        a workload will release at known times (see FlowDag::GetUpcomingFlows): after
        compute that is running, or when held flows end whose completions are scheduled.
        """
        until = now_ns + horizon_ns
        gated = [(flow, time) for flow, (time, _) in sorted(self._gated.items()) if time <= until]
        self._learn_routes([flow for flow, _ in gated])  # those not known yet, in one crossing
        known = [DueFlow(time, frozenset(self._links(flow)), self.flow_nodes(flow)) for flow, time in gated]
        # the workloads' flows in one crossing (FlowTracker::GetUpcomingDue): each with its route's
        # number, and only the routes this driver has not seen yet (hundreds of flows a lookup)
        ends: list[int] = []
        for flow, (time, _) in sorted(self._completion_of.items()):
            ends += (flow, time)
        found = int_values(self.tracker.GetUpcomingDue(horizon_ns, np.array(ends or [0], dtype=np.int64), len(ends),
                                                       len(self._route_sets)))
        routes, at = self._route_sets, 1
        for _ in range(found[0]):
            routes.append(frozenset(found[at + 1:at + 1 + found[at]]))
            at += 1 + found[at]
        # the rows made by C-level iteration (a comprehension unpacking each row cost more than the walk)
        known += map(DueFlow, found[at::4], map(routes.__getitem__, found[at + 3::4]),
                     zip(found[at + 1::4], found[at + 2::4]))
        return known

    def releases(self, now_ns: int, horizon_ns: int, flow_ends: dict[int, int], coming_ends: list[tuple[Any, int]],
                 ) -> list[Release]:
        """What the workloads would start within the horizon if these flows ended then (the scheduled
        completions counted as ends too).

        ``flow_ends``: tracked flows and when they would end; ``coming_ends``: flows
        still to come, as an earlier answer named them, and when they would end. Each
        answer is (start, links, nodes, the workload's id of the flow, the flow as
        ``coming_ends`` takes it). The numbers are read in one crossing
        (FlowTracker::GetUpcomingFlowFields), every flow's route met for the first time in
        another (FlowTracker::GetUpcomingFlowRoutes), and the answers made in one pass: a
        lookup plays a replay forward over hundreds of flows.
        """
        ends = {flow: time for flow, (time, _) in self._completion_of.items()} | flow_ends
        ending = sorted(ends.items())
        to_come = self.run.boundary.upcoming_flow_vector(vector[index] for (vector, index), _ in coming_ends)
        upcoming = self.tracker.GetUpcomingFlows(self.ns3.NanoSeconds(horizon_ns), [f for f, _ in ending],
                                                 [time for _, time in ending], to_come,
                                                 [time for _, time in coming_ends], False)
        routes = self._route_between
        fields = int_rows(self.tracker.GetUpcomingFlowFields(upcoming), 6)
        #: the flows between each pair of ports -> one of them (all take the same route)
        between = {(src, dst, src_port, dst_port): index for index, (_, src, dst, src_port, dst_port, _)
                   in enumerate(fields)}
        new = [key for key in between if key not in routes]  # (a keys view's difference walks all routes)
        if new:
            found = length_prefixed(self.tracker.GetUpcomingFlowRoutes(upcoming, [between[key] for key in new]))
            routes.update(zip(new, map(frozenset, found)))
        # a flow is named by its place in this answer's vector: copied out only if it is
        # asked about again
        return [Release(start, routes[src, dst, src_port, dst_port], (src, dst), task, (upcoming, index))
                for index, (start, src, dst, src_port, dst_port, task) in enumerate(fields)]

    def unforeseeable(self, now_ns: int, links: frozenset[int], horizon_ns: int, ends: dict[int, int],
                      own: Iterable[int], beyond_ns: int) -> list[Unforeseen]:
        """``MemoHost.unforeseeable``, the scheduled completions counted as known ends too.

        Both questions to the workload in one crossing (FlowTracker::GetUnforeseeable), which
        returns only the flows that reach the links: a lookup meets hundreds of flows to
        come, most of them elsewhere. Its lists go in one numpy buffer (a list converted to a
        ``std::vector`` costs a crossing several times over).
        """
        if not links:
            return []
        known = {flow: time for flow, (time, _) in self._completion_of.items()} | ends
        query = [*links]
        for flow, time in sorted(known.items()):
            query += (flow, time)
        beyond = [flow for flow in own if flow not in ends]
        query += beyond
        found = self.tracker.GetUnforeseeable(horizon_ns, beyond_ns, np.array(query, dtype=np.int64), len(query),
                                              len(links), len(beyond))
        return [Unforeseen(start, frozenset(reached)) for start, reached in unforeseen(found)]

    def drain_time_ns(self, flows: Iterable[int]) -> int:
        """A lower bound of when the flows can all have arrived: their busiest link at line rate."""
        load: dict[int, int] = {}
        for flow in flows:
            for link in self.flow_route(flow)[0]:
                load[link] = load.get(link, 0) + self._size(flow)
        return max((int(8e9 * size / (self._link_rate(link) or 1e9)) for link, size in load.items()), default=0)

    def _link_rate(self, link: int) -> float:
        return self._link_fact(self._link_rates, link, lambda id_: float(self.tracker.GetLinkRate(id_)))

    def _links(self, flow: int) -> tuple[int, ...]:
        data, ack = self.flow_route(flow)
        return data + ack

    def episode_draws(self, flows: Sequence[int]) -> Draws:
        tags = [int(self.tracker.GetTag(f)) for f in flows]
        impl = self._impl
        count = int(impl.GetTagsDrawCount(tags))
        if not count:
            return Draws()
        return Draws(count, int(impl.GetTagsDrawDigest(tags)), tuple(int(n) for n in impl.GetTagsDrawNodes(tags)))

    def episode_events(self, flows: Iterable[int]) -> tuple[int, int]:
        members = set(flows)
        impl = self._impl
        events = int(impl.GetTagsEventCount([int(self.tracker.GetTag(f)) for f in sorted(members)]))
        return events, self.run.steady_events_avoided(members)

    # ---------------------------------------------------- MemoHost: actions
    def start_flow(self, flow: int) -> None:
        self.run.before_flow_start(flow)
        self._snapshot_if_recorded(flow)
        self._decide(flow, False)

    def _snapshot_if_recorded(self, flow: int) -> None:
        """Keep the flow's course at each sample if a recording will read it (``Memoizer.recording``): a
        snapshot is its sender's congestion state, read at every sample while it runs."""
        if self.memo.recording(flow):
            self.tracker.SetSnapshotting(flow, True)
            self._snapshotting.add(flow)

    def complete_flow_at(self, flow: int, time_ns: int) -> None:
        order = self._schedule(
            self._completions, time_ns, flow, self._on_completion,
            context=self.flow_nodes(flow)[1],
        )
        self._completion_of[flow] = (time_ns, order)

    def cancel_completion(self, flow: int) -> None:
        self._cancelled.add(self._completion_of.pop(flow)[1])

    def hold_flow(self, flow: int) -> None:
        self._decide(flow, True)

    def _decide(self, flow: int, held: bool) -> None:
        """How a gated flow starts: told with its batch's decisions if a batch is being decided (the
        tracker reads a decision only when the flow's start event runs), else now."""
        if self._decisions is None:
            self.tracker.DecideStart(flow, held)
        else:
            self._decisions += (flow, int(held))

    def resume_flow(self, flow: int, delivered: int, state: tuple[float, ...] | None) -> None:
        self.run.before_flow_start(flow)
        self._snapshot_if_recorded(flow)
        if delivered > 0:
            self.tracker.Credit(flow, delivered)
        # the recorded congestion state, as the tracker takes it (a std::vector<double>)
        self.tracker.ResumeHeld(flow, self.run.boundary.double_vector(state or ()))

    def call_at(self, time_ns: int, action: Callable[[], None]) -> None:
        delay = max(0, time_ns - self._now_ns())
        order = next(self._order)
        heapq.heappush(self._calls, (time_ns, order, action))
        self._impl.ScheduleSystemCallback(self.ns3.NanoSeconds(delay), self._on_call)

    def _run_call(self) -> None:
        heapq.heappop(self._calls)[2]()

    def _run_completion(self) -> None:
        _, order, flow = heapq.heappop(self._completions)
        if order in self._cancelled:
            self._cancelled.discard(order)
            return
        self._completion_of.pop(flow, None)
        now = self._now_ns()
        if self.memo.completing(now, flow):
            self._completion_event = (now, int(self._impl.GetEventCount()))
            self.complete_flow_now(flow)

    def complete_flow_now(self, flow: int) -> None:
        self.tracker.CompleteVirtually(flow)
        self.run.completed_virtually(flow)

    def owe_end_of_transfer(self, flow: int) -> tuple[tuple[int, int], ...] | None:
        if not self.tracker.OweEndOfTransfer(flow):
            return None
        # alone on its idle path: each hop's propagation, and an MTU's transmission (a bound of its size)
        hops, when = [], 0
        for link in self.flow_route(flow)[1]:
            leave = when + int(8e9 * _MTU / (self._link_rate(link) or 1e9))
            hops.append((when, leave))
            when = leave + self.link_delay_ns(link)
        return tuple(hops)

    def link_delay_ns(self, link: int) -> int:
        return self._link_fact(self._link_delays, link, lambda id_: int(self.tracker.GetLinkDelay(id_).GetTimeStep()))

    def send_end_of_transfer(self, flow: int) -> None:
        self.tracker.SendOwedEndOfTransfer(flow)

    # ----------------------------------------------- controller notifications
    def flow_finished(self, flow: int) -> None:
        self.memo.finished(self._now_ns(), flow)
        if flow in self._snapshotting:
            self._snapshotting.discard(flow)
            self.tracker.SetSnapshotting(flow, False)

    # ------------------------------------------------------------- helpers
    def _schedule(self, heap: list, time_ns: int, flow: int, callback, context: int = 0) -> int:
        """One simulator event per entry: entries and events share the (time, order) order."""
        order = next(self._order)
        heapq.heappush(heap, (time_ns, order, flow))
        # at its time (now if past): one crossing, the delay made in C++
        self._impl.ScheduleCallbackWithTagAt(time_ns, context, int(self.ns3.WormholeSimulatorImpl.WORKLOAD), callback)
        return order

    def _now_ns(self) -> int:
        return int(self.ns3.Simulator.Now().GetTimeStep())
