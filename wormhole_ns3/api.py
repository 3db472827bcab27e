"""``wormhole_ns3.enable()``: accelerate the script that calls it."""

from __future__ import annotations

import atexit
from pathlib import Path

from wormhole_ns3.accel.controller import Controller
from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.memo.store import RUN_ONLY

_enabled: list[Controller] = []


def enable(config: AcceleratorConfig | None = None, *, memo: str | Path | None = RUN_ONLY,
           **settings) -> Controller:
    """Accelerate the rest of this process's ns-3 simulation.

    Call it before the script creates nodes or touches ``ns.Simulator``;
    keyword arguments are AcceleratorConfig fields (``theta=0.05, window=10``).
    ``memo`` is a memo store to record contention episodes in and replay them
    from, as ``wormhole-ns3 run --memo PATH`` does (by default ``":memory:"``, a
    store of this run only; None: no memoization); it is closed when the process
    exits. Returns the controller, whose ``skips`` and ``flow_results()`` report
    what was fast-forwarded and replayed.
    """
    from wormhole_ns3.runtime.harness import ACCELERATED, RunOptions, prepare

    if config is None:
        config = AcceleratorConfig(**settings)
    elif settings:
        raise TypeError("pass either a config or keyword settings, not both")
    if _enabled:
        raise RuntimeError("wormhole_ns3.enable() was already called in this process")
    controller = prepare(RunOptions(mode=ACCELERATED, config=config,
                                    memo=Path(memo) if memo is not None else None))
    if controller.memo is not None:
        atexit.register(controller.close)
    _enabled.append(controller)
    return controller


def last_controller() -> Controller | None:
    """The controller enable() attached, if any."""
    return _enabled[-1] if _enabled else None
