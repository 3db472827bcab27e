"""The kinds of shortcut a run takes, as the error guard (``accel/verify.py``) checks and bounds them.

The controller makes skips and the memo makes the rest; both, the guard and the
reports name them with these members, so they live below all of them.
"""

from __future__ import annotations

from wormhole_ns3.core.vocabulary import Label


class GuardKind(Label):
    """The kinds of shortcut the guard checks, each with its own bound."""

    SKIP = "skip"
    #: held flows completed as a stored recording has them
    REPLAY = "replay"
    #: held flows completed as their twin, recorded in the same run, ends
    MIRROR = "mirror"
    #: held flows opening apart that a replayed recording had absorbed
    ABSORB = "absorb"
    #: held flows of a replay that diverged, resumed from a recorded trajectory
    RESUME = "resume"
    #: a partition's transient restored as the transient memo recorded it (``--transient-memo``)
    TRANSIENT = "transient"


#: The kinds of memo shortcut (every kind but the skip).
MEMO_KINDS = (GuardKind.REPLAY, GuardKind.MIRROR, GuardKind.ABSORB, GuardKind.RESUME)
