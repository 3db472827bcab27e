"""The run's flows and links as the accelerator knows them, and the C++ objects it reads them from.

Every part of the accelerator (partitioner, skip engine, guard) asks the same
questions of the same flows: their paths, tags and round-trip times, their
links' rates and random models. What never changes while a run goes is read
from C++ once and kept here, so that each part asks this object, not the
tracker, and no two parts keep their own copies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from wormhole_ns3.accel.steady import contends
from wormhole_ns3.core.draws import Fidelity, RandomSource
from wormhole_ns3.core.flows import FlowInfo
from wormhole_ns3.core.ports import MemoSimulatorPort, MemoTrackerPort

#: Bytes of a full-size packet, for round-trip time estimates.
MTU_BYTES = 1500


@dataclass
class Network:
    """The run's flows (sending or finished) and the facts of their links, on the run's tracker and simulator."""

    #: The loaded ``ns3`` namespace (the simulator's clock, times): C++ names, not a port.
    ns3: Any
    tracker: MemoTrackerPort
    fidelity: Fidelity
    #: The run's WormholeSimulatorImpl, once Run() started (``simulator``).
    impl: MemoSimulatorPort | None = None
    #: Every flow that started sending, by id.
    flows: dict[int, FlowInfo] = field(default_factory=dict)
    active: set[int] = field(default_factory=set)
    finished: set[int] = field(default_factory=set)
    #: Per link, its share of a path's RTT (propagation + one MTU's serialization),
    #: read once per run: links keep their delay and rate while a run goes.
    _link_rtt: dict[int, float] = field(default_factory=dict)
    _link_rates: dict[int, float] = field(default_factory=dict)
    _random_sources: dict[int, tuple[RandomSource, ...]] = field(default_factory=dict)
    #: Per flow, its path's RTT (its route does not change once it sends).
    _flow_rtt: dict[int, float] = field(default_factory=dict)
    #: Per flow, the ports of its path where a model draws once a queue stands, each with the
    #: most the flow can bring there (``port_loads``'s term); per link, those models in words.
    _drawing_hops: dict[int, tuple[tuple[int, int | Fraction | None, float], ...]] = field(default_factory=dict)
    _drawing_words: dict[int, tuple[str, ...]] = field(default_factory=dict)
    #: Under same-seed fidelity, per such port, the sending flows' terms summed (``port_loads``: finite
    #: ones exactly, as ints of bit rates, and how many are unbounded), kept per flow start and end;
    #: and the ports whose load exceeds their link's rate (``queue_draws_on``).
    _port_load: dict[int, tuple[int | Fraction, int]] = field(default_factory=dict)
    _overloaded: set[int] = field(default_factory=set)

    @property
    def simulator(self) -> MemoSimulatorPort:
        """The run's WormholeSimulatorImpl: what calls it runs inside Run(), once the run has started."""
        assert self.impl is not None, "the simulator is known once Run() has started"
        return self.impl

    def now(self) -> float:
        return self._clock().GetSeconds()

    @property
    def _clock(self) -> Any:
        """``Simulator::Now``, looked up in the ns-3 namespace once (every callback asks the time)."""
        clock = self.__dict__.get("_now")
        if clock is None:
            clock = self.__dict__["_now"] = self.ns3.Simulator.Now
        return clock

    def started(self, flow: int, info: FlowInfo) -> None:
        """A flow sends: what it is, as the tracker read it; its RTT is worked out anew when asked.

        Under same-seed fidelity its terms load the drawing ports of its path from now on.
        """
        if flow in self.active:
            self._load(flow, -1)
        self.flows[flow] = info
        self._flow_rtt.pop(flow, None)
        self._drawing_hops.pop(flow, None)
        self.active.add(flow)
        self._load(flow, 1)

    def ended(self, flow: int) -> None:
        if flow in self.active:
            self._load(flow, -1)
        self.active.discard(flow)
        self.finished.add(flow)

    def tags(self, flows: frozenset[int]) -> list[int]:
        """The flows' attribution tags, in the set's order (the simulator counts events and draws by tag)."""
        return [self.flows[f].tag for f in flows]

    def rtt(self, flow: int) -> float:
        """A sending flow's ``path_rtt``, computed once: every partition it joins asks for it."""
        rtt = self._flow_rtt.get(flow)
        if rtt is None:
            rtt = self._flow_rtt[flow] = self.path_rtt(self.flows[flow])
        return rtt

    def path_rtt(self, info: FlowInfo) -> float:
        """Propagation plus one full-size packet's serialization on every link, both ways."""
        links = info.path + info.reverse_path
        if not links:
            return 1e-3
        total = 0.0
        for link in links:
            share = self._link_rtt.get(link)
            if share is None:
                share = self._link_rtt[link] = (
                    self.tracker.GetLinkDelay(link).GetSeconds() + MTU_BYTES * 8 / (self.link_rate(link) or 1e9)
                )
            total += share
        return total if info.reverse_path else 2 * total

    def link_rate(self, link: int) -> float:
        """A link's rate, bit/s, read from C++ once (per flow event it is asked for every link of a partition)."""
        rate = self._link_rates.get(link)
        if rate is None:
            rate = self._link_rates[link] = float(self.tracker.GetLinkRate(link))
        return rate

    def paths_contend(self, flows: frozenset[int]) -> bool:
        """Whether, by their paths and link rates alone, some flow's max-min share is below its narrowest link."""
        paths = {f: frozenset(self.flows[f].path) for f in flows}
        return contends(paths, {link: self.link_rate(link) for link in frozenset().union(*paths.values())})

    def queue_draws_on(self, links: frozenset[int]) -> str | None:
        """Under same-seed fidelity: the models that draw once a queue stands, on these links where the
        sending flows can make one (``port_loads``), in words; None if there are none.

        ``links`` are a partition's: every sending flow that loads one of them is of the
        partition (flows sharing a link are), so the run's loads there are its flows' alone.
        Such a model (RED between its thresholds, PIE, COBALT) may draw in a window that
        drew nothing, once its average queue drifts into its random region, and the
        window cannot tell: a skip there may leave draws out.
        """
        if self.fidelity is not Fidelity.SAME_SEED or not self._overloaded:
            return None
        drawing = sorted({words for link in self._overloaded & links for words in self._drawing_words[link]})
        return "; ".join(drawing) or None

    def _load(self, flow: int, sign: int) -> None:
        """Add (``sign`` 1) or take back (-1) a sending flow's terms at the drawing ports of its path.

        Kept as an exact sum and a count of unbounded terms (``_drawing_hops_of``), so that a
        port's load is the same whatever the order flows came and went in, and the same as
        ``port_loads`` summed over the partition's flows.
        """
        if self.fidelity is not Fidelity.SAME_SEED:
            return
        loads = self._port_load
        for link, most, rate in self._drawing_hops_of(flow):
            total, unbounded = loads.get(link, (0, 0))
            if most is None:
                unbounded += sign
            else:
                total += sign * most
            if unbounded or total:
                loads[link] = (total, unbounded)
            else:
                del loads[link]
            if unbounded or total > rate:
                self._overloaded.add(link)
            else:
                self._overloaded.discard(link)

    def _drawing_hops_of(self, flow: int) -> tuple[tuple[int, int | Fraction | None, float], ...]:
        """The flow's ``port_loads`` terms on the ports of its path where a model draws once a queue stands,
        each with its link's rate.

        A term is the most the flow can bring there: the narrowest link upstream, a bit rate
        (an integer; exact as a Fraction if it were not), or unbounded (None) at its first.
        """
        hops = self._drawing_hops.get(flow)
        if hops is None:
            terms: list[tuple[int, int | Fraction | None, float]] = []
            upstream = float("inf")
            for link in self.flows[flow].path:
                words = self._drawing_words.get(link)
                if words is None:
                    words = self._drawing_words[link] = tuple(
                        f"{source.what} (link {link})" for source in self._link_sources(link) if source.needs_queue)
                rate = self.link_rate(link)
                if words:
                    most = (None if upstream == float("inf")
                            else int(upstream) if upstream.is_integer() else Fraction(upstream))
                    terms.append((link, most, rate))
                upstream = min(upstream, rate)
            hops = self._drawing_hops[flow] = tuple(terms)
        return hops

    def _link_sources(self, link: int) -> tuple[RandomSource, ...]:
        """The models on a link that may draw random numbers, read from C++ once."""
        sources = self._random_sources.get(link)
        if sources is None:
            sources = self._random_sources[link] = tuple(
                RandomSource(str(s.what), bool(s.needsQueue)) for s in self.tracker.GetLinkRandomSources(link))
        return sources
