"""What a flow arriving in an episode is, as a replay compares it: its signature.

A signature never names a link by its id (a replay runs elsewhere in the
topology): a link the episode already holds is named after the arrival that
brought it (``LinkName``), and a link new to the episode by its place in the
flow's own path, its parameters and its queue (``LinkState``). Two arrivals are
the same flow to a replay when their signatures are equal. Only ``record.py``
turns them into text and back.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum


class Direction(Enum):
    """Which of a flow's paths a link is on."""

    DATA = "d"
    ACK = "a"


@dataclass(frozen=True)
class LinkName:
    """A link an episode holds, named after the arrival that brought it and its place on that flow's path."""

    index: int  #: the arrival (in the episode's order) whose flow first loaded the link
    direction: Direction
    hop: int


@dataclass(frozen=True)
class LinkState:
    """A link new to the episode, named by its place on the arriving flow's path: what it is and what it holds."""

    direction: Direction
    hop: int
    digest: str  #: the digest of the link's parameters, and how recently an episode released it
    queue: int  #: packets queued on it, as a plain run has it (``LinkLedger.queue``)


PathLink = LinkName | LinkState


@dataclass(frozen=True)
class Signature:
    """A flow arriving in an episode: what it is and which links it crosses, data path then ACK path."""

    attributes: str  #: the digest of the flow's attributes
    data: tuple[PathLink, ...]
    ack: tuple[PathLink, ...]
    #: a joiner's rank among the flows created in its instant (None for the flows that open an episode,
    #: whose rank is in the key): the simulator breaks ties between alike joiners in that order
    created: int | None = None

    def without_rank(self) -> Signature:
        """The signature but for the creation rank: what joiners matched in any order compare by."""
        return replace(self, created=None)

    def named_links(self) -> tuple[tuple[int, ...], int]:
        """The arrival indices naming the links the episode held (sorted), and how many links were new to it."""
        links = (*self.data, *self.ack)
        held = sorted(link.index for link in links if isinstance(link, LinkName))
        return tuple(held), len(links) - len(held)


@dataclass(frozen=True)
class ApartSignature:
    """An opening flow of an episode a recording absorbed: that episode's key and the flow's place in it.

    A replay recognises such flows when they open apart under that key at that
    offset (``Merges.join_apart``).
    """

    key: bytes
    index: int

    def without_rank(self) -> ApartSignature:
        """Itself: an opening flow is ranked by its key, not among joiners."""
        return self


AnySignature = Signature | ApartSignature
