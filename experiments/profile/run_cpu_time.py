"""The main thread's CPU time inside ``Simulator::Run()``, for one run, plain or accelerated.

Usage: python experiments/profile/run_cpu_time.py <wormhole-ns3 arguments>

From the controller's ``on_run_start`` to its ``on_run_end`` (both sides announce their
``Run()``), on ``time.thread_time``: what this process spent, not what the machine's other
processes took from it, which the wall times of two sides run one after the other include.
"""

from __future__ import annotations

import functools
import runpy
import sys
import time
from typing import Any

from wormhole_ns3.accel.controller import Controller


def main() -> None:
    started: list[float] = []
    run_start, run_end = Controller.on_run_start, Controller.on_run_end

    @functools.wraps(run_start)
    def on_run_start(self: Controller) -> Any:
        started.append(time.thread_time())
        return run_start(self)

    @functools.wraps(run_end)
    def on_run_end(self: Controller) -> Any:
        try:
            return run_end(self)
        finally:
            print(f"Run() CPU {time.thread_time() - started[-1]:.3f} s", file=sys.stderr, flush=True)

    Controller.on_run_start, Controller.on_run_end = on_run_start, on_run_end  # type: ignore[method-assign]
    sys.argv = ["wormhole_ns3", *sys.argv[1:]]
    runpy.run_module("wormhole_ns3", run_name="__main__")


if __name__ == "__main__":
    main()
