"""Pay only when it pays: the run weighs its speculative work against the events it saved, and backs off.

Two kinds of the accelerator's work are bets: judging whether a partition is
steady (a read of every flow's samples, a few hundred microseconds of Python
and C++ crossings) and recording a memo episode (every flow's course, read at
its end). Both pay only if they end in a shortcut: a skip, a replay. Where
nothing holds still and no episode recurs (an all-to-all that contends on every
link), they are a quarter of ``Run()`` and save nothing.

So each run keeps one ledger: the work spent on bets, in *event equivalents*
(how many packet-level events the same time would have run, a fixed cost per
flow read, so that every decision is deterministic: wall time never decides
anything), against the events its skips and replays avoided. While the
shortcuts have paid for the bets, every bet is made as before. While they have
not, a bet that keeps losing is made ever more rarely (``Patience``: after
``patience`` losses in a row, the wait before the next one doubles with each
further loss, up to ``max_wait``); a change of what it bets on (a partition's
flow set) starts it afresh. The skip trace says when and why with a
``back-off`` row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wormhole_ns3.core.vocabulary import Label

#: What judging a partition costs per flow, in packet-level events: its samples, sent bytes,
#: windows and signals cross from C++ (about 5 µs each) and the verdict's arithmetic runs
#: on them, against about 2.5 µs per event of a TCP run (experiments/profile/README.md).
JUDGED_FLOW_EVENTS = 20.0
#: What recording one flow of an episode costs, in packet-level events: its signature at
#: arrival, its trajectory read and thinned at its end.
RECORDED_FLOW_EVENTS = 40.0


class BackOff(Label):
    """Which bet a ``back-off`` row of the skip trace stopped making as often (its ``limit`` column)."""

    #: A partition refused at every judgement is judged ever more rarely.
    JUDGING = "judging backed off"
    #: An episode grew past its bound without closing: it is simulated, not recorded.
    RECORDING = "recording stopped"


@dataclass
class Ledger:
    """The run's account of its bets: the work spent on them against the events the shortcuts saved."""

    #: Work spent on bets so far, in event equivalents (deterministic: counts, never wall time).
    spent: float = 0.0
    #: Judgements made, and flows read by them; flows recorded (what ``spent`` was counted from).
    judgements: int = 0
    judged_flows: int = 0
    recorded_flows: int = 0

    def judged(self, flows: int) -> None:
        self.judgements += 1
        self.judged_flows += flows
        self.spent += flows * JUDGED_FLOW_EVENTS

    def recorded(self, flows: int) -> None:
        self.recorded_flows += flows
        self.spent += flows * RECORDED_FLOW_EVENTS

    def pays(self, saved: int) -> bool:
        """Whether the shortcuts so far, ``saved`` events avoided by the run's skips and replays,
        paid for what the bets cost."""
        return saved >= self.spent

    def words(self, saved: int) -> str:
        """The account as a trace row says it: counts only, so that the trace is the same at every run
        (``--profile`` times the Python of the controller and the memo)."""
        return (f"the run's bets cost {self.spent:,.0f} event equivalents ({self.judgements} judgements of "
                f"{self.judged_flows} flows, {self.recorded_flows} flows recorded) "
                f"against {saved:,} events its shortcuts avoided")


@dataclass
class Patience:
    """How often a bet that keeps losing is made again: every chance at first, then ever more rarely.

    ``due`` is asked at every chance (a partition's every sample); ``lost`` after a
    losing bet, ``won`` after a winning one. Made afresh when what it bets on changes.
    """

    patience: int = 32
    max_wait: int = 64
    #: Bets lost in a row.
    losses: int = 0
    #: Chances left to let pass before the next bet.
    waiting: int = 0
    #: The wait set after the last loss (0: none).
    wait: int = 0
    #: Chances let pass so far (what the back-off saved).
    passed: int = field(default=0)

    def due(self, backing_off: bool) -> bool:
        """Whether to bet at this chance; with ``backing_off`` false every chance is taken."""
        if not backing_off or self.waiting <= 0:
            return True
        self.waiting -= 1
        self.passed += 1
        return False

    def lost(self, backing_off: bool) -> bool:
        """Count a lost bet; True if it started a back-off (the first wait after ``patience`` losses)."""
        self.losses += 1
        if not backing_off or self.losses < self.patience:
            return False
        started = self.wait == 0
        self.wait = min(max(2 * self.wait, 1), self.max_wait)
        self.waiting = self.wait
        return started

    def won(self) -> None:
        self.losses = self.waiting = self.wait = 0
