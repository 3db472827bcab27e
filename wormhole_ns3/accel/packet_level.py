"""Why a partition ran a window packet by packet: run.json's "packet-level time by reason".

At every sample the skip engine charges each partition that did not skip the
sampling period to one reason; the last verdict's ``Limit`` names most of them.
"""

from __future__ import annotations

from wormhole_ns3.accel.steady import Limit
from wormhole_ns3.core.vocabulary import Label


class PacketLevel(Label):
    """Why a window of a partition ran packet by packet (run.json's "packet-level time by reason")."""

    SETTLING = "settling after a flow event"
    FLOW_TAILS = "flow tails"
    UNSKIPPABLE_FLOW = "unskippable flow"
    SKIP_TOO_SHORT = "steady, skip too short"
    FILLING_WINDOW = "filling a window"
    UNFAIR_SHARES = "unfair shares"
    AGGREGATE_UNSTEADY = "aggregate rate unsteady"
    QUEUES_FILLING_OR_DRAINING = "queues filling or draining"
    CYCLES_UNSEEN = "congestion cycles not yet repeating"
    FLOW_CONNECTING = "a flow connecting on its links"
    NEWCOMER_DUE = "a flow due on its links"
    RATES_RECOVERING = "rates recovering"
    RATES_SHIFTING = "rates shifting"
    NO_PROGRESS = "no progress in window"
    EVERY_FLOW_IDLE = "every flow idle"
    DRAWING = "drawing random numbers"
    WINDOW_GROWING = "window growing with time"


#: The packet-level time of a partition whose last verdict refused it, by the verdict's limit.
PACKET_LEVEL_BY_LIMIT = {
    Limit.WINDOW_NOT_FULL: PacketLevel.FILLING_WINDOW,
    Limit.UNFAIR: PacketLevel.UNFAIR_SHARES,
    Limit.SPREAD: PacketLevel.AGGREGATE_UNSTEADY,
    Limit.FILLING_OR_DRAINING: PacketLevel.QUEUES_FILLING_OR_DRAINING,
    Limit.CYCLE_UNSEEN: PacketLevel.CYCLES_UNSEEN,
    Limit.RECOVERING: PacketLevel.RATES_RECOVERING,
    Limit.HALVES_DIFFER: PacketLevel.RATES_SHIFTING,
    Limit.NO_PROGRESS: PacketLevel.NO_PROGRESS,
    Limit.DRAWS: PacketLevel.DRAWING,
    Limit.ALL_IDLE: PacketLevel.EVERY_FLOW_IDLE,
    Limit.BELOW_CAPACITY: PacketLevel.WINDOW_GROWING,
}
