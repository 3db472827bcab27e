"""The main thread's CPU time in each of the controller's callbacks from C++, for one run.

Usage: python experiments/profile/callback_times.py [--profile OUT.prof] <wormhole-ns3 arguments>

Wraps the callbacks with ``time.thread_time_ns`` (the CPU of this thread only: other
processes on a loaded machine do not count) and prints, at the end, each one's calls and
total. With ``--profile``, cProfile runs inside the callbacks only, on the same clock, and
its stats are written to OUT.prof (it slows small Python calls: read shares, not times).
"""

from __future__ import annotations

import cProfile
import functools
import runpy
import sys
import time
from collections.abc import Callable
from typing import Any

from wormhole_ns3.accel.controller import Controller

CALLBACKS = ("on_flow_event", "on_drained", "after_unattributed", "on_sample", "on_resume")


def main() -> None:
    args = sys.argv[1:]
    out = None
    if args[:1] == ["--profile"]:
        out, args = args[1], args[2:]
    profile = cProfile.Profile(timer=time.thread_time_ns, timeunit=1e-9) if out else None
    totals: dict[str, tuple[int, int]] = {}

    def timed(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        def wrapper(self: Controller, *a: Any) -> Any:
            start = time.thread_time_ns()
            if profile is not None:
                profile.enable()
            try:
                return method(self, *a)
            finally:
                if profile is not None:
                    profile.disable()
                calls, spent = totals.get(name, (0, 0))
                totals[name] = (calls + 1, spent + time.thread_time_ns() - start)

        return wrapper

    for name in CALLBACKS:
        setattr(Controller, name, timed(name, getattr(Controller, name)))
    sys.argv = ["wormhole_ns3", *args]
    try:
        runpy.run_module("wormhole_ns3", run_name="__main__")
    finally:
        if profile is not None and out is not None:
            profile.dump_stats(out)
        for name, (calls, spent) in totals.items():
            print(f"callback {name}: {calls} calls {spent / 1e6:.1f} ms", file=sys.stderr)


if __name__ == "__main__":
    main()
