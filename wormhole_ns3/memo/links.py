"""What the memo knows of each link beyond its parameters: the ``LinkLedger``.

A key and a signature see a link as a plain run would have it: its
parameters, how recently an episode released it (its last ACKs and FINs are
still on the wire), the packets queued on it, those a replay's completion left
out (the recorded ones ``FlowOutcome.trailing`` holds), and which kinds of link
flows drew random numbers at.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache

from wormhole_ns3.core.draws import Draws
from wormhole_ns3.core.ports import MemoHost
from wormhole_ns3.memo.randomness import DrawHistory
from wormhole_ns3.memo.record import FlowOutcome
from wormhole_ns3.memo.signature import Direction, LinkName, LinkState, PathLink, Signature

#: A link an episode released less than this long ago still carries its last ACKs and
#: FINs (on the wire, not only in queues): how long ago is part of the link's state.
RECENT_NS = 1_000_000


class LinkLedger:
    """Each link's state as the memo keys it, and each flow's links, read from the host once."""

    def __init__(self, host: MemoHost) -> None:
        self.host = host
        self.now_ns = 0  #: the time of the arrivals being handled
        self._released: dict[int, int] = {}  #: link -> when an episode last released it
        self._flow_links: dict[int, frozenset[int]] = {}  #: flow -> the links it loads (``links``)
        self._flow_digests: dict[int, str] = {}  #: flow -> its attributes' digest (``attributes_digest``)
        #: link -> (when, how many): the packets the recordings of the completions replayed
        #: then had queued there (``FlowOutcome.trailing``), which the replays did not queue
        self._recorded_queue: dict[int, tuple[int, int]] = {}
        #: which kinds of link this run's recordings crossed with or without random draws
        self.draw_history = DrawHistory()
        #: packets a plain run has queued on a link now that a replay owes (``memo/owed.py`` sets it)
        self.owed_queued: Callable[[int], int] = _nothing_owed

    # ------------------------------------------------------------ flows' links
    def links(self, flow: int) -> frozenset[int]:
        """The links a flow loads, data and ACK paths (its route is the host's first answer, kept)."""
        links = self._flow_links.get(flow)
        if links is None:
            data, ack = self.host.flow_route(flow)
            links = self._flow_links[flow] = frozenset(data) | frozenset(ack)
        return links

    def links_of(self, flows: Iterable[int]) -> frozenset[int]:
        """Every link the flows load, data and ACK paths."""
        return frozenset().union(*map(self.links, flows))

    def route(self, flow: int) -> tuple[int, ...]:
        """A flow's links in order: its data path, then its ACK path."""
        data, ack = self.host.flow_route(flow)
        return (*data, *ack)

    # ------------------------------------------------------------ links' state
    def released(self, link: int, now_ns: int) -> None:
        """An episode released the link: its last packets are on it from now on."""
        self._released[link] = now_ns

    def link_attributes(self, link: int) -> str:
        """A link's parameters, and how recently an episode released it (its last packets)."""
        since = self.now_ns - self._released.get(link, -RECENT_NS)
        recent = f" released {since} ns ago" if since < RECENT_NS else ""
        return self.host.link_attributes(link) + recent

    def link_kind(self, link: int) -> str:
        """What a link is, whichever link it is: the digest of its parameters."""
        return digest(self.host.link_attributes(link))

    def note_recorded_queues(self, now_ns: int, flow: int, outcome: FlowOutcome | None) -> None:
        """A replayed completion of ``flow``: what the recorded one had queued on its links then.

        A flow's last byte arrives with the ACKs of the flows it shared hosts with
        still queued behind it (hundreds, on a ring's hosts); the next step meets
        them. A replay puts only the flow's own last ACK and FIN on the wire.
        """
        if outcome is None or not outcome.trailing:
            return
        for link, recorded in zip(self.route(flow), outcome.trailing):
            when, before = self._recorded_queue.get(link, (-1, 0))
            self._recorded_queue[link] = (now_ns, max(recorded, before) if when == now_ns else recorded)

    def _recorded(self, link: int) -> int:
        """What the recordings of the completions replayed at this very instant had queued on the link."""
        when, queued = self._recorded_queue.get(link, (-1, 0))
        return queued if when == self.now_ns else 0

    def left_out_on(self, flows: Iterable[int]) -> int:
        """Packets replays ending at this instant left out of these flows' links."""
        recorded = {link: queued for link in self.links_of(flows) if (queued := self._recorded(link))}
        links = list(recorded)  # a link no replay left packets out of counts nothing: its queue is not read
        return sum(max(0, recorded[link] - queued - self.owed_queued(link))
                   for link, queued in zip(links, self.host.link_queues(links)))

    def queues(self, links: Sequence[int]) -> list[int]:
        """Each link's queue as a plain run has it now, as far as the memo knows (one crossing for all).

        It counts the ACKs replays owe (``memo/owed.py``) as queued where a plain run
        queues them, and the packets replays ending at this instant left out, so that a
        step opening right after a replayed step is keyed as after a simulated one:
        it then replays what a plain run does there. Packets left out earlier are
        not counted (they drain in microseconds, and how far they drained depends on
        their sizes): the key then sees the emptier links, as it always did.
        """
        return [max(queued + self.owed_queued(link), self._recorded(link))
                for link, queued in zip(links, self.host.link_queues(links))]

    def queues_of(self, flows: Iterable[int]) -> dict[int, int]:
        """Each link of these flows' routes and its queue (``queues``), in one crossing for all.

        What the signatures of a batch's joiners read: no event runs while they are
        made, and nothing the memo does meanwhile puts a packet in a queue at once
        (holds and starts are told to the tracker, resumes and completions are
        scheduled), so each signature reads what it would have read itself.
        """
        links = list(dict.fromkeys(link for flow in flows for link in self.route(flow)))
        return dict(zip(links, self.queues(links)))

    def note_draws(self, links: Iterable[int], draws: Draws) -> None:
        """A recording closed over these links, having drawn ``draws``."""
        self.draw_history.note({link: self.link_kind(link) for link in links}, draws)

    def quiet_so_far(self, link: int) -> bool:
        """Whether recordings crossed links of this kind and none drew at their nodes."""
        return self.draw_history.quiet_so_far(self.link_kind(link))

    # -------------------------------------------------------------- signatures
    def attributes_digest(self, flow: int) -> str:
        """A digest of what a flow is, made once: a joiner's signature is made two or three times."""
        flow_digest = self._flow_digests.get(flow)
        if flow_digest is None:
            flow_digest = self._flow_digests[flow] = digest(self.host.flow_attributes(flow))
        return flow_digest

    def signature(self, flow: int, names: dict[int, LinkName], created: int | None = None,
                  queued: Mapping[int, int] | None = None) -> Signature:
        """What a flow is and which links it crosses, those an episode holds by their ``names``.

        A link the episode does not hold yet is named by its place in the flow's
        own path, with its parameters and queue, so the signature never depends
        on link ids. Its queue is read now, or taken from ``queued`` (``queues_of``,
        read for the flows of one batch at once).
        """
        data, ack = self.host.flow_route(flow)
        if queued is None:
            new = [link for link in (*data, *ack) if link not in names]
            queued = dict(zip(new, self.queues(new))) if new else {}
        return Signature(self.attributes_digest(flow), self._path(Direction.DATA, data, names, queued),
                         self._path(Direction.ACK, ack, names, queued), created)

    def _path(self, direction: Direction, links: tuple[int, ...], names: dict[int, LinkName],
              queued: Mapping[int, int]) -> tuple[PathLink, ...]:
        """A path's links as a signature names them (``signature``), in one loop."""
        path: list[PathLink] = []
        for hop, link in enumerate(links):
            name = names.get(link)
            path.append(name if name is not None else
                        link_state(direction, hop, digest(self.link_attributes(link)), queued[link]))
        return tuple(path)


def _nothing_owed(link: int) -> int:
    return 0


@lru_cache(maxsize=1 << 14)
def link_state(direction: Direction, hop: int, link_digest: str, queue: int) -> LinkState:
    """``LinkState(direction, hop, link_digest, queue)``, one object for the same four values.

    It is immutable and compared by value: the few states a run's signatures
    name again and again are made once, not at every signature.
    """
    return LinkState(direction, hop, link_digest, queue)


@lru_cache(maxsize=1 << 14)
def digest(text: str) -> str:
    """A short digest of a description (flow or link attributes).

    Kept for the texts seen last: a link's description is digested at every
    signature that names it, and a pure function of its text can be.
    """
    return hashlib.sha1(text.encode()).hexdigest()[:16]
