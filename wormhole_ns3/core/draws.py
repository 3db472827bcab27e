"""ns-3's random draws as an input of every shortcut: what was drawn, and the case each shortcut is in.

A skip, a replay or a mirror stands in for packets plain ns-3 would simulate.
Where those packets make models draw random numbers (RED marking between its
thresholds, PIE, an application's jitter; ``RandomDrawMonitor`` sees every
draw, whichever model makes it), the outcome depends on the draws, and plain
ns-3 under the same seed makes draws of its own there. A shortcut is then
sound only if its outcome does not depend on them. Every shortcut says which
case it is in (``DrawCase``, a column of the skip trace), and the ``Fidelity``
setting says which cases may be taken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from wormhole_ns3.core.vocabulary import Label


class Fidelity(Label):
    """What an accelerated run is held to."""

    #: The default: the run stands in for plain ns-3 under the same seed. A shortcut
    #: whose outcome depends on random draws that run would make is not taken.
    SAME_SEED = "same-seed"
    #: Opt-in: the run stands in for plain ns-3 under *some* seed. Recorded courses of
    #: random-dependent episodes may stand in; accuracy is judged against ns-3's own
    #: seed-to-seed spread (``compare --seeds``), not the same-seed run.
    STATISTICAL = "statistical"


class DrawCase(Label):
    """Why a shortcut's outcome does, or does not, depend on ns-3's random draws."""

    #: The recordings it follows drew no random number: the course is deterministic.
    DREW_NOTHING = "drew-nothing"
    #: A mirror of an episode no recording holds yet: no model on its links is known to
    #: draw, and none drew there so far this run (its leader's draws are watched).
    NO_SOURCE = "no-random-source"
    #: A mirror of an episode no recording holds yet, whose links have models that draw
    #: only once a queue stands, where its flows cannot make one (no port of it gets more
    #: than it sends on), or that were crossed without a draw so far this run (its
    #: leader's draws are watched).
    QUIET_SO_FAR = "sources-quiet-so-far"
    #: Under statistical fidelity: recordings made under different draws took the same
    #: course, within the bound (same-seed fidelity replays no course that drew).
    AGREED = "agreed-across-draws"
    #: A skip under statistical fidelity: its window drew random numbers, and its rates
    #: held steady across them (same-seed fidelity skips no window that draws).
    STEADY_ACROSS_DRAWS = "steady-across-draws"
    #: Taken under statistical fidelity although its outcome depends on the draws.
    STATISTICAL = "statistical"
    #: Not taken: its outcome depends on draws this run would make otherwise.
    DEPENDS = "depends-on-draws"


@dataclass(frozen=True)
class RandomSource:
    """A model on a link that may draw random numbers as packets cross it (``DescribeRandomSources``)."""

    what: str  #: its type and what draws
    #: It draws only once a queue stands (RED between its thresholds, PIE, COBALT): where
    #: arrivals never exceed the port's rate, it never does.
    needs_queue: bool


@dataclass(frozen=True)
class Draws:
    """The random numbers some flows' events drew (``WormholeSimulatorImpl::GetTagsDraw*``)."""

    count: int = 0
    #: A digest of the numbers, in order: equal digests, the same draws.
    digest: int = 0
    #: The nodes they were drawn at.
    nodes: tuple[int, ...] = ()

    @property
    def drew(self) -> bool:
        return self.count > 0

    def describe(self) -> str:
        """"drew 412 random numbers at nodes 16, 17" (or "drew no random number")."""
        if not self.drew:
            return "drew no random number"
        where = f" at node{'s' if len(self.nodes) > 1 else ''} {', '.join(map(str, self.nodes))}" if self.nodes else ""
        return f"drew {self.count} random number{'s' if self.count > 1 else ''}{where}"


def port_loads(paths: Iterable[Sequence[int]], rate: Callable[[int], float]) -> dict[int, float]:
    """The most each port of these flows' data paths can receive (bit/s): each flow at most at its
    slowest link upstream of the port, summed over the flows through it."""
    loads: dict[int, float] = {}
    for path in paths:
        upstream = float("inf")
        for link in path:
            loads[link] = loads.get(link, 0.0) + upstream
            upstream = min(upstream, rate(link))
    return loads
