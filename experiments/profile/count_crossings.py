"""``wormhole-ns3 ARGS`` in this process, its calls from Python into C++ counted and timed per method.

``--profile`` counts the boundary calls of a run (the tracker's and the simulator's
methods the controller and the memo call, ``runtime/profile.py``) but not which;
this wraps each of them once more and writes, per method, how many calls and
their wall seconds (the C++ they run included, and the profile's own timers):

    python experiments/profile/count_crossings.py results/p/crossings.json \\
        run --profile --results results/p/run.json experiments/llm_training.py --preset moe-small

ARGS are ``wormhole-ns3``'s and must hold ``--profile``. The calls counted are all
the profile counts (``calls`` of run.json's ``profile``), the warm-up's before
``Run()`` included.
"""

from __future__ import annotations

import collections
import json
import sys
import time
from collections.abc import Callable
from typing import Any

from wormhole_ns3.runtime import profile
from wormhole_ns3.tools.cli import main

counts: collections.Counter[str] = collections.Counter()
seconds: collections.Counter[str] = collections.Counter()
_timed_attribute = profile._TimedObject.__getattr__


def _counted(name: str, call: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        start = time.perf_counter()
        try:
            return call(*args, **kwargs)
        finally:
            seconds[name] += time.perf_counter() - start

    return counted


def _counting_attribute(self: Any, name: str) -> Any:
    """A boundary object's method, counted (and kept on the object, as the profile keeps its own)."""
    value = _timed_attribute(self, name)
    if callable(value) and self._section is profile.Section.BOUNDARY:
        value = _counted(name, value)
        object.__setattr__(self, name, value)
    return value


if __name__ == "__main__":
    out, args = sys.argv[1], sys.argv[2:]
    profile._TimedObject.__getattr__ = _counting_attribute  # type: ignore[method-assign]
    try:
        code = main(args)
    finally:
        with open(out, "w") as kept:
            json.dump({name: [n, round(seconds[name], 3)] for name, n in counts.most_common()}, kept, indent=1)
    raise SystemExit(code)
