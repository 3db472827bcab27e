"""Where an accelerated run's ``Run()`` time went (``--profile``), from timers around Python entry points.

Inside ``Simulator::Run()`` the process runs C++ events, and now and then
Python: the accelerator's callbacks (controller and memo decisions, and the
calls they make back into C++ through cppyy), and the script's own Python
callbacks (a trace sink, a workload's completion record). The C++ events
cannot be timed one by one without costing what they measure, but every
Python stretch starts at a known entry point: the accelerator's callbacks are
wrapped by ``runtime.boundary.Boundary``, and a Python profile hook that looks
only at frames entered straight from C++ times the script's. Events executed
in C++ are ``Run()`` wall minus all of them.

Off by default: the wrappers cost a little per call and the hook a little
per Python call of the script's callbacks (it is off inside the
accelerator's), so a profiled run is slightly slower than an unprofiled one,
and the split is of that run. A builtin handed straight to C++ (a
``list.append`` as a trace sink) enters no Python frame: it is counted with
the C++ events.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

from wormhole_ns3.core.vocabulary import Label


class Section(Label):
    """Where a stretch of ``Run()`` wall time went (run.json's ``profile``)."""

    EVENTS = "events executed (C++)"
    CONTROLLER = "controller (Python decisions)"
    MEMO = "memo (Python)"
    BOUNDARY = "boundary calls (Python into C++)"
    SCRIPT = "script's own Python callbacks"


#: Sections timed directly; EVENTS is what Run() wall leaves.
TIMED = (Section.CONTROLLER, Section.MEMO, Section.BOUNDARY)


@dataclass
class RunProfile:
    """Exclusive seconds per section, and Python entries from C++, summed over every ``Run()``."""

    clock: Callable[[], float] = time.perf_counter
    #: Exclusive seconds per timed section since the profile was made (Run() or not).
    seconds: dict[Section, float] = field(default_factory=dict)
    calls: dict[Section, int] = field(default_factory=dict)
    #: Inside Run() only: seconds per section, and Python entered from C++ (seconds, entries):
    #: the accelerator's callbacks (their wrappers included) and the script's.
    in_run: dict[Section, float] = field(default_factory=dict)
    callbacks_s: float = 0.0
    callback_entries: int = 0
    script_s: float = 0.0
    script_entries: int = 0
    #: Open sections, innermost last: [section, start, seconds spent in inner sections].
    _open: list[list[Any]] = field(default_factory=list)
    _at_start: dict[Section, float] = field(default_factory=dict)
    _outer: FrameType | None = None
    _callback_code: CodeType | None = None
    #: When the Python entry in progress began (None: none, or it began before the hook).
    _entered: float | None = None
    _watching: bool = False
    #: A profile function installed before Run() (a debugger's, cProfile's): put back after it.
    _previous_hook: Any = None

    def timed(self, function: Callable[..., Any], section: Section) -> Callable[..., Any]:
        """``function``, its time charged to ``section`` (less what inner sections take)."""

        def timed_call(*args: Any, **kwargs: Any) -> Any:
            self._enter(section)
            try:
                return function(*args, **kwargs)
            finally:
                self._leave()

        return timed_call

    def callback(self, function: Callable[..., Any], section: Section) -> Callable[..., Any]:
        """``function`` timed, for C++ to call: the entry hook is off inside it, so costs it nothing."""
        timed = self.timed(function, section)

        def unwatched(*args: Any) -> Any:
            if not self._watching:
                return timed(*args)
            sys.setprofile(None)
            try:
                return timed(*args)
            finally:
                if self._watching:
                    sys.setprofile(self._hook)

        return unwatched

    def timed_object(self, target: Any, section: Section) -> Any:
        """``target`` with every method call charged to ``section`` (a C++ object's to the boundary)."""
        return _TimedObject(target, self, section)

    def run_started(self, callback_code: CodeType | None) -> None:
        """Called from inside Run() by the callback whose code is ``callback_code``: start the entry hook.

        The frame below that callback's is the Python frame that called
        Run(): a frame whose caller it is was entered straight from C++.
        """
        frame: FrameType | None = sys._getframe()
        while frame is not None and frame.f_code is not callback_code:
            frame = frame.f_back
        self._outer = frame.f_back if frame is not None else None
        self._callback_code = callback_code
        self._at_start = dict(self.seconds)
        self._previous_hook = sys.getprofile()
        self._watching = True
        sys.setprofile(self._hook)

    def run_ended(self) -> None:
        """Called from inside Run() as it returns: stop the hook and keep what this Run() took."""
        self._watching = False
        _put_back(self._previous_hook)
        self._entered = None
        for section, total in self.seconds.items():
            self.in_run[section] = self.in_run.get(section, 0.0) + total - self._at_start.get(section, 0.0)

    def split(self, run_wall: float) -> dict[str, float]:
        """Seconds of ``run_wall`` per section; C++ events are what the Python sections leave.

        The accelerator's callbacks take longer than their timed bodies (the
        guard, the timers): that difference is the controller's.
        """
        result = {str(s): self.in_run.get(s, 0.0) for s in TIMED}
        wrappers = self.callbacks_s - sum(result.values())
        result[str(Section.CONTROLLER)] += max(wrappers, 0.0)
        result[str(Section.SCRIPT)] = self.script_s
        result[str(Section.EVENTS)] = max(run_wall - sum(result.values()), 0.0)
        return result

    def _enter(self, section: Section) -> None:
        self._open.append([section, self.clock(), 0.0])

    def _leave(self) -> None:
        section, start, inner = self._open.pop()
        spent = self.clock() - start
        self.seconds[section] = self.seconds.get(section, 0.0) + spent - inner
        self.calls[section] = self.calls.get(section, 0) + 1
        if self._open:
            self._open[-1][2] += spent

    def _hook(self, frame: FrameType, event: str, _arg: Any) -> None:
        if frame.f_back is not self._outer:
            return
        if event == "call":
            self._entered = self.clock()
        elif event == "return" and self._entered is not None:
            spent = self.clock() - self._entered
            if frame.f_code is self._callback_code:
                self.callbacks_s += spent
                self.callback_entries += 1
            else:
                self.script_s += spent
                self.script_entries += 1
            self._entered = None


class _TimedObject:
    """An object whose method calls are charged to one section (each bound method is wrapped once)."""

    def __init__(self, target: Any, profile: RunProfile, section: Section) -> None:
        self._target = target
        self._profile = profile
        self._section = section

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if callable(value):
            value = self._profile.timed(value, self._section)
            setattr(self, name, value)
        return value


def _put_back(hook: Any) -> None:
    """Reinstall the profile hook Run() found: a function, or a C profiler (cProfile's), which enables itself.

    ``sys.getprofile`` gives back cProfile's profiler object, which is no function:
    handed to ``sys.setprofile``, the next Python call raised TypeError.
    """
    if hook is None or not hasattr(hook, "enable"):
        sys.setprofile(hook)
    else:
        hook.enable()
