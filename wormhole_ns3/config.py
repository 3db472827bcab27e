"""Settings of one accelerated run.

``AcceleratorConfig`` is the one place a setting is declared: its name, its
default, why the default is what it is, and its command-line help. The
command line (``tools/options.py``), the argv handed to child processes and
the memo's settings context are all derived from these fields, so a new
setting reaches every one of them by being declared here.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from wormhole_ns3.core.draws import Fidelity


def _setting(default: Any, help: str, metavar: str | None = None, flag: str | None = None,
             neutral: bool = False) -> Any:
    """A config field with its command-line help (``%(default)s`` allowed), metavar and flag name.

    A ``neutral`` setting changes how a run is observed, never what it
    simulates: it is left out of the memo's settings context (``decisive``).
    """
    return field(default=default, metadata={"help": help, "metavar": metavar, "flag": flag, "neutral": neutral})


@dataclass(frozen=True)
class AcceleratorConfig:
    """What the accelerator may skip, and how cautiously.

    Times are in seconds. ``None`` means "derive from the partition's links":
    the sampling period from its round-trip time, so that one window of
    ``window`` samples spans many congestion-control oscillations.
    """

    #: A partition is steady when (max - min) / mean of its aggregate rate over
    #: the window is below theta (the Wormhole paper's 5%).
    theta: float = _setting(0.05, "steady when the aggregate rate spread is below this (default %(default)s)")
    #: Rate samples per window.
    window: int = _setting(10, "rate samples per steadiness window (default %(default)s)")
    #: A TCP partition sampled fewer than ``window`` times since its last change is
    #: judged from this many samples on, on a spread scaled down with its window
    #: (theta * k / window): rates that plainly hold are skipped a window sooner,
    #: after every flow event. Paced (RDMA) partitions keep whole windows.
    min_window: int = _setting(
        4, "fewest rate samples a TCP window may have, its spread held below theta * samples / window "
        "(default %(default)s; at --window or above: whole windows only)")
    #: Time between rate samples; None: 4 round-trip times of the partition.
    sample_period: float | None = _setting(
        None, "time between rate samples (default: 4 round-trip times)", metavar="SECONDS")
    #: Every flow's rate over the window must be within this fraction of its
    #: max-min fair share: TCP is unfair for tens of ms after a flow arrives,
    #: and crediting fair shares while it is would bias the FCTs.
    fairness: float = _setting(0.15, "max distance of a flow's rate from its fair share (default %(default)s)")
    #: A flow whose history since the last flow event shows it converging to its share
    #: is credited it only if what its convergence still owes (its distance times the
    #: measured time constant, or half its history if longer) is below this share of its
    #: bytes, whether or not its window is within ``fairness``. DCTCP takes ~25 ms to
    #: share a 10 Gbps link among 8 flows after an arrival: flows of hundreds of MB owe
    #: that convergence under 0.5% of their bytes and are credited their shares tens of
    #: ms sooner; flows of a few MB owe more than their size, and keep ``fairness``
    #: with a converged history. 0: ``fairness`` over the window alone, as before.
    convergence_budget: float = _setting(
        0.005, "share of its bytes a flow converging to its fair share may still owe it when the "
        "skip credits it (default %(default)s; 0: only --fairness)")
    #: A TCP flow that met congestion signals since its partition's last change must show this
    #: many whole congestion cycles since (a signal, its window rising, a signal again) before its
    #: window is taken as held; one that met none, only while its window holds. One cycle may still
    #: be a transient's, the cuts that end slow start (doc/changelog.md). 0: judged on rates and
    #: bytes in flight alone.
    congestion_cycles: int = _setting(
        2, "whole congestion cycles a TCP flow that met congestion signals must show since its last change "
        "before it is skipped (default %(default)s; 0: rates and bytes in flight alone)")
    #: A flow delivering less than this fraction of its fair share is idle
    #: (stalled on its own timer): credited nothing, its hosts' events not moved.
    #: Off (0) by default: on the demo it skips 2.5x more but a stall's end depends
    #: on the marking of single packets, and FCT errors reach 9% (README).
    idle_share: float = _setting(0.0, "skip around flows below this share of their fair rate (default off)")
    #: After a flow starts or finishes in a partition whose flows contend, wait at least
    #: this many round-trip times before judging it. Off by default: the judgement's own
    #: measures say when the transient is over (every flow's bytes in flight stop moving,
    #: so its queue does; the aggregate holds within theta; the shares are fair or their
    #: convergence owes under the budget), judged at every sample from ``min_window`` on.
    #: A fixed 30 RTTs (DCTCP's alpha needs ~1/g = 16 RTTs) kept every preset of the demo
    #: dumbbell packet by packet longer, at the same or larger FCT errors
    #: (experiments/profile/README.md: transients measured, not counted).
    settle_rtts: float = _setting(
        0.0, "RTTs to wait at least after a flow event before judging flows that contend "
        "(default %(default)s: the judgement's measures of queue, aggregate and shares decide)")
    #: A skip stops this many round-trip times of bytes before a flow's end, so
    #: every flow finishes with real packets (real Rx traces, real last ACKs). The
    #: skip moves the flow's packets in flight with it, so its end resumes exactly
    #: and needs few RTTs: 20 and 5 (and 2) gave the same FCT errors on the demo
    #: dumbbell and on gpt-7b-64g over DCQCN, HPCC and SimAI's file, and HPCC kept
    #: half as many events packet by packet with 5.
    tail_rtts: float = _setting(5.0, "RTTs of bytes left to real packets at a flow's end (default %(default)s)")
    #: Skips shorter than this many sample periods are not worth the move.
    min_skip_samples: float = _setting(4.0, "shortest skip worth making, in sample periods (default %(default)s)")
    #: Longest single skip; None: unbounded.
    max_skip: float | None = _setting(None, "longest single skip (default: unbounded)", metavar="SECONDS")
    #: Turn fast-forwarding off entirely (the run is then plain ns-3 plus counters).
    enabled: bool = _setting(True, "fast-forward steady partitions (default on)", flag="fast-forward")
    #: Skip TCP Cubic (ns-3's default congestion control) too. Its window grows with the time since
    #: its last reduction, and a skip pauses it with its clocks (BulkSendFlow::ShiftTimes): it resumes
    #: at the point of its cycle where it paused. A skip of its flows therefore spans whole congestion
    #: cycles of theirs (accel/cycles.py), after which plain ns-3's flow is at that point too; off, a
    #: Cubic flow runs packet by packet.
    skip_cubic: bool = _setting(
        True, "skip TCP Cubic flows too, each skip spanning whole congestion cycles of theirs (default on)")
    #: The transient memo (memo/transient.py): restore a partition's transient after a change of
    #: its flow set as a stored one with the same contention graph and bucketed state ended.
    #: Its restores are not exact (queues stay as they were at the change), hence off.
    transient_memo: bool = _setting(
        False, "memoize partitions' transients: at a flow arriving or leaving, restore the bytes, duration and "
        "congestion state a recorded transient of the same contention graph and bucketed state had at "
        "convergence (needs a memo store; default off: restores are approximate, see doc/memoization.md)")
    #: A flow event clears the rate samples only of the flows whose max-min share, or who
    #: shares their congested links at which rates, it changes (accel/bottlenecks.py): the
    #: others keep their history, so a partition where flows keep arriving on one bottleneck
    #: still judges the flows another one sets on all they showed. Off: every flow of a
    #: partition a flow event changed starts its samples anew.
    keep_undisturbed: bool = _setting(
        False, "keep the samples of flows a flow event leaves their max-min share and congested links "
        "(default off: a flow event restarts every sample of its partition)")
    #: Split the accelerated run's Run() wall time by where it went (runtime/profile.py):
    #: timers around every Python entry point, which cost a little per call, hence off.
    profile: bool = _setting(
        False, "split the accelerated run's Run() time: C++ events, controller, memo, boundary calls, "
        "the script's Python callbacks (run.json 'profile'; default off)", neutral=True)
    #: Follow every point-to-point port's queue (C++ PortQueueMonitor, one callback per
    #: enqueue and dequeue, hence off): run.json 'queues' holds each port's time-weighted
    #: p50/p99 occupancy, and compare sets both sides' side by side.
    queues: bool = _setting(
        False, "measure every port's queue occupancy, p50 and p99 over its active span (run.json "
        "'queues'; compare reports the accelerated run's error against the baseline's; default off)",
        neutral=True)
    #: Measure every flow's packet RTTs, TCP and RDMA (C++ FlowRttMonitor, callbacks per
    #: packet and ACK, hence off): run.json flows hold their mean per 1/20 of the flow's
    #: bytes, and compare gives the accelerated run's RTT NRMSE against the baseline's.
    rtt: bool = _setting(
        False, "measure every flow's packet RTTs (TCP and RDMA), averaged over each 1/20 of its bytes "
        "(run.json flows 'rtt'; compare reports the RTT NRMSE against the baseline; default off)", neutral=True)
    #: The error guard (accel/verify.py): check this fraction of skips and memo replays against
    #: a packet-level re-simulation in a forked copy of the run; stop a kind that errs.
    verify: float = _setting(
        0.0, "re-simulate this fraction of skips and memo replays packet by packet in a forked copy "
        "of the run, report their error (run.json 'verify') and stop a kind of decision whose error "
        "exceeds --verify-bound (default off)", metavar="F", neutral=True)
    #: What the run stands in for (core/draws.py). By default plain ns-3 under the same
    #: seed: a shortcut whose outcome depends on random draws that run would make (RED
    #: marking between its thresholds, PIE, an application's jitter) is not taken.
    #: "statistical" lets recorded courses of random-dependent episodes stand in, and is
    #: judged against ns-3's own seed-to-seed spread (compare --seeds).
    fidelity: Fidelity = _setting(
        Fidelity.SAME_SEED, "same-seed (default): no shortcut whose outcome depends on random draws plain ns-3 "
        "would make otherwise; statistical: courses recorded under other draws may stand in (judge the run "
        "with compare --seeds)", neutral=True)
    #: The error (a fraction of FCT) beyond which the guard stops a kind of decision.
    verify_bound: float = _setting(
        0.01, "the error, as a fraction of FCT, beyond which --verify stops a kind of decision "
        "(default %(default)s)", metavar="FRACTION", neutral=True)

    def __post_init__(self) -> None:
        if not 0 < self.theta < 1:
            raise ValueError(f"theta must be in (0, 1), got {self.theta}")
        if self.window < 2:
            raise ValueError(f"window must be at least 2 samples, got {self.window}")
        if self.min_window < 2:
            raise ValueError(f"min_window must be at least 2 samples, got {self.min_window}")
        if self.sample_period is not None and self.sample_period <= 0:
            raise ValueError(f"sample_period must be positive, got {self.sample_period}")
        if not 0 < self.fairness:
            raise ValueError(f"fairness must be positive, got {self.fairness}")
        if not 0 <= self.convergence_budget < 1:
            raise ValueError(f"convergence_budget must be in [0, 1), got {self.convergence_budget}")
        if self.congestion_cycles < 0:
            raise ValueError(f"congestion_cycles must not be negative, got {self.congestion_cycles}")
        for name in ("settle_rtts", "tail_rtts", "min_skip_samples", "idle_share"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
        if not 0 <= self.verify <= 1:
            raise ValueError(f"verify must be a fraction in [0, 1], got {self.verify}")
        if not self.verify_bound > 0:
            raise ValueError(f"verify_bound must be positive, got {self.verify_bound}")
        if not isinstance(self.fidelity, Fidelity):
            raise ValueError(f"fidelity must be one of {', '.join(map(str, Fidelity))}, got {self.fidelity!r}")
        if self.max_skip is not None and self.max_skip <= 0:
            raise ValueError(f"max_skip must be positive, got {self.max_skip}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def decisive(self) -> dict[str, Any]:
        """The settings that can change what a run simulates: every one but the neutral ones."""
        return {f.name: getattr(self, f.name) for f in fields(self) if not f.metadata["neutral"]}
