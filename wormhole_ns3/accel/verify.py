"""The error guard (``--verify F``): re-simulate a random fraction of the shortcuts, packet by packet.

A skip credits a partition's flows the bytes their steady rates promise; a
memo replay lets recorded completions stand in for an episode's packets, a
mirror the completions of a twin being recorded, an absorbed opening the
completions a recording that met it has for it, and a diverged replay
resumes its flows from a recorded trajectory. All are estimates. The guard
checks a fraction F of them against the real thing: just before a selected
decision is applied, the run forks. The child
does not apply the decision (nor any later one): it simulates packet by
packet up to the decision's end, sends what it measured over a pipe and
exits without a trace. The parent applies the decision as usual and, at the
same simulated time, compares. The child writes nothing the user sees: every
file descriptor it inherited but the pipe is pointed at /dev/null before it
runs on (pcap and ASCII traces, stdout, the memo store's files), and its memo
starts every flow for real and never reads or writes the store.

The parent's own run is untouched: the selection draws from a generator of
its own (seeded by ns-3's seed and run number, so a run stays deterministic),
and the comparison runs in housekeeping events, which move nothing.

Errors, per kind of decision:

* a skip: each flow's delivered bytes at the skip's end, credited (parent)
  against simulated (child). Its FCT-equivalent is |bytes off| / flow size: a
  flow ahead by that many bytes completes earlier by their time at its rate,
  which is that fraction of its FCT when it runs at that rate throughout.
  An unlimited flow has no FCT: its error is relative to the bytes it moved.
  A flow the child finished before the skip's end has no bytes left to be
  off by, however early it finished: the parent, whose skip leaves every
  flow its tail, will finish it after the skip's end, so its error is at
  least the time from the child's finish to that end over the child's FCT
  (``late_error``).
* a memo decision (a batch of flows starting at one instant): each flow the
  memo held, once it ended in the parent (completed as recorded, as its twin
  did, as the recording that absorbed its opening had it, or for real after
  its replay diverged and it resumed), against the FCT the child simulated,
  relative to the simulated FCT; the batch's flows are checked per kind, by
  how each ended.

When a kind's largest error exceeds the bound, the run stops making that kind
of decision (a resume is what any replay may end in: past its bound, no
replay of any kind is made); it says so on stderr and in the skip trace.
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import json
import os
import random
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field

from wormhole_ns3.accel.fastforward import SkipPlan
from wormhole_ns3.accel.network import Network
from wormhole_ns3.core.ports import Callback
from wormhole_ns3.core.shortcuts import MEMO_KINDS, GuardKind
from wormhole_ns3.core.trace import SkipRecord, TraceKind
from wormhole_ns3.memo.driver import MemoDriver
from wormhole_ns3.runtime.boundary import read_outcome

#: The error a kind of decision may make before the guard stops it: 1% of an FCT.
DEFAULT_BOUND = 0.01
#: prctl(2): the signal a child gets when its parent dies (<linux/prctl.h>).
_PR_SET_PDEATHSIG = 1


def skip_error(before: Mapping[int, int], ours: Mapping[int, int], real: Mapping[int, int],
               sizes: Mapping[int, int]) -> tuple[float, float]:
    """(progress error, FCT-equivalent error) of one skip.

    ``before``: bytes delivered at the skip's start; ``ours``/``real``: at its
    end, credited and simulated; ``sizes``: flow sizes (0 = unlimited). The
    progress error is the bytes off over the bytes moved, across the flows;
    the FCT-equivalent is the largest flow's |bytes off| / size (for an
    unlimited flow, over the bytes it moved).
    """
    moved = sum(real[f] - before[f] for f in real)
    off = {f: abs(ours[f] - real[f]) for f in real}
    progress = sum(off.values()) / moved if moved > 0 else 0.0
    fct = 0.0
    for f in sorted(real):
        scale = sizes[f] if sizes[f] else real[f] - before[f]
        if scale > 0:
            fct = max(fct, off[f] / scale)
        elif off[f]:
            fct = max(fct, float("inf"))
    return progress, fct


def late_error(elapsed: Mapping[int, float], ended: Mapping[int, float]) -> float:
    """The FCT error at least of flows the child finished within a skip that leaves them running here.

    ``ended``: each such flow's FCT in the child, s; ``elapsed``: its time since
    its start at the skip's end, which its FCT here exceeds: a lower bound of
    the error that bytes alone cannot see, since such a flow has none left.
    """
    return max(((elapsed[f] - fct) / fct if fct > 0 else float("inf") for f, fct in ended.items()), default=0.0)


def replay_error(ours: Mapping[int, float | None], real: Mapping[int, float | None]) -> float:
    """The largest relative FCT error of held flows (as the memo had them end vs simulated); inf if one never ended."""
    worst = 0.0
    for f in sorted(ours):
        fct, mine = real.get(f), ours[f]
        if fct is None or fct <= 0 or mine is None:
            return float("inf")
        worst = max(worst, abs(mine - fct) / fct)
    return worst


@dataclass
class KindRecord:
    """What the guard measured for one kind of decision."""

    checked: int = 0
    errors: list[float] = field(default_factory=list)
    #: Why the run stopped making this kind of decision, if it did.
    stopped: str | None = None

    @property
    def estimate(self) -> float | None:
        """The guard's error estimate for the kind: the largest it measured (None: none checked)."""
        return max(self.errors) if self.errors else None

    def as_dict(self, bound: float) -> dict:
        errors = self.errors
        return {
            "checked": self.checked,
            "bound": bound,
            "error_max": max(errors) if errors else None,
            "error_mean": sum(errors) / len(errors) if errors else None,
            "stopped": self.stopped,
        }


class Guard:
    """Which decisions to check, what the checks found, and which kinds may still be made."""

    def __init__(self, fraction: float, seed: int, run: int, bound: float = DEFAULT_BOUND) -> None:
        self.fraction = fraction
        self.bound = bound
        self._rng = random.Random(f"wormhole-ns3 verify {seed} {run}")
        self.kinds = {kind: KindRecord() for kind in GuardKind}
        #: One row per check: its kind, time, flows and errors (run.json's "verify" "checks").
        self.checks: list[dict] = []

    def allows(self, kind: GuardKind) -> bool:
        """True while decisions of this kind may be made (its errors stayed within the bound)."""
        return self.kinds[kind].stopped is None

    def selects(self, *kinds: GuardKind) -> bool:
        """Whether to check a decision of one of these kinds: a draw with probability ``fraction``
        (none once they are all stopped)."""
        if self.fraction <= 0 or not any(map(self.allows, kinds)):
            return False
        return self._rng.random() < self.fraction

    def record(self, kind: GuardKind, time: float, flows: tuple[int, ...], error: float,
               **detail: float | None) -> str | None:
        """Count one check; the message saying the kind is stopped, if this check stops it."""
        rec = self.kinds[kind]
        rec.checked += 1
        rec.errors.append(error)
        self.checks.append({"kind": kind.value, "time": time, "flows": list(flows), "error": error, **detail})
        if rec.stopped is None and error > self.bound:
            rec.stopped = (
                f"a {kind.value} at t={time:.9f} s of flows {' '.join(map(str, flows))} was off by "
                f"{error:.3%} of FCT against a packet-level re-simulation (bound {self.bound:.3%}): "
                f"no more {kind.value}s in this run"
            )
            return rec.stopped
        return None

    def results(self) -> dict:
        """run.json's "verify": the fraction, each kind's checks and estimate, every check."""
        return {
            "fraction": self.fraction,
            **{kind.value: rec.as_dict(self.bound) for kind, rec in self.kinds.items()},
            "checks": self.checks,
        }


class Fork:
    """One forked check: in the parent, the child's pid and the pipe's read end; in the child, its write end."""

    def __init__(self) -> None:
        read, write = os.pipe()
        pid = os.fork()
        self.in_child = pid == 0
        self.pid = pid
        if self.in_child:
            os.close(read)
            self._fd = write
            _silence_all_but(write)
            _die_with_parent()
        else:
            os.close(write)
            self._fd = read

    def send_and_exit(self, measured: dict) -> None:
        """Child: hand the measurement to the parent and end, running no exit handler, flushing nothing."""
        data = json.dumps(measured).encode()
        while data:
            data = data[os.write(self._fd, data):]
        os._exit(0)

    def receive(self) -> dict | None:
        """Parent: the child's measurement (None if it died without one); reaps the child."""
        chunks = []
        while chunk := os.read(self._fd, 1 << 16):
            chunks.append(chunk)
        os.close(self._fd)
        os.waitpid(self.pid, 0)
        return json.loads(b"".join(chunks)) if chunks else None

    def abandon(self) -> None:
        """Parent: the run ended before the check's end; kill and reap the child."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(self._fd)
        os.waitpid(self.pid, 0)


def _silence_all_but(keep: int) -> None:
    """Point every open file descriptor but ``keep`` at /dev/null: whatever the child writes goes nowhere."""
    null = os.open(os.devnull, os.O_RDWR)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd not in (keep, null):
            try:
                os.dup2(null, fd)
            except OSError:
                pass  # the descriptor listdir itself held, closed since
    os.close(null)


def _die_with_parent() -> None:
    """A child checking a decision ends with the run that forked it (Linux; elsewhere it ends on its own)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


@dataclass
class PendingCheck:
    """A decision being checked in a forked child: a skip, or the memo's on a batch of starts."""

    time: float  #: when the decision was made, s
    flows: tuple[int, ...]
    fork: Fork
    #: A skip's: each flow's delivered bytes when the skip started (None: a memo batch's check).
    before: dict[int, int] | None = None
    #: A memo batch's: the flows the memo held (each checked, by how it ended, once it ended).
    held: tuple[int, ...] = ()
    #: What a check of bytes at an end is of: a skip, or a restored transient.
    kind: GuardKind = GuardKind.SKIP

    @property
    def is_skip(self) -> bool:
        return self.before is not None


@dataclass
class Verifier:
    """The guard's checks in one simulation: forked before a decision, compared at its end.

    In the parent it keeps the checks not yet compared (a skip's until its end, a
    memo batch's until every flow the memo held ended) and records what they
    measured in the ``guard``. In a child forked to check a decision it is the
    one that measures (``verifying``): the run then decides nothing itself.
    """

    network: Network
    #: The run's error guard (``--verify``), made when the first Run() starts (it needs ns-3's
    #: seed), or handed over from the simulation before (``run.session``).
    guard: Guard | None = None
    #: The memo driver, if the run memoizes: its batches are checked too.
    memo: MemoDriver | None = None
    #: The callback the simulator calls at a skip check's end (``Controller.on_check_end``).
    on_check_end: Callback = None
    #: In a child forked to check a decision: the check it measures (it decides nothing itself).
    verifying: PendingCheck | None = None
    #: Guard rows of the skip trace (a kind of decision stopped).
    records: list[SkipRecord] = field(default_factory=list)
    #: Skip checks forked and not yet compared, by when they end: (end ns, order, check).
    _checks: list[tuple[int, int, PendingCheck]] = field(default_factory=list)
    _check_order: itertools.count = field(default_factory=itertools.count)
    #: memo batch checks, compared once the flows the memo held in them have all ended
    _memo_checks: list[PendingCheck] = field(default_factory=list)

    def allows_skips(self) -> bool:
        """Whether this process may skip: not a child checking a decision, nor past the skips' bound."""
        return self.verifying is None and (self.guard is None or self.guard.allows(GuardKind.SKIP))

    def selects_skip(self) -> bool:
        return self.guard is not None and self.guard.selects(GuardKind.SKIP)

    def allows(self, kind: GuardKind) -> bool:
        """Whether this process may make a decision of this kind: not a child checking one, nor past its bound."""
        return self.verifying is None and (self.guard is None or self.guard.allows(kind))

    def selects(self, kind: GuardKind) -> bool:
        """Whether to check this decision (of a kind checked by bytes at its end: a skip, a transient)."""
        return self.guard is not None and self.guard.selects(kind)

    def fork_skip(self, flows: tuple[int, ...], plan: SkipPlan, kind: GuardKind = GuardKind.SKIP) -> bool:
        """Fork to check a skip (or a transient restore) about to be made; True in the child, which must not make it."""
        network = self.network
        before = {f: int(network.tracker.GetDelivered(f)) for f in flows}
        dt_ns = int(plan.duration * 1e9)  # as SkipEngine moves the partition
        check = PendingCheck(plan.start, flows, Fork(), before=before, kind=kind)
        if check.fork.in_child:
            self._become_child(check)
        else:
            end = int(network.ns3.Simulator.Now().GetTimeStep()) + max(1, dt_ns)
            heapq.heappush(self._checks, (end, next(self._check_order), check))
        network.simulator.ScheduleHousekeepingCallback(network.ns3.NanoSeconds(max(1, dt_ns)), self.on_check_end)
        return self.verifying is not None

    def replay_guard(self) -> tuple[frozenset[GuardKind], bool]:
        """(the memo shortcuts still allowed, should this batch of starts be checked): see MemoRun.replay_guard."""
        if self.guard is None:
            return frozenset(MEMO_KINDS), False
        allowed = frozenset(k for k in MEMO_KINDS if self.guard.allows(k))
        if GuardKind.RESUME not in allowed:
            allowed = frozenset()  # every replay may end in a resume
        return allowed, bool(allowed) and self.guard.selects(*allowed)

    def fork_replay_check(self, flows: tuple[int, ...]) -> PendingCheck | None:
        """Fork to check the memo's decisions on flows starting now; the parent's check (None in the child)."""
        check = PendingCheck(self.network.now(), flows, Fork())
        if check.fork.in_child:
            self._become_child(check)
            return None
        return check

    def replay_check_decided(self, check: PendingCheck, held: tuple[int, ...]) -> None:
        """The memo held these flows of a checked batch: compare each once it has ended here."""
        if not held:
            check.fork.abandon()  # every flow started for real: nothing to check
            return
        check.held = held
        self._memo_checks.append(check)
        self._compare_ended_memo_checks()

    def _compare_ended_memo_checks(self) -> None:
        """Compare the memo checks whose held flows have all ended (completed, or resumed and finished)."""
        ended = [c for c in self._memo_checks if set(c.held) <= self.network.finished]
        for check in ended:
            self._memo_checks.remove(check)
            self._compare(check)

    def _become_child(self, check: PendingCheck) -> None:
        """This process checks a decision: it makes none, and the memo starts every flow for real."""
        self.verifying = check
        self._checks.clear()  # the parent's checks are the parent's to compare
        self._memo_checks.clear()
        if self.memo is not None:
            self.memo.inert = True

    def check_ended(self) -> None:
        """A skip check's end time: the child reports, the parent compares (checks end in the order forked)."""
        if self.verifying is not None:
            if self.verifying.is_skip:
                self._send_measurement(self.verifying)
            return
        now_ns = int(self.network.ns3.Simulator.Now().GetTimeStep())
        if self._checks and self._checks[0][0] <= now_ns:
            self._compare(heapq.heappop(self._checks)[2])

    def run_ended(self) -> None:
        """Run() returned: a child sends what it got by now; the parent's checks not compared are dropped."""
        if self.verifying is not None:
            self._send_measurement(self.verifying)  # the run ended before the check's end: what it got
        for check in [c for _, _, c in self._checks] + self._memo_checks:
            check.fork.abandon()
        self._checks.clear()
        self._memo_checks.clear()

    def _send_measurement(self, check: PendingCheck) -> None:
        """Child: what the packet-level run gave for the decision's flows; then end this process."""
        assert check.fork.in_child
        tracker = self.network.tracker
        if check.is_skip:
            outcomes = {f: read_outcome(tracker, f) for f in check.flows}
            check.fork.send_and_exit({
                "delivered": {str(f): int(tracker.GetDelivered(f)) for f in check.flows},
                "ended": {str(f): o.fct for f, o in outcomes.items() if o.fct is not None},
            })
        finishes = {}
        for f in check.flows:
            outcome = read_outcome(tracker, f)
            finishes[str(f)] = outcome.fct
        check.fork.send_and_exit(finishes)

    def flow_finished(self) -> None:
        """A flow ended. Child checking a memo batch: report once its sized flows all finished for real.
        Parent: compare the memo checks whose held flows have all ended."""
        check = self.verifying
        if check is None:
            self._compare_ended_memo_checks()
            return
        if check.is_skip:
            return
        # an unlimited flow of the batch never finishes (and the memo never replays one)
        sized = {f for f in check.flows if int(self.network.tracker.GetSize(f))}
        if sized <= self.network.finished:
            self._send_measurement(check)

    def _compare(self, check: PendingCheck) -> None:
        """Parent: the decision's outcome against the child's packet-level measurement."""
        assert self.guard is not None
        measured = check.fork.receive()
        if measured is None:
            return  # the child died without a word: no measurement, nothing learned
        tracker = self.network.tracker
        if check.before is not None:
            real = {int(f): v for f, v in measured["delivered"].items()}
            ours = {f: int(tracker.GetDelivered(f)) for f in check.flows}
            sizes = {f: self.network.flows[f].size for f in check.flows}
            progress, error = skip_error(check.before, ours, real, sizes)
            here = {f: read_outcome(tracker, f) for f in check.flows}
            ended = {int(f): fct for f, fct in measured["ended"].items() if here[int(f)].fct is None}
            now = self.network.now()
            error = max(error, late_error({f: now - here[f].start for f in ended}, ended))
            self._record_check(check.kind, check.time, check.flows, error, progress_error=progress,
                               bytes_off=sum(abs(ours[f] - real[f]) for f in check.flows))
            return
        real = {int(f): v for f, v in measured.items()}
        assert self.memo is not None, "a memo batch is checked only with a memo"
        kinds = self.memo.held_as(check.held)
        for kind in MEMO_KINDS:
            flows = tuple(sorted(f for f, k in kinds.items() if k is kind))
            if not flows:
                continue
            ended = {f: read_outcome(tracker, f).fct for f in flows}
            error = replay_error(ended, real)
            self._record_check(kind, check.time, flows, error,
                               fct_memo=max((v for v in ended.values() if v is not None), default=None),
                               fct_simulated=max((real[f] for f in flows if real.get(f) is not None), default=None))

    def _record_check(self, kind: GuardKind, time_s: float, flows: tuple[int, ...], error: float,
                      **detail: float | int | None) -> None:
        """Count one check of a kind; if it stops the kind, say so on stderr and in the skip trace."""
        assert self.guard is not None
        message = self.guard.record(kind, time_s, flows, error, **detail)
        if message is not None:
            print(f"wormhole-ns3: verify: {message}", file=sys.stderr, flush=True)
            self.records.append(SkipRecord(
                time=self.network.now(), flow_ids=flows, dt=0.0, events_moved=0, events_avoided=0,
                credited_bytes=0, queue_packets=0, limit=f"{kind.value}s stopped", reason=message,
                kind=TraceKind.GUARD,
            ))
