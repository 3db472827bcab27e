"""Where a skip is decided: at each rate sample, which partitions are steady and how far they may jump.

At every sample the engine asks, for each partition not skipping, whether it
may be judged (no blocker, settled since its last flow event, no random draws
in its window, a window full, the run's patience with refused judgements),
asks ``steady.py`` whether it is steady, and ``fastforward.py`` how far it may
jump before anything it cannot foresee. The skip itself (credit, move,
shift) is ``skipper.py``'s; the time a partition ran packet by packet is
charged to why it did (``packet_level.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from wormhole_ns3.accel import cycles
from wormhole_ns3.accel.arrivals import Arrivals
from wormhole_ns3.accel.fastforward import FlowProgress, SkipEnd, SkipPlan, plan_skip
from wormhole_ns3.accel.network import Network
from wormhole_ns3.accel.packet_level import PACKET_LEVEL_BY_LIMIT, PacketLevel
from wormhole_ns3.accel.partitioner import Partitioner, PartitionState
from wormhole_ns3.accel.skipper import Skipper
from wormhole_ns3.accel.steady import Limit, Verdict, judge, judge_paced
from wormhole_ns3.accel.verify import Verifier
from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.core.backoff import BackOff, Ledger
from wormhole_ns3.core.draws import Fidelity
from wormhole_ns3.core.flows import WINDOW_GROWS_WITH_TIME, FlowInfo, FlowKind
from wormhole_ns3.core.ports import Callback
from wormhole_ns3.core.trace import SkipRecord, TraceKind

#: A TCP partition is judged at every sample once its window is full: the window slides, so a
#: partition skips as soon as its last ``window`` samples are steady, not at the next
#: multiple of ``window``. A refusal is no reason to wait: DCTCP's shares and queue wander
#: from one window to the next, and the first steady one after a flow event is the one
#: to catch. (Backing off 2, 4, ... samples after refusals kept the demo dumbbell's flows
#: packet by packet longer; a judgement costs a read of every flow's samples, a few
#: hundred microseconds beside the thousands of events of a sampling period.)


@dataclass
class SkipEngine:
    """Judges the partitions at each sample and skips the steady ones whose skip pays off."""

    config: AcceleratorConfig
    network: Network
    partitioner: Partitioner
    arrivals: Arrivals
    skipper: Skipper
    verifier: Verifier
    #: What the run's bets (judgements, recordings) cost against what its shortcuts saved.
    ledger: Ledger
    #: Packet-level events the run's shortcuts avoided so far (``Controller.events_saved``).
    events_saved: Callable[[], int]
    #: The sampling period, s, chosen when the first flow starts (``start_sampling``).
    sample_period: float | None = None
    #: Samples taken so far (paced partitions are judged only at every ``window``-th), reported or
    #: not: ``catch_up`` counts those the tracker took without reporting them.
    samples_taken: int = 0
    #: Whether the tracker reports each sample (FlowTracker::SetSamplesReported): not while no
    #: partition has anything a sample could decide (``quiet``).
    samples_reported: bool = True
    #: Simulated partition-seconds run packet by packet, by the reason they were not skipped.
    packet_level_time: dict[PacketLevel, float] = field(default_factory=dict)
    #: Back-off rows of the skip trace (a partition judged ever more rarely).
    backoff_records: list[SkipRecord] = field(default_factory=list)

    def start_sampling(self, first: FlowInfo, on_sample: Callback) -> None:
        """The first flow sends: sample every flow each ``4 RTT`` of its path (or as configured)."""
        if self.sample_period is not None:
            return
        self.sample_period = self.config.sample_period or 4 * self.network.path_rtt(first)
        ns3 = self.network.ns3
        period = ns3.NanoSeconds(max(1, round(self.sample_period * 1e9)))
        self.network.tracker.ConfigureSampling(period, 1, on_sample)

    @property
    def period(self) -> float:
        """The sampling period, s (chosen when the first flow starts, before any sample)."""
        assert self.sample_period is not None, "no window before the first flow starts"
        return self.sample_period

    def sampled(self, now: float) -> None:
        """The tracker took a rate sample of every sampled flow: judge the partitions whose turn it is."""
        self.samples_taken += 1
        partitions = list(self.partitioner.partitions.values())
        # which flows delivered since the last sample unstalls a stalled partition; only a partition
        # that may be judged can stall, and a new one is not judged before a later sample has taken
        # them: with none, the crossing is saved (a run whose every link may draw, under same-seed
        # fidelity, makes 12,828 of them and judges nothing)
        judgeable = any(not (st.blocker or st.draws_at) for st in partitions)
        progressed = set(self.network.tracker.TakeProgressedFlows()) if judgeable else set()
        for st in partitions:
            if st.stalled and not progressed.isdisjoint(st.partition.flows):
                st.stalled = False
            if not st.paused:
                self.consider(st, now)
                self._account(st, now)

    def report_samples(self, now: float, wanted: bool = False) -> None:
        """Have the tracker report samples only while one may decide something (``wanted``: a caller's own need).

        While every partition is ``quiet`` a sample only charges each one's
        packet-level time to a reason that cannot change before the next flow
        event: the tracker keeps sampling (the same instants, the same samples)
        and ``catch_up`` charges the samples it did not report. A run whose every
        link draws under same-seed fidelity then makes no crossing per sample.
        """
        wanted = wanted or not all(self.quiet(st, now) for st in self.partitioner.partitions.values())
        if wanted != self.samples_reported:
            self.samples_reported = wanted
            self.network.tracker.SetSamplesReported(wanted)

    def quiet(self, st: PartitionState, now: float) -> bool:
        """Whether no sample can change what the partition does or why, until its flows change.

        Not judged for its lifetime (a flow that must run packet by packet, queues that
        draw), not settling (the reason its time is charged to would change), and not
        driven by the script's own code (its sender may add a blocker at any sample).
        A skipping partition is not: its skip may be cut short, and it is judged after.
        """
        if st.paused or not (st.blocker or st.draws_at):
            return False
        return not (st.blocker is None and st.script_driven) and not self._settling(st, now)

    def catch_up(self, now: float) -> None:
        """Charge the samples the tracker took without reporting them as ``sampled`` would have charged them.

        Called before the partitions change: each quiet partition's reason was the
        same at each of those samples as it is now.
        """
        if self.samples_reported:
            return
        for _ in range(int(self.network.tracker.GetSampleCount()) - self.samples_taken):
            self.samples_taken += 1
            for st in self.partitioner.partitions.values():
                self._account(st, now)

    def resumed(self, now: float) -> None:
        """A skip ended: the partitions whose pause is over sample, and may skip again at once."""
        for st in list(self.partitioner.partitions.values()):
            if st.paused_until is not None and st.paused_until <= now + 1e-12:
                self.skipper.resume(st, now)
                if st.rates is not None:
                    self.consider(st, now)

    def consider(self, st: PartitionState, now: float) -> None:
        """Skip the partition if it is steady and a skip is long enough to pay off."""
        if not self.verifier.allows_skips():
            return  # a child checking a decision runs packet by packet; so does a kind the guard stopped
        part = st.partition
        self.partitioner.refresh_blocker(st)
        if st.blocker or st.draws_at:
            return
        if self._settling(st, now):
            return
        if self._moves_random_streams(st, now):
            return
        if st.rates is not None and now >= st.rates_until:
            st.rates = None  # carried as far as they were seen to hold: judge afresh
        if st.rates is None:
            if st.stalled:
                return  # still no byte since the window that had none: judged alike
            paced, early = self._paced(st), self._judged_early(st, now)
            shortest = self.config.window if paced and not early else min(self.config.min_window,
                                                                           self.config.window)
            if now - st.window_from < shortest * self.period * (1 - 1e-9):
                return  # the window cannot be full yet: nothing to read
            if paced and not early and self.samples_taken % self.config.window:
                # paced flows (RDMA) are judged on whole windows only: judged at any sample, a
                # DCQCN partition skipped into a flow's release and one flow ended 27% off
                # (tests/test_rdma_accel_skip.py). That is the chaos of two DCQCN flows meeting
                # (plain ns-3 gives the same 27% with the ring starting 10 ns earlier), not an
                # error of the skip-back; the sliding window stays for TCP until contending paced
                # flows are measured on it
                return
            backing_off = not self.ledger.pays(self.events_saved())
            if not st.patience.due(backing_off):
                return  # refused at every judgement while no shortcut has paid: judged more rarely
            verdict = self._judge(st, early)
            measured = self._cycles(st) if verdict.steady else {}
            if isinstance(measured, Verdict):
                verdict, measured = measured, {}
            self.ledger.judged(len(part.flows))
            st.last_verdict = verdict
            if early and verdict.limit is Limit.WINDOW_NOT_FULL:
                return  # not at line rate: it waits for a whole window, as paced flows always did
            if not verdict.steady:
                st.held_back_by = verdict.limit
                st.stalled = verdict.limit is Limit.NO_PROGRESS
                if st.patience.lost(backing_off):
                    self._backed_off(st, now)
                return
            st.patience.won()
            st.rates, st.reason, st.idle = dict(verdict.rates), verdict.reason, verdict.idle
            st.cycles = measured
            st.rates_until = now + verdict.horizon
        exempt = self._idle_hosts(st)
        if exempt is None:
            st.rates = None  # an idle flow is on the move: judge a fresh window
            return
        if self.arrivals.connecting_on(part.links, now) is not None:
            return  # it joins once it sends: the partition is judged afresh then
        if self._newcomer_due(st, now):
            return  # the newcomer would meet the congestion cycle in the phase a skip froze
        simulator = self.network.simulator
        plan = plan_skip(
            now,
            st.rates,
            {f: self._progress_of(f) for f in part.flows},
            bounds={
                SkipEnd.UNATTRIBUTED_EVENT: simulator.NextUnattributedEventTime().GetSeconds(),
                SkipEnd.FLOW_ARRIVAL: self.arrivals.next_on(part.links, now),
                SkipEnd.RATES_SEEN_TO_HOLD: st.rates_until,
                SkipEnd.IDLE_FLOW_WAKES: (
                    simulator.NextEventTimeOn(exempt).GetSeconds() if exempt else float("inf")
                ),
            },
            tail=self.config.tail_rtts * st.rtt,
            min_skip=self.config.min_skip_samples * self.period,
            max_skip=self.config.max_skip,
        )
        if plan is not None and st.cycles:
            plan = self._whole_cycles(st, plan)
        if plan is not None:
            if self.verifier.selects_skip() and self.verifier.fork_skip(tuple(sorted(part.flows)), plan):
                return  # this is the child: it simulates the skip's time packet by packet
            self.skipper.skip(st, plan, exempt, self._settled(st, plan.start))
        elif st.idle:
            st.rates = None  # shares with idle flows hold only until one of them wakes

    def _cycles(self, st: PartitionState) -> dict[int, cycles.Cycle] | Verdict:
        """The congestion cycles of the partition's flows whose window grows with time, or the verdict refusing them.

        Only flows that met congestion signals since the partition's last change
        cycle; one that met none has its window held (``judge`` saw to it), which
        its clocks do not move. A flow whose last cycles do not repeat is refused
        as ``Limit.CYCLE_UNSEEN``: its period is not yet what a skip may count on.
        """
        flows, tracker = self.network.flows, self.network.tracker
        found: dict[int, cycles.Cycle] = {}
        for f in sorted(st.partition.flows):
            if flows[f].congestion_control not in WINDOW_GROWS_WITH_TIME:
                continue
            signals = np.array(tracker.GetNotificationSamples(f), dtype=np.int64, copy=True)
            if len(signals) == 0 or signals[-1] == signals[0]:
                continue
            measured = cycles.measure(f, signals, np.array(tracker.GetWindowSamples(f), dtype=np.int64, copy=True),
                                      self.period, self.config.congestion_cycles)
            if isinstance(measured, str):
                return Verdict(Limit.CYCLE_UNSEEN, measured, f)
            found[f] = measured
        return found

    def _whole_cycles(self, st: PartitionState, plan: SkipPlan) -> SkipPlan | None:
        """The plan cut to whole congestion cycles of the partition's cycling flows (``cycles.cut``), or None.

        Uncut when every such flow ends within its tail after the planned skip:
        its phase is then seen by nothing but its last packets. Cut, it ends at
        ``SkipEnd.WHOLE_CYCLES`` if that is earlier than planned, and the
        partition is judged afresh after it (the period's error grows with every
        cycle a skip spans on one measurement).
        """
        rates = st.rates
        assert rates is not None, "only a partition judged steady is planned"
        tail = self.config.tail_rtts * st.rtt
        ending = [f for f in st.cycles
                  if (left := self._progress_of(f).remaining) is not None
                  and left - rates[f] * plan.duration <= rates[f] * tail * (1 + 1e-9)]
        if len(ending) == len(st.cycles):
            return plan
        whole = cycles.cut(plan.duration, st.cycles)
        if whole is None or whole.length < self.config.min_skip_samples * self.period:
            return None
        shortened = whole.length < plan.duration * (1 - 1e-12)
        return replace(plan, duration=whole.length,
                       credits={f: int(rate * whole.length) for f, rate in rates.items()},
                       end=SkipEnd.WHOLE_CYCLES if shortened else plan.end,
                       tail_flow=None if shortened else plan.tail_flow, cycles=whole.cycles)

    def _contends(self, st: PartitionState) -> bool:
        """Whether the partition's flows contend (``_contended``), worked out at the first asking."""
        if st.contended is None:
            st.contended = self._contended(st.partition.flows)
        return st.contended

    def _newcomer_due(self, st: PartitionState, now: float) -> bool:
        """Whether a flow is due to start on a TCP partition's links before its flows end: it holds the skip off.

        A skip moves the partition's packets and freezes its flows' windows, so the
        partition resumes in the phase of its congestion cycle the skip started in,
        not the one plain ns-3 reaches at the skip's end; nothing brings that phase
        back (a sawtooth is a cycle, not a fixed point), and a flow that joins meets
        the other phase. Due means created and waiting for its start, or one a
        workload may release there at the earliest it may (``Arrivals.release_on``).
        Paced flows (RDMA) keep their own rule (``_settling``); a
        flow nobody foresees still cuts a skip short. The flows' ends are estimated
        at their credited rates; a partition of flows of unknown size (or idle)
        runs until the newcomer has come.
        """
        if self._paced(st) or st.rates is None:
            return False
        ends = []
        for f in st.partition.flows:
            remaining, rate = self._progress_of(f).remaining, st.rates.get(f, 0.0)
            ends.append(now + remaining / rate if remaining is not None and rate > 0 else float("inf"))
        last_end = max(ends, default=now)
        links = st.partition.links
        return self.arrivals.next_on(links, now) < last_end or self.arrivals.release_on(links, now, last_end) < last_end

    def _paced(self, st: PartitionState) -> bool:
        """Whether some flow of the partition is paced, worked out at the first asking."""
        if st.paced is None:
            st.paced = any(self.network.flows[f].paced for f in st.partition.flows)
        return st.paced

    def _contended(self, flows: frozenset[int]) -> bool:
        """Whether a flow's max-min fair share is below the narrowest link on its path.

        Paced flows (RDMA) count as contending whatever their paths: their rate is
        their congestion state, which a flow released onto their links while they
        skip (a skip-back) finds frozen, so they keep their settling time.
        """
        return any(self.network.flows[f].paced for f in flows) or self.network.paths_contend(flows)

    def _settling(self, st: PartitionState, now: float) -> bool:
        """Whether a contended partition is still within its settling time after its last flow event.

        Paced flows count as contending (``_contended``), except while they may be
        judged early (``_judged_early``): alone on their links at line rate, they
        have nothing to settle.
        """
        return (now - st.changed_at < self.config.settle_rtts * st.rtt and self._contends(st)
                and not self._judged_early(st, now))

    def _judged_early(self, st: PartitionState, now: float) -> bool:
        """Whether a paced partition may be judged on fewer samples than a window, as TCP ones are.

        Only if each of its flows is alone on its links (a max-min share no lower
        than its narrowest link), and only until a whole window can have been
        taken: ``judge_paced`` then takes the short window only if every flow was
        paced at line rate with no congestion notification. A DCQCN ring step on a
        rail, each flow to itself, otherwise waited a settling time and the next
        whole window of the run's sampling (56 to 72 RTTs on gpt-13b-128g-dcqcn)
        to be skipped at the rate it had from its first RTT.
        """
        if not self._paced(st) or now - st.mark_time >= self.config.window * self.period * (1 - 1e-9):
            return False
        if st.paced_alone is None:
            flows = st.partition.flows
            st.paced_alone = (all(self.network.flows[f].paced for f in flows)
                              and not self.network.paths_contend(flows))
        return st.paced_alone

    def _moves_random_streams(self, st: PartitionState, now: float) -> bool:
        """Under same-seed fidelity, whether the partition's packets drew random numbers since its window opened.

        A skip leaves out the draws its packets would make, so every later draw from
        those streams comes out other than plain ns-3's under the same seed, whatever
        the skip credits: the run would follow another seed's course from there on. A
        partition that draws opens a fresh window, and is judged once one draws nothing.
        """
        if self.config.fidelity is not Fidelity.SAME_SEED:
            return False
        draws = self.partitioner.class_draws(st)
        if draws == st.mark_draws:
            return False
        st.rates, st.held_back_by = None, Limit.DRAWS
        st.last_verdict = Verdict(Limit.DRAWS)
        self.partitioner.mark(st, now)
        return True

    def _backed_off(self, st: PartitionState, now: float) -> None:
        """A partition refused at every judgement starts being judged more rarely: a trace row says why."""
        patience = st.patience
        since = (now - st.changed_at) / st.rtt
        self.backoff_records.append(SkipRecord(
            time=now, flow_ids=tuple(sorted(st.partition.flows)), dt=0.0, events_moved=0, events_avoided=0,
            credited_bytes=0, queue_packets=0, limit=BackOff.JUDGING.value,
            reason=(f"refused at its last {patience.losses} judgements ({st.held_back_by} last), its flows "
                    f"unchanged for {since:.0f} RTTs, and {self.ledger.words(self.events_saved())}: judged "
                    f"after waits doubling from {patience.wait} to {patience.max_wait} samples until it is "
                    f"steady or its flows change"),
            kind=TraceKind.BACK_OFF,
        ))

    def _account(self, st: PartitionState, now: float) -> None:
        """Charge the last sampling period of packet-level time of a partition to why it was not skipped."""
        if st.paused:
            return  # it skipped at this sample
        why = self._packet_level_reason(st, now)
        self.packet_level_time[why] = self.packet_level_time.get(why, 0.0) + self.period

    def _packet_level_reason(self, st: PartitionState, now: float) -> PacketLevel:
        """Why an unpaused partition ran its last sampling period packet by packet."""
        if self._settling(st, now):
            return PacketLevel.SETTLING
        if st.end is SkipEnd.FLOW_TAIL and st.rates is not None:
            return PacketLevel.FLOW_TAILS
        if st.blocker:
            return PacketLevel.UNSKIPPABLE_FLOW
        if st.draws_at:
            return PacketLevel.DRAWING
        if st.rates is not None:
            if self.arrivals.connecting_on(st.partition.links, now) is not None:
                return PacketLevel.FLOW_CONNECTING
            if self._newcomer_due(st, now):
                return PacketLevel.NEWCOMER_DUE
            return PacketLevel.SKIP_TOO_SHORT
        verdict = st.last_verdict
        if verdict is None:
            return PacketLevel.FILLING_WINDOW
        if verdict.limit is None:
            # judged steady, but its rates were dropped (an idle flow on the move, a skip cut
            # short or ended by an outside event) and not judged afresh yet: charged to the
            # aggregate, as it always was
            return PacketLevel.AGGREGATE_UNSTEADY
        return PACKET_LEVEL_BY_LIMIT[verdict.limit]

    def _idle_hosts(self, st: PartitionState) -> list[int] | None:
        """The nodes whose events stay in real time during a skip: hosts used only by idle flows.

        None if an idle flow cannot be kept out of the skip: it has packets in the
        network (they would be delayed with the rest), or it shares a host with a
        busy flow.
        """
        if not st.idle:
            return []
        flows = self.network.flows
        busy_nodes = set()
        for f in self.network.active - st.idle:
            busy_nodes |= {flows[f].src_node, flows[f].dst_node}
        hosts = []
        for f in sorted(st.idle):
            if not self.network.tracker.IsQuiet(f):
                return None
            nodes = {flows[f].src_node, flows[f].dst_node}
            if nodes & busy_nodes:
                return None
            hosts += sorted(nodes)
        return hosts

    def _judge(self, st: PartitionState, early: bool) -> Verdict:
        """The steady-state detector's verdict on the partition's samples (``steady.py``)."""
        part, flows, tracker, config = st.partition, self.network.flows, self.network.tracker, self.config
        samples = {f: self._samples(f) for f in part.flows}
        paths = {f: frozenset(flows[f].path) for f in part.flows}
        links = frozenset().union(*paths.values())
        capacity = {link: self.network.link_rate(link) / 8 for link in links}
        if all(flows[f].paced for f in part.flows):
            sent = {f: self._sent_samples(f) for f in part.flows}
            sending = {f: np.array(tracker.GetSendingRateSamples(f), dtype=np.float64, copy=True)
                       for f in part.flows}
            notifications = {f: np.array(tracker.GetNotificationSamples(f), dtype=np.int64, copy=True)
                             for f in part.flows}
            return judge_paced(samples, sent, sending, notifications, self.period,
                               config.window, config.theta, config.fairness, paths, capacity,
                               min_window=config.min_window if early else None)
        demand = {
            f: (flows[f].app_rate if flows[f].kind == FlowKind.ONOFF_UDP else None)
            for f in part.flows
        }
        windowed = [f for f in part.flows if flows[f].tcp]
        return judge(
            samples,
            self.period,
            config.window,
            config.theta,
            config.fairness,
            paths,
            capacity,
            demand,
            config.idle_share,
            sizes={f: flows[f].size for f in part.flows},
            budget=config.convergence_budget,
            min_window=config.min_window,
            sent={f: self._sent_samples(f) for f in part.flows},
            time_grown=frozenset(f for f in part.flows
                                 if flows[f].congestion_control in WINDOW_GROWS_WITH_TIME),
            windows={f: np.array(tracker.GetWindowSamples(f), dtype=np.int64, copy=True) for f in windowed},
            signals={f: np.array(tracker.GetNotificationSamples(f), dtype=np.int64, copy=True)
                     for f in windowed},
            cycles=config.congestion_cycles,
        )

    def _samples(self, flow: int) -> np.ndarray:
        vector = self.network.tracker.GetSamples(flow)
        # copy while the std::vector lives: a view would alias a freed buffer
        return np.array(vector, dtype=np.int64, copy=True)

    def _sent_samples(self, flow: int) -> np.ndarray:
        """The flow's sent-bytes samples, at the instants of ``_samples`` (copied as they are)."""
        return np.array(self.network.tracker.GetSentSamples(flow), dtype=np.int64, copy=True)

    def _progress_of(self, flow: int) -> FlowProgress:
        size = self.network.flows[flow].size
        delivered = int(self.network.tracker.GetDelivered(flow))
        return FlowProgress(
            remaining=(size - delivered) if size else None,
            sendable=int(self.network.tracker.GetSendable(flow)),
        )

    def _settled(self, st: PartitionState, now: float) -> str:
        """How long the partition's transient lasted, as a skip's trace row says it, and what measured it.

        The time since its last flow event, and the check that refused its last
        judgement before this skip (the queue still filling or draining, the
        aggregate or the shares still moving): what held the skip back until then.
        """
        since = f"{(now - st.changed_at) / st.rtt:.0f} RTTs since last flow event"
        if st.kept:
            since += (f", {len(st.kept)} of its {len(st.partition.flows)} flows judged on samples from before "
                      f"it (it left their max-min rates and congested links as they were)")
        if st.held_back_by is not None:
            since += f", held back until then by {st.held_back_by.value}"
        if self.config.settle_rtts > 0 and not self._contends(st):
            since += " (no flow contends: no settling)"
        return since
