"""How the memo treats each kind of flow: its ``TransportPolicy``.

Kinds differ in what a replay can promise for them. A TCP flow resumed from a
recorded trajectory goes on close to where plain ns-3 has it; a paced (RDMA)
queue pair resumed so is not exact, so a replay of paced flows is taken only
where nothing can stop it half-way. Every kind groups into episodes as TCP
flows do. HPCC was kept apart (each of its flows on fresh links opened an
episode, and meetings merged) while a replayed completion left its last ACK off
the wire and the flows simulated next to replayed steps ended up to 30% off
(moe-small-hpcc); with the ACK sent, no kind is, and those rules went
(doc/changelog.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from wormhole_ns3.core.flows import FlowKind

#: Stored continuations of alike-ending flows whose every flow ends within this share of
#: their span of the others' are one course to a replay (``TransportPolicy.end_tolerance``).
ALIKE_ENDS_SHARE = 1e-3


@dataclass(frozen=True)
class TransportPolicy:
    """What the memo may assume of a kind of flow, each a rule of the Memoizer's."""

    #: a flow resumed from its recorded trajectory goes on as plain ns-3 would (False: paced,
    #: so a replay is taken only where nothing its record lacks can come)
    exact_resume: bool
    #: alike joiners are told apart by their creation rank (False: matched in any order, as
    #: DCQCN's queue pairs are paced from their first packet)
    rank_sensitive: bool
    #: continuations ending within this share of their span of one another are one course
    #: (0: continuations that end otherwise are all followed, and part when they part)
    end_tolerance: float

    @property
    def guarded(self) -> bool:
        """Not exact to resume: replayed or mirrored only where no unforeseeable flow may reach."""
        return not self.exact_resume


TCP = TransportPolicy(exact_resume=True, rank_sensitive=True, end_tolerance=0.0)
DCQCN = TransportPolicy(exact_resume=False, rank_sensitive=False, end_tolerance=ALIKE_ENDS_SHARE)
HPCC = TransportPolicy(exact_resume=False, rank_sensitive=True, end_tolerance=0.0)


def policy_of(kind: str, paced: bool) -> TransportPolicy:
    """The policy of a flow of a kind as the tracker names it, paced or not as it says (FlowTracker::IsPaced):
    TCP's for every unpaced flow, HPCC's for every paced kind but DCQCN (matched by creation rank and with
    no end tolerance: the stricter rules)."""
    if not paced:
        return TCP
    return DCQCN if kind == FlowKind.RDMA_DCQCN else HPCC
