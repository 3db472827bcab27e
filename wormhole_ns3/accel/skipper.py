"""A skip made, ended and cut short: what the C++ side is told, and the skip trace's rows.

The skip engine decides that a partition skips and how far (``skip_engine.py``);
this object carries the plan out through the tracker and the simulator: it
credits each flow rate x dt bytes, moves the partition's tag class forward and
the clocks its flows' models keep with it, and writes the trace row. At the
skip's end the partition samples again (``resume``); a flow nobody could
foresee arriving on its links cuts the skip short at the present (``revert``,
the skip-back): events move back, credit is taken back, the row is shortened.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from wormhole_ns3.accel.fastforward import SkipEnd, SkipPlan
from wormhole_ns3.accel.network import Network
from wormhole_ns3.accel.partitioner import Partitioner, PartitionState
from wormhole_ns3.core.draws import DrawCase
from wormhole_ns3.core.ports import Callback
from wormhole_ns3.core.trace import SkipRecord

#: Skip ends after which something outside the partition's flows ran (or its rates
#: expired, or its congestion cycles' period was counted on as far as one measurement
#: goes): its rates are judged afresh.
JUDGE_AFRESH_AFTER = frozenset({SkipEnd.UNATTRIBUTED_EVENT, SkipEnd.RATES_SEEN_TO_HOLD, SkipEnd.WHOLE_CYCLES})


@dataclass
class Skipper:
    """Makes, resumes and reverts the partitions' skips, and keeps their trace rows."""

    network: Network
    partitioner: Partitioner
    #: A skip is cut short by any unattributed event: the tracker must report every one.
    watch_unattributed_events: Callable[[], None]
    #: The callback the simulator calls when a skip ends (``Controller.on_resume``).
    on_resume: Callback = None
    #: The skip trace's rows of skips, in the order made (a skip-back shortens its row).
    skips: list[SkipRecord] = field(default_factory=list)
    reverts: int = 0
    #: Events the skips avoided so far (their trace rows', a skip-back's taken back).
    skipped_events: int = 0

    def skip(self, st: PartitionState, plan: SkipPlan, exempt: list[int], settled: str) -> None:
        """Skip the partition as planned; ``exempt`` nodes' events stay in real time (idle flows' hosts).

        ``settled`` says how long its transient lasted (``SkipEngine._settled``), for the trace row.
        """
        network, tracker = self.network, self.network.tracker
        dt_ns = int(plan.duration * 1e9)
        dt = dt_ns * 1e-9
        window = max(plan.start - st.mark_time, 1e-12)
        event_rate = (self.partitioner.class_events(st) - st.mark_events) / window
        rates = st.rates
        assert rates is not None, "only a partition judged steady is skipped"
        draw_case, drew = self._draws_in_window(st)
        credited, moved = self.pause(st, plan.start, dt_ns, {f: int(rates[f] * dt) for f in st.partition.flows},
                                     exempt)
        key = st.partition.key
        st.end = plan.end
        self.skips.append(
            SkipRecord(
                time=plan.start,
                flow_ids=tuple(sorted(key)),
                dt=dt,
                events_moved=moved,
                events_avoided=int(event_rate * dt),
                credited_bytes=sum(credited.values()),
                queue_packets=max(
                    int(tracker.GetQueuedPackets(link))
                    for f in st.partition.flows
                    for link in network.flows[f].path
                ),
                limit=plan.limit,
                reason=f"{st.reason}; {settled}{drew}{self._cycle_words(st, plan)}",
                draws=draw_case,
                cycles=plan.cycles,
            )
        )
        self.skipped_events += self.skips[-1].events_avoided
        st.patience.won()
        st.held_back_by = None

    def pause(self, st: PartitionState, start: float, dt_ns: int, credits: Mapping[int, int],
              exempt: list[int]) -> tuple[dict[int, int], int]:
        """Credit each flow its bytes, move the partition ``dt_ns`` on and pause it until then.

        What a skip does, and a restored transient (``accel/transients.py``) with its
        recorded bytes and duration. ``exempt`` nodes' events stay in real time (idle
        flows' hosts). The caller appends the trace row next (``st.skip_record`` is its
        index). Returns (bytes each flow was credited, events moved).
        """
        network, tracker, ns3 = self.network, self.network.tracker, self.network.ns3
        credited = {f: int(tracker.Credit(f, credits[f])) for f in sorted(st.partition.flows)}
        self.partitioner.flush_classes()
        moved = int(network.simulator.MoveClassExcept(st.tag_class, ns3.NanoSeconds(dt_ns), exempt))
        for f in st.partition.flows:
            # an idle flow's events stay in real time, and so do the clocks of its models
            shift = tracker.ShiftMonitoredPackets if f in st.idle else tracker.ShiftTimes
            shift(f, ns3.NanoSeconds(dt_ns))
        st.paused_from, st.paused_until, st.credits = start, start + dt_ns * 1e-9, credited
        self.watch_unattributed_events()
        for f in st.partition.flows:
            self.partitioner.set_sampled(f, False)
        st.resume_event = network.simulator.ScheduleHousekeepingCallback(ns3.NanoSeconds(dt_ns), self.on_resume)
        st.skip_record = len(self.skips)
        return credited, moved

    @staticmethod
    def _cycle_words(st: PartitionState, plan: SkipPlan) -> str:
        """What the trace row says of the congestion cycles its length was cut to (or why it was not)."""
        if not st.cycles:
            return ""
        periods = ", ".join(c.words() for c in st.cycles.values())
        if not plan.cycles:
            return f"; not cut to whole congestion cycles ({periods}): every cycling flow ends within its tail after it"
        return f"; {plan.cycles} whole congestion cycle(s) ({periods} cycles measured)"

    def _draws_in_window(self, st: PartitionState) -> tuple[DrawCase, str]:
        """A skip's case with respect to random draws, and its words: what its window drew.

        The rates a skip credits were measured over a window in which every sample
        saw other draws; they held within theta across them, so the credit does not
        depend on the draws the skipped packets would make (the steady window is
        itself recordings under different draws that agree).
        """
        drawn = self.partitioner.class_draws(st) - st.mark_draws
        if not drawn:
            return DrawCase.DREW_NOTHING, ""
        tags = self.network.tags(st.partition.flows)
        nodes = ", ".join(str(int(n)) for n in self.network.simulator.GetTagsDrawNodes(tags))
        return DrawCase.STEADY_ACROSS_DRAWS, (f"; its window drew {drawn} random numbers (at nodes {nodes}) and "
                                              f"its rates held steady across them")

    def resume(self, st: PartitionState, now: float) -> None:
        """The partition's skip is over: it samples again, from a fresh window."""
        st.paused_from = st.paused_until = None
        st.resume_event = None
        self.partitioner.mark(st, now)
        if st.end in JUDGE_AFRESH_AFTER or st.idle:
            # something outside the flows ran: it may have changed them, so judge afresh
            st.rates = None
        for f in st.partition.flows:
            self.partitioner.set_sampled(f, True)

    def revert(self, st: PartitionState, why: str) -> None:
        """Skip-back: cut a running skip short at the present, as if it had been decided so."""
        network, tracker, ns3 = self.network, self.network.tracker, self.network.ns3
        now = network.now()
        until, since = st.paused_until, st.paused_from
        assert until is not None and since is not None, "only a running skip is cut short"
        left = until - now
        full = until - since
        left_ns = int(round(left * 1e9))
        self.partitioner.flush_classes()
        network.simulator.MoveClass(st.tag_class, ns3.NanoSeconds(-left_ns))
        for f in st.partition.flows:
            tracker.ShiftTimes(f, ns3.NanoSeconds(-left_ns))
        taken_back = sum(
            int(tracker.Uncredit(f, int(credit * left / full)))
            for f, credit in st.credits.items()
        )
        if st.resume_event is not None:
            ns3.Simulator.Cancel(st.resume_event)
        st.paused_from = st.paused_until = None
        st.rates = None
        self.partitioner.reverted(st)
        self.reverts += 1
        record = self.skips[st.skip_record]
        self.skipped_events -= record.events_avoided - int(record.events_avoided * (1 - left / full))
        self.skips[st.skip_record] = replace(
            record,
            dt=record.dt - left,
            events_avoided=int(record.events_avoided * (1 - left / full)),
            credited_bytes=record.credited_bytes - taken_back,
            limit=f"skip-back: {why}",
            cycles=0,  # cut short: no longer whole cycles
        )
