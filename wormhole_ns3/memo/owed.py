"""The end of a replayed transfer, owed: ``OwedEnds``.

A replayed RDMA completion puts on the wire what the last packet's arrival
does in a plain run: the receiver's ACK. Nothing reads it at its sender (the
queue pair is acknowledged already); what it does is occupy each link of its
reverse path for the moment it crosses it, and a packet simulated there then
queues with it. Where no flow simulated packet by packet can meet it, it is
*owed* instead: noted at the completion, and put on the wire only if, in that
very instant, a flow starts for real (or resumes) whose packets could find it on
a link, before that flow starts; an ACK sent in that instant sends first those
owed ones it could meet. A key read in that instant counts the owed ACKs on the
link they leave from as a plain run queues them.

An ACK is owed only if its whole path is idle now (nothing queued, nothing
being sent: ``FlowTracker::OweEndOfTransfer``) and no ACK sent in this instant
crosses it. Its links were its replay's until the completion, so no flow
simulated packet by packet is on them (it would have joined the replay): alone,
it reaches and leaves each link's egress at known times (bounded by an MTU's
transmission per hop, and held back by the other owed ACKs it crosses paths
with). A flow's packets reach a link no earlier than the propagation of its hops
before it; one that cannot reach a link before the ACK left it cannot meet it. A
flow that could, started after the ACK's instant, is a *late meeting*: nothing is
sent (the ACK would be further along its path), and it is counted
(``MemoStats.ends_late``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from wormhole_ns3.core.ports import MemoHost
from wormhole_ns3.memo.decisions import MemoStats
from wormhole_ns3.memo.links import LinkLedger


@dataclass
class OwedEnd:
    """The ACK a replayed completion of ``flow`` owes, along its reverse path."""

    flow: int
    at_ns: int
    #: link -> when the ACK would reach its egress port and when it would have left it, at the latest
    hops: dict[int, tuple[int, int]]

    @property
    def drained_ns(self) -> int:
        """When it would have left its last link's egress: nothing can queue with it after that."""
        return max(leave for _, leave in self.hops.values())

    def met_by(self, reach: Mapping[int, int], crossing: Mapping[int, int]) -> bool:
        """Whether packets reaching links at the earliest at ``reach`` (link -> ns) could find it there.

        ``crossing`` counts the owed ACKs on each link: each may have gone first where they
        meet, holding this one back by its time on the link, and it stays later on every
        hop after.
        """
        held_back = 0
        for link, (arrive, leave) in self.hops.items():
            held_back += (crossing.get(link, 1) - 1) * (leave - arrive)
            when = reach.get(link)
            if when is not None and when < leave + held_back:
                return True
        return False


@dataclass
class OwedEnds:
    """The ends of transfer replays owe, and the moment each is paid or dropped."""

    host: MemoHost
    ledger: LinkLedger
    stats: MemoStats
    #: flow -> its owed end, in the order the completions ran
    owed: dict[int, OwedEnd] = field(default_factory=dict)
    #: links ACKs sent in the instant ``_sent_at`` cross
    _sent_links: set[int] = field(default_factory=set)
    _sent_at: int = -1

    def __post_init__(self) -> None:
        self.ledger.owed_queued = self.queued

    def complete(self, now_ns: int, flow: int) -> None:
        """A replayed completion of ``flow`` is due now: owe its end of transfer, or send it after what
        it meets.

        Its path's links were its replay's until now: a flow simulated on one would
        have joined the replay (or made it diverge). It is sent if an ACK sent in this
        instant crosses its path, or if the path is busy (the last packets of flows that
        ended) or the flow cannot owe it (``MemoHost.owe_end_of_transfer``).
        """
        self._forget_drained(now_ns)
        path = self.host.flow_route(flow)[1]
        if not path:
            return
        if not (now_ns == self._sent_at and self._sent_links.intersection(path)):
            hops = self.host.owe_end_of_transfer(flow)
            if hops is not None:
                self.owed[flow] = OwedEnd(flow, now_ns, {link: (now_ns + arrive, now_ns + leave)
                                                         for link, (arrive, leave) in zip(path, hops)})
                self.stats.ends_owed += 1
                return
        self.stats.ends_sent += 1
        self._pay(now_ns, dict.fromkeys(path, now_ns))
        self._note_sent(now_ns, path)

    def meet(self, now_ns: int, flows: Iterable[int]) -> None:
        """These flows are simulated from now on: the ACKs owed that their first packets could find on
        their links go on the wire first (those of this instant; one of an earlier one is a late meeting)."""
        if not self.owed:
            return
        self._forget_drained(now_ns)
        reach: dict[int, int] = {}
        for flow in flows:
            for link, when in self._reach(now_ns, flow).items():
                reach[link] = min(when, reach.get(link, when))
        self._pay(now_ns, reach)

    def queued(self, link: int) -> int:
        """ACKs owed in this instant that a plain run queues at the link (all but the one it sends)."""
        now = self.ledger.now_ns
        leaving = sum(1 for end in self.owed.values() if end.at_ns == now and end.hops.get(link, (-1, 0))[0] == now
                      ) if self.owed else 0
        return max(0, leaving - 1)

    def _reach(self, now_ns: int, flow: int) -> dict[int, int]:
        """When a flow starting now could put a packet on each of its links, at the earliest: after the
        propagation of the hops before (its reverse path's, after its data path's)."""
        data, ack = self.host.flow_route(flow)
        reach: dict[int, int] = {}
        when = now_ns
        for link in (*data, *ack):
            reach.setdefault(link, when)
            when += self.host.link_delay_ns(link)
        return reach

    def _pay(self, now_ns: int, reach: dict[int, int]) -> None:
        """Send the ACKs owed in this instant that packets reaching links at ``reach`` could meet (and
        those these ACKs could meet, in turn), in the order of their completions; an ACK owed in an
        earlier instant met so is counted as a late meeting, and dropped."""
        crossing: dict[int, int] = {}
        for owed in self.owed.values():
            for link in owed.hops:
                crossing[link] = crossing.get(link, 0) + 1
        met: set[int] = set()
        grew = True
        while grew:
            grew = False
            for end in self.owed.values():
                if end.flow not in met and end.met_by(reach, crossing):
                    met.add(end.flow)
                    if end.at_ns == now_ns:
                        for link, (arrive, _) in end.hops.items():
                            reach[link] = min(arrive, reach.get(link, arrive))
                        grew = True
        for end in [e for e in self.owed.values() if e.flow in met]:
            del self.owed[end.flow]
            if end.at_ns != now_ns:
                self.stats.ends_late += 1  # it would be further along its path: not sent
                continue
            self.host.send_end_of_transfer(end.flow)
            self.stats.ends_paid += 1
            self._note_sent(now_ns, end.hops)

    def _note_sent(self, now_ns: int, links: Iterable[int]) -> None:
        if now_ns != self._sent_at:
            self._sent_at, self._sent_links = now_ns, set()
        self._sent_links.update(links)

    def _forget_drained(self, now_ns: int) -> None:
        """Ends that would have left their path by now: nothing can meet them any more."""
        for end in [e for e in self.owed.values() if e.drained_ns <= now_ns]:
            del self.owed[end.flow]
