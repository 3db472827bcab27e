"""The partitions of the active flows, and what each one's state holds, as flows come and go.

``partition.py`` finds which flows share links; this object keeps a
``PartitionState`` for each partition while its active flows stay the same,
and tells the C++ side what follows from the grouping: which tags form one
class of events (a skip moves a class), and which flows are sampled (a skipped
partition's are not). A finished flow still ties its links' partitions together
until its last packets are gone (``DRAIN_RTTS``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wormhole_ns3.accel.bottlenecks import FlowContext, contexts, undisturbed
from wormhole_ns3.accel.cycles import Cycle
from wormhole_ns3.accel.fastforward import SkipEnd
from wormhole_ns3.accel.network import Network
from wormhole_ns3.accel.partition import FlowGroups, Partition
from wormhole_ns3.accel.steady import Limit, Verdict
from wormhole_ns3.core.backoff import Patience
from wormhole_ns3.core.flows import FlowKind, pausable_congestion_control, sender_blocker

#: Round-trip times a finished flow's last packets (FIN exchange, final ACKs) may
#: take to leave its links; until then its links' partitions are not split.
DRAIN_RTTS = 4.0


@dataclass
class PartitionState:
    """What the accelerator remembers about one partition while its flow set is unchanged."""

    partition: Partition
    tag_class: int
    rtt: float
    changed_at: float
    #: Whether some flow's max-min share is below the narrowest link of its path: only
    #: then does the congestion control have shares to settle after a flow event. A flow
    #: alone on its links is judged as soon as a window shows it holding its rate.
    #: None until first asked (``SkipEngine._contends``): most partitions of a run
    #: with many flow events change again before any sample asks.
    contended: bool | None = None
    #: Whether some flow is paced (RDMA): judged on whole windows only. None until first
    #: asked (``SkipEngine._paced``), as ``contended``.
    paced: bool | None = None
    #: Whether every flow is paced and alone on its links: then judged from ``min_window``
    #: samples on while all are at line rate (``SkipEngine._judged_early``). None until
    #: first asked, as ``contended``.
    paced_alone: bool | None = None
    rates: dict[int, float] | None = None
    #: Until when the rates may be carried forward (the verdict's horizon from its judgement).
    rates_until: float = float("inf")
    reason: str = ""
    #: The congestion cycles of its flows whose window grows with time (Cubic), measured with its
    #: rates: a skip of theirs spans whole cycles (``cycles.py``).
    cycles: dict[int, Cycle] = field(default_factory=dict)
    last_verdict: Verdict | None = None
    paused_from: float | None = None
    paused_until: float | None = None
    credits: dict[int, int] = field(default_factory=dict)
    #: Index in SkipEngine.skips of the partition's running (or last) skip.
    skip_record: int = -1
    resume_event: object = None
    #: What ended the partition's last skip.
    end: SkipEnd | None = None
    idle: frozenset[int] = frozenset()
    mark_time: float = 0.0
    #: Since when every flow of it has rate samples: a flow a flow event left alone keeps
    #: its older ones (``Partitioner.keep_undisturbed``), and the others start anew.
    window_from: float = 0.0
    #: The flows whose samples from before the flow event that formed it were kept: the event
    #: left their max-min rates and congested links as they were.
    kept: frozenset[int] = frozenset()
    mark_events: int = 0
    #: random numbers the partition's flows had drawn at ``mark_time``
    mark_draws: int = 0
    #: What refused the partition's last judgement since its last flow event or skip (None:
    #: none did): the skip trace says what the transient was measured to hold it back by.
    held_back_by: Limit | None = None
    #: A judgement found none of its flows delivered over the window (``Limit.NO_PROGRESS``):
    #: every flow waits on its own timer, and each judgement refuses alike until one delivers
    #: again (``FlowTracker::TakeProgressedFlows``).
    stalled: bool = False
    #: Why a flow of it must run packet by packet, if one must (its flows are its key: it stays).
    blocker: str | None = None
    #: Whether a flow of it is driven by the script's own code: its sender may forbid a skip
    #: later (``Partitioner.refresh_blocker``).
    script_driven: bool = False
    #: Under same-seed fidelity, the models on its links that would draw random numbers while
    #: it is skipped, if any: it runs packet by packet (its flows and links are its key: it stays).
    draws_at: str | None = None
    #: How often it is judged while its judgements keep refusing it and the run's shortcuts have
    #: not paid for its bets (``core/backoff.py``); afresh with every new flow set.
    patience: Patience = field(default_factory=Patience)

    @property
    def paused(self) -> bool:
        return self.paused_until is not None


@dataclass
class Partitioner:
    """The partitions of the active and draining flows, their states, and the C++ side's view of them."""

    network: Network
    #: Cubic flows may be skipped (``AcceleratorConfig.skip_cubic``).
    skip_cubic: bool
    #: A re-formed partition keeps the samples of the flows whose max-min share and congested
    #: links the flow event left as they were (``AcceleratorConfig.keep_undisturbed``).
    keep_undisturbed: bool = False
    #: The partitions of the active and draining flows, kept up to date per flow event.
    groups: FlowGroups = field(default_factory=FlowGroups)
    #: Finished flows whose last packets (FIN, final ACKs) may still be on their links,
    #: with the time they are gone: they still tie their links' partitions together.
    draining: dict[int, float] = field(default_factory=dict)
    #: The states of the partitions with active flows, by their active flows, in the
    #: groups' order (ascending smallest flow, draining flows included).
    partitions: dict[frozenset[int], PartitionState] = field(default_factory=dict)
    #: The state of each group of ``groups`` with active flows.
    _state_of: dict[int, PartitionState] = field(default_factory=dict)
    #: States a skip-back left unsampled since the last repartition (see ``repartition``).
    _reverted: list[PartitionState] = field(default_factory=list)
    #: Each tag's class as the partitions set it (a tag starts in a class of its own), and the
    #: changes not yet told to the simulator: a class matters to C++ only when a skip moves
    #: it (``flush_classes``, right before), so the flow events in between cross nothing.
    _tag_class: dict[int, int] = field(default_factory=dict)
    _untold: dict[int, int] = field(default_factory=dict)
    #: The tags in some classes, as ``_tag_class`` has them (made when a class is first named:
    #: it then holds its own tag unless that tag joined another), so that a group's tags
    #: already in its class are found in one set operation.
    _class_members: dict[int, set[int]] = field(default_factory=dict)
    #: The flows the tracker samples, as it was last told (a call that would change nothing
    #: is not made: each is a cppyy round trip, and ``repartition`` runs at every flow event).
    _sampled: set[int] = field(default_factory=set)
    #: What a partition asks of each of its flows, kept from the flow's start (a flow's
    #: record does not change once it sends): its tag, its path's RTT, and the flows that
    #: may block a skip (a blocker of its own, or a sender the script drives, asked anew).
    _tag: dict[int, int] = field(default_factory=dict)
    _rtt: dict[int, float] = field(default_factory=dict)
    _blocker: dict[int, str] = field(default_factory=dict)
    _script_driven: set[int] = field(default_factory=set)
    #: Each active flow's context (its max-min rate, who loads its congested links) when its
    #: partition was last formed, and since when its samples run (``keep_undisturbed``).
    _context: dict[int, FlowContext] = field(default_factory=dict)
    _window_from: dict[int, float] = field(default_factory=dict)

    def any_paused(self) -> bool:
        """Whether a skip is running."""
        return any(st.paused for st in self.partitions.values())

    def paused(self) -> list[PartitionState]:
        """The partitions whose skip is running, in the partitions' order."""
        return [st for st in list(self.partitions.values()) if st.paused]

    def add(self, flow: int) -> None:
        """A flow started sending: it joins (or merges) the partitions of its links."""
        info = self.network.flows[flow]
        self._tag[flow] = info.tag
        self._rtt[flow] = self.network.rtt(flow)
        if info.script_driven:
            self._script_driven.add(flow)
        elif blocker := self.skip_blocker(flow):
            self._blocker[flow] = blocker
        self.groups.add(flow, info.links)

    def drain(self, flow: int, until: float) -> None:
        """A flow finished: its partition's active flows changed, its last packets are gone at ``until``."""
        self.draining[flow] = until
        self.groups.touch(flow)
        self._context.pop(flow, None)
        self._window_from.pop(flow, None)

    def drained(self, now: float) -> bool:
        """Forget the finished flows whose last packets are gone; whether there were any."""
        gone = [f for f, until in self.draining.items() if until <= now + 1e-12]
        for flow in gone:
            del self.draining[flow]
            if flow not in self.network.active:
                self.groups.remove(flow)
        return bool(gone)

    def skip_blocker(self, flow: int) -> str | None:
        """Why a flow must run packet by packet under this run's settings (Cubic unless skip_cubic), or None.

        A flow the script's own code drives is also asked what its sender did so
        far (``SenderBlocker``: a write from a timer of its own, no sink).
        """
        info = self.network.flows[flow]
        blocker = info.skip_blocker(pausable_congestion_control(self.skip_cubic))
        if blocker or not info.script_driven:
            return blocker
        return sender_blocker(int(self.network.tracker.GetSkipBlocker(flow)))

    def refresh_blocker(self, st: PartitionState) -> None:
        """Ask the senders the script drives whether they still let the partition skip.

        What the script does with its socket is seen only as it does it: a write
        from a timer of its own, after its flow started, blocks the partition
        from then on (its flows are its key: it stays blocked).
        """
        if st.blocker is None and st.script_driven:
            flows = self.network.flows
            st.blocker = next((b for f in sorted(st.partition.flows)
                               if flows[f].script_driven and (b := self.skip_blocker(f))), None)

    def reverted(self, st: PartitionState) -> None:
        """A skip-back left the partition's flows unsampled: the next repartition samples them."""
        self._reverted.append(st)

    def repartition(self, now: float) -> None:
        """Bring the partitions the last flow events changed up to date, and their flows' tag classes.

        Draining flows take part in the grouping (their last packets share
        links) but not in a partition's identity: a partition whose active
        flows are unchanged keeps its state when a draining flow leaves it.
        Only the groups ``FlowGroups`` reports stale are looked at; the others
        kept their flows, class and sampling. The C++ calls are those, in the
        same order, that a pass over every partition would make.
        """
        network = self.network
        touched = []
        for group in self.groups.take_stale():
            self._state_of.pop(group, None)
            members = self.groups.get(group)
            if members is None:
                continue
            active = members.flows & network.active
            tag_class = self._assign_class(members.flows)
            if not active:
                continue
            part = Partition(flows=frozenset(active), links=members.links)
            st = self.partitions.get(part.key)
            if st is None:
                st = PartitionState(
                    partition=part,
                    tag_class=tag_class,
                    rtt=max(map(self._rtt.__getitem__, active)),
                    changed_at=now,
                    blocker=self._first_blocker(active),
                    script_driven=not self._script_driven.isdisjoint(active),
                    draws_at=network.queue_draws_on(members.links),
                )
                judged = not (st.blocker or st.draws_at)
                kept = self._undisturbed(part, judged)
                since = {f: self._window_from.get(f, now) for f in kept}
                self.mark(st, now, counted=judged)
                self._window_from.update(since)
                st.kept = kept
                if kept == active:
                    st.window_from = max(since.values(), default=now)
                if judged:
                    # a partition never judged reads no sample: its flows' samples are cleared when
                    # a later partition of theirs is formed, before any judgement (none are kept then)
                    network.tracker.ClearSamples([f for f in active if f not in kept])
            else:
                st.partition, st.tag_class = part, tag_class
            self._state_of[group] = st
            touched.append(group)
        self.partitions = {st.partition.key: st for _, st in sorted(self._state_of.items())}
        if self._reverted:
            # a skip-back leaves its flows unsampled until the next repartition samples them
            reverted = {id(st) for st in self._reverted}
            self._reverted.clear()
            touched += [g for g, st in self._state_of.items() if id(st) in reverted]
        for group in sorted(set(touched)):
            st = self._state_of[group]
            # only the flows whose sampling changes (a set operation, not a call per flow), in the
            # partition's order: a flow sampled anew schedules its sampling event
            flows = st.partition.flows
            changing = flows & self._sampled if st.paused else flows - self._sampled
            for f in [f for f in flows if f in changing] if changing else ():
                self.set_sampled(f, not st.paused)

    def mark(self, st: PartitionState, now: float, counted: bool = True) -> None:
        """Open the partition's window now: the events and draws it judges by are counted from here.

        Not ``counted`` for a partition that is never judged (a flow of it must run packet
        by packet, or its queues draw: its flows are its key, so it stays so): nothing reads
        its counts, and the two crossings are saved.
        """
        st.mark_time, st.window_from, st.kept = now, now, frozenset()
        if counted:
            st.mark_events, st.mark_draws = self.class_events(st), self.class_draws(st)
        self._window_from.update(dict.fromkeys(st.partition.flows, now))

    def _first_blocker(self, active: frozenset[int]) -> str | None:
        """Why a flow of these must run packet by packet (the smallest such flow's reason), or None.

        Only flows with a blocker of their own, or a sender the script drives (asked
        anew, ``skip_blocker``), are looked at, in ascending order.
        """
        blocked = active & self._script_driven | active & self._blocker.keys()
        return next((b for f in sorted(blocked) if (b := self.skip_blocker(f))), None)

    def _undisturbed(self, part: Partition, judged: bool) -> frozenset[int]:
        """The flows of a re-formed partition whose samples still describe them (``bottlenecks.py``).

        Those whose max-min rate and congested links (who loads them, at which rates)
        are as they were when their last partition was formed; none if the partition
        has a paced flow (its rate is its congestion state, judged on its own history)
        or one of unknown path (it may load any link), or keeping is off; and none,
        with no work, if it is never ``judged`` (a flow of it must run packet by
        packet, or its queues draw at random: its flows and links are its key).
        Every flow's context is brought up to date.
        """
        flows = self.network.flows
        if not (self.keep_undisturbed and judged) or any(flows[f].paced or not flows[f].path for f in part.flows):
            if self._context:
                for f in part.flows:
                    self._context.pop(f, None)
            return frozenset()
        paths = {f: frozenset(flows[f].path) for f in part.flows}
        reverse = {f: frozenset(flows[f].reverse_path) for f in part.flows}
        links = frozenset().union(*paths.values(), *reverse.values())
        capacity = {link: self.network.link_rate(link) / 8 for link in links}
        demand = {f: (flows[f].app_rate if flows[f].kind == FlowKind.ONOFF_UDP else None) for f in part.flows}
        after = contexts(paths, reverse, capacity, demand)
        kept = undisturbed(self._context, after)
        for f in part.flows:
            self._context.pop(f, None)
        self._context.update(after)
        return kept

    def set_sampled(self, flow: int, sampled: bool) -> None:
        """FlowTracker::SetSampled, unless the flow is sampled (or not) already.

        Such a call would change nothing: the flow's samples are kept (or, unsampled,
        there are none), and its sampling event is pending already (the tracker keeps
        one pending while a sampled flow is active, from the call that sampled it on).
        """
        if (flow in self._sampled) != sampled:
            if sampled:
                self._sampled.add(flow)
            else:
                self._sampled.discard(flow)
                self._window_from.pop(flow, None)  # unsampled, it has no samples left
            self.network.tracker.SetSampled(flow, sampled)

    def class_events(self, st: PartitionState) -> int:
        """Events executed so far on behalf of the partition's active flows."""
        return int(self.network.simulator.GetTagsEventCount(self.network.tags(st.partition.flows)))

    def class_draws(self, st: PartitionState) -> int:
        """Random numbers the partition's active flows drew so far (``RandomDrawMonitor``)."""
        return int(self.network.simulator.GetTagsDrawCount(self.network.tags(st.partition.flows)))

    def _assign_class(self, flows: frozenset[int]) -> int:
        """Put the tags of a group of flows in one class, named by its smallest tag; return it.

        The simulator is told at the next ``flush_classes``.
        """
        tags = set(map(self._tag.__getitem__, flows))
        tag_class = min(tags)
        current = self._tag_class.get
        joined = self._class_members.get(tag_class)
        if joined is None:
            own = current(tag_class, tag_class) == tag_class
            joined = self._class_members[tag_class] = {tag_class} if own else set()
        if not tags <= joined:
            for tag in tags - joined:
                left = self._class_members.get(current(tag, tag))
                if left is not None:
                    left.discard(tag)
                self._tag_class[tag] = self._untold[tag] = tag_class
            joined |= tags
        return tag_class

    def flush_classes(self) -> None:
        """Tell the simulator the tag classes set since it was last told: a skip is about to move one."""
        for tag, tag_class in self._untold.items():
            self.network.simulator.SetTagClass(tag, tag_class)
        self._untold.clear()
