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
import json
import os
import random
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field

from wormhole_ns3.core.shortcuts import GuardKind

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
