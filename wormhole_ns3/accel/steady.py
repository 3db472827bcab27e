"""Decide whether a partition holds a steady state, and at which rates.

The Wormhole paper calls a flow steady when (max - min) / mean of its last l
rate samples is below theta. With TCP that rule almost never fires: per-flow
delivery is bursty at any sampling period short enough to be useful, while the
aggregate of the flows sharing a bottleneck is very stable. So a partition is
steady when

* its aggregate delivery rate varies by less than theta over the window, and
* every flow's mean rate over the window is within ``fairness`` of its
  max-min fair share (TCP is unfair for tens of ms after an arrival; skipping
  then would freeze the unfairness and bias the flow completion times), or is
  measurably converging to it and the bytes its convergence still owes are
  below ``budget`` of its size (``converging_stake``): a flow of gigabytes
  loses nothing it would notice when the skip credits it its share early;
  and a flow whose rate moved between the halves of its history since the
  last flow event other than by such an approach (it crossed its share, or
  moves away from it) is still moving: it may yet move as far again, and is
  credited only if that too is below ``budget`` of its size
  (``moving_stake``): a skip freezes it mid-course.

The rates credited during a skip are the max-min fair shares, scaled by the
goodput efficiency the window measured (headers, ACK clocking, marking).

A flow that delivered (almost) nothing in the window is *idle*: a TCP flow
stalled on its own timer (a retransmission timeout, a delayed ACK at cwnd 1).
It does not take a share; it is credited nothing and the controller keeps its
events in real time, ending the skip when it wakes.

Flows paced by a rate-based congestion control (RDMA's DCQCN, HPCC) carry
their state explicitly: the rate. ``judge_paced`` asks that this state be
settled instead of fair (DCQCN leaves flows at unequal rates for tens of
milliseconds, and crediting fair shares then biases every FCT), and credits
each flow the rate it delivered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from wormhole_ns3.core.vocabulary import Label


class Limit(Label):
    """Why a partition's window is not steady: what keeps it from being skipped."""

    #: Fewer samples than the window (or, for contending paced flows, the history) needs.
    WINDOW_NOT_FULL = "window not full"
    #: The partition delivered nothing over the window.
    NO_PROGRESS = "no progress in window"
    #: The aggregate delivery rate varied by theta or more.
    SPREAD = "aggregate spread"
    #: Every flow delivered (almost) nothing: they all wait on their own timers.
    ALL_IDLE = "every flow idle"
    #: A flow's rate is farther than ``fairness`` from its (max-min) fair share.
    UNFAIR = "unfair share"
    #: A paced flow sends more or less than it delivers: its queue fills or drains.
    FILLING_OR_DRAINING = "queue filling or draining"
    #: A window-based flow's window is not yet held by congestion signals: too few whole cycles since
    #: its last change, or none met while its window moves. Its samples may be a transient's.
    CYCLE_UNSEEN = "congestion cycles not yet repeating"
    #: A paced flow below its share without a congestion notification: it is recovering.
    RECOVERING = "recovering"
    #: A contending paced flow delivered differently in the two halves of its history.
    HALVES_DIFFER = "halves of history differ"
    #: Under same-seed fidelity: the window's packets drew random numbers, so a skip would
    #: leave out the draws its packets make and move ns-3's random streams.
    DRAWS = "random draws"
    #: A flow whose window grows with time (Cubic) holds a rate its bottleneck could raise.
    BELOW_CAPACITY = "window grows below capacity"


@dataclass(frozen=True)
class Verdict:
    """The outcome of judging one window of a partition.

    ``limit`` says why the partition is not steady (None if it is); ``detail``
    the numbers that decided it, as the skip trace prints them. ``reason``
    renders both: the detail if there is one, else the limit's own words.
    """

    limit: Limit | None
    detail: str = ""
    #: The flow the verdict is about (the worst, or the one that refused it), if any.
    flow: int | None = None
    #: Spread (max - min) / mean of the aggregate rate over the window.
    spread: float = float("nan")
    #: Largest |measured - credited| / credited over the flows.
    unfairness: float = float("nan")
    #: Measured mean rate of each flow over the window, bytes/s.
    measured: Mapping[int, float] = field(default_factory=dict)
    #: Rate to credit each flow while skipping, bytes/s.
    rates: Mapping[int, float] = field(default_factory=dict)
    #: Flows that delivered (almost) nothing in the window.
    idle: frozenset[int] = frozenset()
    #: How long the credited rates may be carried forward (s): no longer than
    #: they were seen to hold, when that is all that says they hold.
    horizon: float = float("inf")

    @property
    def steady(self) -> bool:
        return self.limit is None

    @property
    def reason(self) -> str:
        """The verdict in words, as the skip trace and reports print it."""
        if self.detail or self.limit is None:
            return self.detail
        return self.limit.value


def contends(paths: Mapping[int, frozenset[int]], capacity: Mapping[int, float]) -> bool:
    """Whether some flow's max-min fair share is below the narrowest link of its own path.

    The same answer as comparing ``max_min_fair`` with each path's narrowest
    link, in one pass over the paths instead of a progressive filling: every
    flow can have its narrowest link's rate at once exactly when no link
    carries more than its capacity that way, and a max-min allocation gives
    every flow that rate whenever all of them can have it. A flow with no
    known path contends with anything. The controller asks this at every flow
    event of every partition it touches.
    """
    load: dict[int, float] = {}
    for links in paths.values():
        if not links:
            return True
        narrowest = min(capacity[link] for link in links)
        for link in links:
            load[link] = load.get(link, 0.0) + narrowest
    return any(total > capacity[link] * (1 + 1e-9) for link, total in load.items())


def max_min_fair(
    paths: Mapping[int, frozenset[int]],
    capacity: Mapping[int, float],
    demand: Mapping[int, float | None] | None = None,
) -> dict[int, float]:
    """Max-min fair rates by progressive filling.

    ``paths`` maps flows to the links they load, ``capacity`` links to their
    rate, ``demand`` flows to a rate cap (None: unlimited). Every flow's rate
    grows at the same pace until a link saturates or its demand is met.
    """
    demand = demand or {}
    rate = {f: 0.0 for f in paths}
    frozen: set[int] = set()
    residual = dict(capacity)
    while len(frozen) < len(rate):
        growing = [f for f in rate if f not in frozen]
        users = {
            link: [f for f in growing if link in paths[f]] for link in residual
        }
        increments = [residual[link] / len(fs) for link, fs in users.items() if fs]
        increments += [cap - rate[f] for f in growing if (cap := demand.get(f)) is not None]
        if not increments:  # flows crossing no capacity-limited link
            for f in growing:
                rate[f] = float(demand.get(f) or float("inf"))
            break
        step = max(min(increments), 0.0)
        for f in growing:
            rate[f] += step
        for link, fs in users.items():
            residual[link] -= step * len(fs)
        for f in growing:
            saturated = any(
                residual[link] <= 1e-9 * capacity[link] for link in paths[f] if link in residual
            )
            cap = demand.get(f)
            met = cap is not None and rate[f] >= cap - 1e-12
            if saturated or met:
                frozen.add(f)
    return rate


def distance_by_halves(samples: np.ndarray, share: float, period: float) -> tuple[float, float, int] | None:
    """A flow's distance from ``share`` (bytes/s) over each half of its history, and a half's length.

    None for a history of one rate sample: it has no halves.
    """
    half = (len(samples) - 1) // 2
    if half == 0:
        return None
    counts = samples.astype(np.float64)
    span = half * period
    return (counts[half] - counts[0]) / span - share, (counts[-1] - counts[-1 - half]) / span - share, half


def converging_stake(samples: np.ndarray, share: float, period: float, floor: float) -> float:
    """Bytes a flow still owes its convergence to ``share``, as its samples measure it (inf: not converging).

    ``samples`` is the flow's history since its partition last changed (longer
    than a window: a window's halves see TCP's sawtooth more than its pace).
    The flow's distance from its share over the first and the second half of the
    history gives its pace. A history whose halves are both within ``floor`` of
    the share (a fraction of it: the noise the aggregate may have) has settled
    there and owes nothing; one that came from farther still moves, however
    near its second half came: its stake is its pace's, not the noise's (DCTCP
    overshoots a share it rises to). A distance that keeps its sign and shrinks
    decays, taken as exponential, with time constant tau = half the history /
    ln(first / second); what it owes is the second half's distance times tau,
    or times half the history if that is longer: DCTCP's shares close most of
    the gap in a few ms and the last 10-20% over tens. That holds only while
    the flow approaches its share from one side: once the last quarter of its
    history is at or past it, the approach is over and where the flow goes on
    to is not the model's to say. The measurements behind each clause are in
    doc/changelog.md. A history that does not show
    the distance shrinking gives no pace to trust: the flow may hold its rate
    (a longer RTT, a different path), and crediting its share would bias it for
    the whole skip.
    """
    halves = distance_by_halves(samples, share, period)
    if halves is None:
        return float("inf")  # one rate sample: no pace
    first, second, half = halves
    if max(abs(first), abs(second)) <= floor * share:
        return 0.0
    if first * second <= 0 or abs(second) >= abs(first):
        return float("inf")
    quarter = (len(samples) - 1) // 4
    counts = samples.astype(np.float64)
    if quarter and ((counts[-1] - counts[-1 - quarter]) / (quarter * period) - share) * first <= 0:
        return float("inf")  # its last quarter reached its share: the approach is over, where the model cannot say
    tau = ((len(samples) - 1 - half) * period) / np.log(abs(first) / abs(second))
    return float(abs(second) * max(tau, half * period))


def moving_stake(samples: np.ndarray, share: float, period: float, floor: float) -> float:
    """Bytes a flow whose rate still moves may yet owe its share, at most (inf: its rate holds).

    A flow whose rate moved between the halves of its history by more than
    ``floor`` of its share, other than by an approach ``converging_stake``
    can measure (it crossed its share, or moves away from it), is still
    moving, and a skip freezes it where it is while plain ns-3's goes on. It
    may move as far again over as long again: what it moved over half its
    history, for half its history. Flows of gigabytes owe that within the
    budget; flows of tens of MB that are still moving do not.
    """
    halves = distance_by_halves(samples, share, period)
    if halves is None:
        return float("inf")
    first, second, half = halves
    moved = abs(second - first)
    if moved <= floor * share:
        return float("inf")
    return float(moved * half * period)


def _owed_on_credit(
    samples: Mapping[int, np.ndarray],
    distance: Mapping[int, float],
    share: Mapping[int, float],
    period: float,
    fairness: float,
    noise: float,
    sizes: Mapping[int, int],
    budget: float,
) -> tuple[str, int | None]:
    """Whether every flow may be credited its share, judged on its history since the last flow event.

    ``distance`` is each flow's distance from its ``share`` over the window. A
    flow converging to its share (``converging_stake``) may if it owes that
    convergence less than ``budget`` of its size, wherever the window saw it: a
    flow settling slowly within ``fairness`` of its share is as biased by a
    long skip as one far from it. Any other flow may if the window saw it
    within ``fairness``, or its whole history held its share within it (the
    window saw its wander); and, if its rate moved between the halves of its
    history by more than ``noise`` of its share (``moving_stake``: it crossed
    its share, or moves away from it), only if what it may yet move owes less
    than ``budget`` of its size: its window is a snapshot of a course a skip
    would freeze. Returns the trace's words and the first flow that may not
    (None: all may).
    """
    owed: dict[int, float] = {}
    course: dict[int, str] = {}
    for f in sorted(distance):
        stake, course[f] = converging_stake(samples[f], share[f], period, noise), "converging"
        if stake == float("inf") or stake == 0.0:
            history = samples[f].astype(np.float64)
            held = (history[-1] - history[0]) / ((len(history) - 1) * period)
            if distance[f] > fairness and abs(held - share[f]) > fairness * share[f]:
                return "not converging to it", f
            if stake == 0.0:
                continue
            stake, course[f] = moving_stake(samples[f], share[f], period, noise), "still moving"
            if stake == float("inf"):
                continue  # it holds its rate
        owed[f] = stake / sizes[f] if sizes.get(f) else float("inf")
        if owed[f] > budget:
            return f"{course[f]}, {owed[f]:.2%} of its bytes owed > {budget:.2%}", f
    if not owed:
        return "", None
    most = max(owed, key=lambda f: (owed[f], f))
    return f"{course[most]}, flow {most} owing {owed[most]:.2%} of its bytes", None


def window_rates(samples: np.ndarray, period: float) -> np.ndarray:
    """Rates (bytes/s) between consecutive delivered-bytes samples."""
    return np.diff(samples.astype(np.float64)) / period


def _shortened(
    samples: Mapping[int, np.ndarray], window: int, theta: float, min_window: int | None
) -> tuple[int, float, bool]:
    """The window and spread bound to judge on, and whether that window is short.

    Sampled k times since its last change, with ``min_window`` <= k < ``window``,
    a partition is judged on those k samples with theta scaled to theta * k /
    window: a short window may say rates hold only when they plainly do.
    """
    sampled = min(len(s) for s in samples.values()) - 1
    if min_window is not None and min_window <= sampled < window:
        return sampled, theta * sampled / window, True
    return window, theta, False


def _aggregate_window(
    samples: Mapping[int, np.ndarray], period: float, window: int, theta: float
) -> tuple[Verdict | None, float, dict[int, float]]:
    """The window's aggregate spread and each flow's mean rate, with the verdict if these refuse it.

    What every partition must pass: a full window, progress, and an aggregate
    delivery rate that varies by less than theta.
    """
    if any(len(s) < window + 1 for s in samples.values()):
        return Verdict(Limit.WINDOW_NOT_FULL), float("nan"), {}
    rates = {f: window_rates(s[-(window + 1) :], period) for f, s in samples.items()}
    aggregate = np.sum(list(rates.values()), axis=0)
    mean = float(aggregate.mean())
    if mean <= 0:
        return Verdict(Limit.NO_PROGRESS), float("nan"), {}
    spread = float((aggregate.max() - aggregate.min()) / mean)
    measured = {f: float(r.mean()) for f, r in rates.items()}
    if spread >= theta:
        refused = Verdict(Limit.SPREAD, f"aggregate spread {spread:.1%} >= {theta:.1%}", spread=spread,
                          measured=measured)
        return refused, spread, measured
    return None, spread, measured


def _in_flight_growth(
    samples: Mapping[int, np.ndarray], sent: Mapping[int, np.ndarray], window: int
) -> tuple[int, float] | None:
    """The flow whose bytes in flight moved most over the window, as a share of what it delivered.

    In flight is sent less delivered; its mean over the window's second half
    less its mean over the first smooths TCP's sawtooth (a flow of 16 sharing
    a DCTCP queue swings between 0 and 25 KB in flight from one sample to the
    next) and keeps a trend: slow start into a queue that marks nothing grows
    it by the window's whole delivery. Flows whose sender cannot tell (no
    sent bytes) are left out; None if none can.
    """
    growth = {}
    for f, counts in sent.items():
        if counts[-1] == 0:
            continue
        in_flight = counts[-(window + 1):].astype(np.float64) - samples[f][-(window + 1):].astype(np.float64)
        delivered = float(samples[f][-1] - samples[f][-(window + 1)])
        half = (window + 1) // 2
        moved = float(in_flight[-half:].mean() - in_flight[:half].mean())
        growth[f] = moved / delivered if delivered > 0 else (float("inf") if moved else 0.0)
    if not growth:
        return None
    worst = max(growth, key=lambda f: (abs(growth[f]), f))
    return worst, growth[worst]


#: The share of their links' capacity the flows limited by them must deliver for a flow whose window grows
#: with time (Cubic) to be judged steady. Delivered bytes are payload: ns-3's default 536-byte segments
#: carry 0.91 of the wire's bytes (TCP/IP with timestamps and PPP take 54), so a full bottleneck shows
#: 0.9 and more (ns3-tcp-cubic's capacity-increase case, window-limited at 13%, is far below).
FULL_BOTTLENECK = 0.8


def _whole_cycles(signals: np.ndarray, windows: np.ndarray) -> int:
    """Whole congestion cycles in a flow's samples: a signal, its congestion window rising, a signal again.

    Each sampling period counts for one step at most (a period that holds a
    signal and a rise shows no order between them).
    """
    signalled = np.diff(signals.astype(np.int64)) > 0
    rose = np.diff(windows.astype(np.int64)) > 0
    cycles, waiting = 0, "signal"
    for signal, rise in zip(signalled, rose):
        if waiting == "signal" and signal:
            waiting = "rise"
        elif waiting == "rise" and rise:
            waiting = "signal again"
        elif waiting == "signal again" and signal:
            cycles += 1
            waiting = "rise"
    return cycles


def _cycle_unseen(
    windows: Mapping[int, np.ndarray], signals: Mapping[int, np.ndarray], window: int, cycles_needed: int
) -> tuple[int, str] | None:
    """A flow whose congestion state is not shown stationary, and the trace's words for it (None: none).

    A window-based sender's congestion window is held by the network's
    signals (an ECN echo, a loss): cut at a signal, it grows until the next,
    a cycle, and DCTCP's estimate of the marks moves with it. A flow that met
    signals since the partition's last change is taken as stationary once
    that history holds ``cycles_needed`` whole cycles
    (``AcceleratorConfig.congestion_cycles``); one that met none, only while
    its congestion window holds (held by its receiver's window, ns-3 grows it
    without bound). Before, its samples show a phase of a cycle or of a
    transient (the cuts that end slow start; a window growing toward a mark or
    an overflow, or under the receiver's window), which a skip freezes for its
    whole length and which the window's rates do not tell (doc/changelog.md,
    "Congestion cycles before a TCP skip", "A window nothing holds"). Flows
    without a window (missing from ``windows`` or ``signals``) are left out.
    """
    for f in sorted(windows):
        if f not in signals:
            continue
        cwnd = windows[f].astype(np.int64)
        if int(signals[f][-1]) == int(signals[f][0]):
            moved = int(cwnd[-1]) - int(cwnd[-(window + 1)])
            if moved:
                return f, (f"flow {f} met no congestion signal since its last change and its congestion window "
                           f"{'grew' if moved > 0 else 'shrank'} by {abs(moved)} B over the window: nothing "
                           f"holds it yet")
            continue
        cycles = _whole_cycles(signals[f], cwnd)
        if cycles < cycles_needed:
            return f, (f"flow {f}'s history holds {cycles} whole congestion cycle(s) (a signal, its window "
                       f"rising, a signal again) since its last change, not {cycles_needed}: it may still be a "
                       f"transient's")
    return None


def judge(
    samples: Mapping[int, np.ndarray],
    period: float,
    window: int,
    theta: float,
    fairness: float,
    paths: Mapping[int, frozenset[int]],
    capacity: Mapping[int, float],
    demand: Mapping[int, float | None] | None = None,
    idle_share: float = 0.0,
    sizes: Mapping[int, int] | None = None,
    budget: float = 0.0,
    min_window: int | None = None,
    sent: Mapping[int, np.ndarray] | None = None,
    time_grown: frozenset[int] = frozenset(),
    windows: Mapping[int, np.ndarray] | None = None,
    signals: Mapping[int, np.ndarray] | None = None,
    cycles: int = 0,
) -> Verdict:
    """Judge the last ``window`` sampling periods of a partition.

    ``samples`` maps each flow to its delivered-bytes counter sampled every
    ``period`` seconds (oldest first, all taken at the same instants).
    With ``min_window``, a partition sampled fewer than ``window`` times since
    its last change is judged on what it has, from ``min_window`` samples on,
    and a window of k samples must show a spread below theta * k / window: a
    short window may say rates hold only when they plainly do (a DCTCP
    bottleneck's aggregate varies by 0.4%), and waits for the full window
    when they vary more. ``sent`` counts the bytes each sender put on the
    network at the same instants (a flow that cannot tell counts 0): no
    flow's bytes in flight may grow or shrink by theta of what it delivered
    over the window, or its queue fills or drains (TCP's slow start into a
    queue that marks nothing delivers a steady rate while its window doubles).
    ``windows`` holds each window-based sender's congestion window and
    ``signals`` the congestion signals it had reacted to, at the same
    instants, over the same history as ``samples`` (flows without a window are
    missing): with ``cycles`` > 0, a flow that met signals since its last
    change must have cycled that many times since, and one that met none must
    have held its window over the window (``_cycle_unseen``).
    ``sizes`` maps flows to their bytes (0 or missing: unknown, never owed
    anything on credit); ``budget`` is the share of its size a flow beyond
    ``fairness`` may still owe its convergence when it is credited its share.
    ``time_grown`` are the flows whose window grows with the time since their
    last reduction (Cubic): a steady rate of theirs is a plateau only where
    their bottleneck is full (``FULL_BOTTLENECK``); below it, their window
    climbs away from the plateau whatever the window measured.
    """
    noise = theta
    window, theta, _ = _shortened(samples, window, theta, min_window)
    refused, spread, measured = _aggregate_window(samples, period, window, theta)
    if refused is not None:
        return refused
    filling = _in_flight_growth(samples, sent or {}, window)
    if filling is not None and abs(filling[1]) >= noise:
        f, growth = filling
        return Verdict(Limit.FILLING_OR_DRAINING,
                       f"flow {f}'s bytes in flight {'grew' if growth > 0 else 'shrank'} by {abs(growth):.1%} "
                       f"of what it delivered over the window (>= {noise:.0%}): its queue is "
                       f"{'filling' if growth > 0 else 'draining'}", f, spread=spread, measured=measured)
    unseen = _cycle_unseen(windows or {}, signals or {}, window, cycles) if cycles else None
    if unseen is not None:
        return Verdict(Limit.CYCLE_UNSEEN, unseen[1], unseen[0], spread=spread, measured=measured)

    demand = dict(demand or {})
    fair = max_min_fair(paths, capacity, demand)
    idle = frozenset(f for f in fair if measured[f] < idle_share * fair[f])
    if idle == frozenset(fair):
        return Verdict(Limit.ALL_IDLE, spread=spread, measured=measured)
    if idle:
        demand.update({f: measured[f] for f in idle})
        fair = max_min_fair(paths, capacity, demand)
    limited = {
        f for f in fair if f not in idle and ((cap := demand.get(f)) is None or fair[f] < cap - 1e-9)
    }
    nominal = sum(fair[f] for f in limited)
    efficiency = sum(measured[f] for f in limited) / nominal if nominal > 0 else 1.0
    growing = sorted(f for f in limited if f in time_grown)
    if growing and efficiency < FULL_BOTTLENECK:
        return Verdict(Limit.BELOW_CAPACITY,
                       f"flow {growing[0]}'s window grows with time and its bottleneck carries {efficiency:.0%} "
                       f"of its capacity (< {FULL_BOTTLENECK:.0%}): its rate will rise", growing[0],
                       spread=spread, measured=measured)
    credited = {f: (fair[f] * efficiency if f in limited else measured[f]) for f in fair}
    active = [f for f in credited if f not in idle]
    distance = {
        f: abs(measured[f] - credited[f]) / credited[f] if credited[f] > 0 else float("inf") for f in active
    }
    unfairness = max(distance.values())
    worst = max(active, key=lambda f: distance[f])
    refused = Verdict(
        Limit.UNFAIR,
        f"flow {worst} at {unfairness:.1%} from its fair share (> {fairness:.0%})",
        worst,
        spread=spread,
        unfairness=unfairness,
        measured=measured,
    )
    if budget <= 0:
        if unfairness > fairness:
            return refused
        note = ""
    else:
        note, refusing = _owed_on_credit(samples, distance, credited, period, fairness, noise, sizes or {}, budget)
        if refusing is not None:
            return replace(refused, flow=refusing, detail=(
                f"flow {refusing} at {distance[refusing]:.1%} from its fair share over the window "
                f"(fairness {fairness:.0%}), {note}"))
    converging_note = f" ({note})" if note else ""
    idle_note = f", idle {' '.join(map(str, sorted(idle)))}" if idle else ""
    return Verdict(
        None,
        f"aggregate spread {spread:.1%} < {theta:.1%} over {window} samples, shares within "
        f"{unfairness:.1%} of fair" + converging_note + idle_note,
        spread=spread,
        unfairness=unfairness,
        measured=measured,
        rates=credited,
        idle=idle,
    )


#: Windows of sample history over which contending paced flows must hold their rates
#: (and as far as those rates are carried). Shorter histories skipped 2:1 HPCC incasts
#: with 1.5% (16 windows) to 3% (4 windows) mean FCT error: their shares drift over
#: milliseconds, and a skip stops the drift; with 32 (5.8 ms at a 2-hop 100 Gb/s RTT)
#: it was 0.7%.
PACED_HISTORY_WINDOWS = 32


def judge_paced(
    samples: Mapping[int, np.ndarray],
    sent: Mapping[int, np.ndarray],
    sending: Mapping[int, np.ndarray],
    notifications: Mapping[int, np.ndarray],
    period: float,
    window: int,
    theta: float,
    fairness: float,
    paths: Mapping[int, frozenset[int]],
    capacity: Mapping[int, float],
    history: int = PACED_HISTORY_WINDOWS,
    min_window: int | None = None,
) -> Verdict:
    """Judge the last ``window`` sampling periods of a partition of paced flows.

    ``samples`` are delivered-bytes counters as for ``judge``; at the same
    instants, ``sent`` counts the bytes each sender put on the network,
    ``sending`` is the rate (bytes/s on the wire) it was paced at and
    ``notifications`` its count of congestion notifications (CNPs). Steady when

    * the aggregate delivery rate varies by less than theta, as for any partition;
    * every flow sends what it delivers (within theta over the window): no
      queue of its own fills or drains, as at DCQCN's start, when flows send
      at line rate into a queue that delivers them a share, then drain it;
    * every flow paced below ``1 - fairness`` of its max-min fair rate got a
      congestion notification in the window: one that got none is recovering
      towards line rate (DCQCN's increase after a departure), not holding a rate;
    * if flows contend (a max-min share below the narrowest link of its path),
      every flow delivered at the same rate (within theta) in both halves of
      its sample history, which must span ``history`` windows: DCQCN's
      contending flows cut and recover in cycles of milliseconds, each cycle
      splitting the link anew, and HPCC's shares converge additively, so a
      window sees a phase, not a rate; and every flow within ``fairness`` of
      its max-min share (scaled by the measured efficiency), as for TCP. A flow
      alone on its narrowest link holds its rate until another comes.

    Each flow is credited the rate it delivered over the window, or over the
    history when flows contend; then no further than that history spans (the
    verdict's horizon): the next cycle may split the link otherwise.

    With ``min_window``, flows each alone on their links, sampled fewer than
    ``window`` times, are judged on what they have from ``min_window``
    samples on (the spread held below theta * k / window, as ``judge`` does),
    but only if every one was paced at line rate with no congestion
    notification over all of it: such a flow's congestion state is the one it
    keeps until another flow comes, so a skip that freezes it, or one cut
    short by that flow, leaves it as a plain run has it. Any other short
    window is WINDOW_NOT_FULL: the flows wait for a whole one.
    """
    fair = max_min_fair(paths, capacity)
    narrowest = {f: min(capacity[link] for link in paths[f]) for f in samples}
    alone = all(fair[f] >= narrowest[f] * (1 - 1e-9) for f in samples)
    noise = theta
    window, theta, short = _shortened(samples, window, theta, min_window if alone else None)
    refused, spread, measured = _aggregate_window(samples, period, window, theta)
    if refused is not None:
        return refused
    if short:
        for f in sorted(samples):
            pace = float(np.mean(sending[f][-window:]))
            if int(notifications[f][-1]) != int(notifications[f][0]) or pace < (1 - noise) * narrowest[f]:
                return Verdict(Limit.WINDOW_NOT_FULL,
                               f"flow {f} paced at {pace / narrowest[f]:.0%} of its link with "
                               f"{int(notifications[f][-1] - notifications[f][0])} congestion notification(s) "
                               f"over {window} samples: short windows are for flows at line rate only",
                               f, spread=spread, measured=measured)
    sent_rate = {f: float(sent[f][-1] - sent[f][-(window + 1)]) / (window * period) for f in samples}
    drift = {f: abs(sent_rate[f] - measured[f]) / measured[f] if measured[f] > 0 else float("inf")
             for f in samples}
    worst = max(drift, key=lambda f: (drift[f], f))
    if drift[worst] >= theta:
        return Verdict(Limit.FILLING_OR_DRAINING,
                       f"flow {worst} sent {drift[worst]:.1%} more or less than it delivered "
                       f"(>= {theta:.0%}): its queue is filling or draining", worst,
                       spread=spread, measured=measured)
    paced = {f: float(np.mean(sending[f][-window:])) for f in samples}
    for f in sorted(samples):
        quiet = int(notifications[f][-1]) == int(notifications[f][-(window + 1)])
        if quiet and paced[f] < (1 - fairness) * fair[f]:
            return Verdict(Limit.RECOVERING,
                           f"flow {f} recovering: paced at {paced[f] / fair[f]:.0%} of its "
                           f"max-min rate with no congestion notification in the window", f,
                           spread=spread, measured=measured)
    if alone:
        at_line_rate = f", at line rate over {window} samples" if short else ""
        return Verdict(None, f"aggregate spread {spread:.1%} < {theta:.1%}, sent within "
                             f"{drift[worst]:.1%} of delivered, no flow contending{at_line_rate}",
                       spread=spread, measured=measured, rates=dict(measured))
    if any(len(s) < history * window + 1 for s in samples.values()):
        return Verdict(Limit.WINDOW_NOT_FULL)
    held = {}
    for f, s in samples.items():
        counts = s.astype(np.float64)
        half = (len(counts) - 1) // 2
        first, second = counts[half] - counts[0], counts[-1] - counts[-1 - half]
        held[f] = abs(second - first) / max(first, second, 1.0)
    unsettled = max(held, key=lambda f: (held[f], f))
    if held[unsettled] >= theta:
        return Verdict(Limit.HALVES_DIFFER,
                       f"flow {unsettled} shifted {held[unsettled]:.1%} between the halves of "
                       f"its history (>= {theta:.0%})", unsettled, spread=spread, measured=measured)
    span = {f: (len(s) - 1) * period for f, s in samples.items()}
    credited = {f: float(s[-1] - s[0]) / span[f] for f, s in samples.items()}
    efficiency = sum(credited.values()) / sum(fair.values())
    unfair = {f: abs(credited[f] - fair[f] * efficiency) / (fair[f] * efficiency) for f in samples}
    farthest = max(unfair, key=lambda f: (unfair[f], f))
    if unfair[farthest] > fairness:
        return Verdict(Limit.UNFAIR, f"flow {farthest} at {unfair[farthest]:.1%} from its fair share "
                                     f"(> {fairness:.0%}) while contending", farthest,
                       spread=spread, measured=measured)
    return Verdict(
        None,
        f"aggregate spread {spread:.1%} < {theta:.0%}, sent within {drift[worst]:.1%} of delivered, "
        f"rates held within {held[unsettled]:.1%} over {span[unsettled] * 1e3:.2f} ms",
        spread=spread,
        measured=measured,
        rates=credited,
        horizon=min(span.values()),
    )
