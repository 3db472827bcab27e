"""``wormhole_ns3.enable()``: accelerate the script that calls it."""

from __future__ import annotations

import atexit
from pathlib import Path

from wormhole_ns3.config import AcceleratorConfig
from wormhole_ns3.memo.store import RUN_ONLY
from wormhole_ns3.run.session import Session

_enabled: list[Session] = []


def enable(config: AcceleratorConfig | None = None, *, memo: str | Path | None = RUN_ONLY,
           **settings) -> Session:
    """Accelerate the rest of this process's ns-3 simulation.

    Call it before the script creates nodes or touches ``ns.Simulator``;
    keyword arguments are AcceleratorConfig fields (``theta=0.05, window=10``).
    ``memo`` is a memo store to record contention episodes in and replay them
    from, as ``wormhole-ns3 run --memo PATH`` does (by default ``":memory:"``, a
    store of this run only; None: no memoization); it is closed when the process
    exits. Returns the session, whose ``skips``, ``flow_results()`` and ``report()``
    say what was fast-forwarded and replayed in every simulation the script runs
    (each ``Simulator::Destroy()`` gives the next one a fresh ``controller``).
    """
    from wormhole_ns3.run.harness import ACCELERATED, RunOptions, prepare

    if config is None:
        config = AcceleratorConfig(**settings)
    elif settings:
        raise TypeError("pass either a config or keyword settings, not both")
    if _enabled:
        raise RuntimeError("wormhole_ns3.enable() was already called in this process")
    session = prepare(RunOptions(mode=ACCELERATED, config=config,
                                 memo=Path(memo) if memo is not None else None))
    if session.memo_store is not None:
        atexit.register(session.close)
    _enabled.append(session)
    return session


def last_controller() -> Session | None:
    """The session enable() attached, if any (its ``controller`` is the running simulation's)."""
    return _enabled[-1] if _enabled else None
