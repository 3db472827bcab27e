"""The flows of a script, as the accelerator sees them."""

from __future__ import annotations

from dataclasses import dataclass

from wormhole_ns3.core.vocabulary import Label


class FlowKind(Label):
    """The kinds of flow the accelerator handles, named as the shim's FlowTracker::GetKind() names them.

    The tracker may report other kinds ("bulk-udp", "onoff-tcp", "rdma-<cc>"): a
    flow's ``kind`` stays the tracker's string, compared with these members.
    """

    BULK_TCP = "bulk-tcp"
    #: A TCP connection the script drives through its own socket (SocketFlow).
    SOCKET_TCP = "socket-tcp"
    ONOFF_UDP = "onoff-udp"
    RDMA_DCQCN = "rdma-dcqcn"
    RDMA_HPCC = "rdma-hpcc"


#: The TCP kinds: a window-based sender whose congestion control a skip pauses.
TCP_KINDS = frozenset({FlowKind.BULK_TCP, FlowKind.SOCKET_TCP})

#: Kinds whose sender is the script's own code: what drives it is seen only as the run goes
#: (FlowTracker::GetSkipBlocker), so it is asked again before each judgement.
SCRIPT_DRIVEN_KINDS = frozenset({FlowKind.SOCKET_TCP})


class SenderBlocker(Label):
    """What a flow's sender does that a skip could not reproduce (TrackedFlow::SkipBlocker, in its order).

    A skip of a socket the script drives credits only bytes the script handed
    over already, and tells its send callback of the room freed when the skip
    ends; a write from any other event (a timer of its own) has an effect no
    skip can stand in for.
    """

    WRITES_OUTSIDE_SEND_CALLBACKS = "its application writes to its socket outside the socket's send callbacks"
    RECEIVER_NOT_PACKET_SINK = "no PacketSink receives it: a credit would reach no one"


#: TrackedFlow::SkipBlocker's values, from 1 (0 is SKIPPABLE).
_SENDER_BLOCKERS = (SenderBlocker.WRITES_OUTSIDE_SEND_CALLBACKS, SenderBlocker.RECEIVER_NOT_PACKET_SINK)


def sender_blocker(code: int) -> SenderBlocker | None:
    """The blocker FlowTracker::GetSkipBlocker's number names, None for SKIPPABLE (0)."""
    return _SENDER_BLOCKERS[code - 1] if code else None


#: Congestion controls whose state is clocked by ACKs and sequence numbers
#: only, so a pause followed by a resume leaves them as they were.
ACK_CLOCKED_CONGESTION_CONTROL = frozenset({"ns3::TcpDctcp", "ns3::TcpNewReno", "ns3::TcpLinuxReno"})

#: Congestion controls whose window grows with the time since their last reduction: Cubic (ns-3's
#: default), skipped unless told not to (AcceleratorConfig.skip_cubic). A skip moves their clocks (its
#: epoch's start, HyStart's round) with the flow (BulkSendFlow::ShiftTimes), so that the window resumes
#: where its cubic function was, W_max and t since the last reduction unchanged, and spans whole
#: congestion cycles of theirs (accel/cycles.py), after which plain ns-3's flow is at that point too; a
#: partition of theirs is judged steady only at a full bottleneck (steady.FULL_BOTTLENECK), where a
#: growing window cannot raise their rate.
WINDOW_GROWS_WITH_TIME = frozenset({"ns3::TcpCubic"})


def pausable_congestion_control(skip_cubic: bool) -> frozenset[str]:
    """The congestion controls a skip may pause: the ACK-clocked ones, and Cubic unless told not to."""
    return ACK_CLOCKED_CONGESTION_CONTROL | (WINDOW_GROWS_WITH_TIME if skip_cubic else frozenset())

#: The RTT estimator that leaves skipped time out of its samples (FlowTracker gives one to each TCP sender
#: whose estimator is ns-3's default); a TCP flow with another would see every skip as a long RTT.
SKIP_AWARE_RTT_ESTIMATOR = "ns3::SkipAwareRttEstimator"

#: RDMA flows whose congestion control's clocks a skip shifts with the flow
#: (RdmaQueuePair::ShiftTimes: DCQCN's timers and CNP times, HPCC's telemetry).
SKIPPABLE_RDMA_KINDS = frozenset({FlowKind.RDMA_DCQCN, FlowKind.RDMA_HPCC})


@dataclass(frozen=True)
class FlowInfo:
    """One sending application and its sink, fixed once the flow sends its first byte."""

    id: int
    kind: str  #: FlowTracker::GetKind(): a FlowKind's value, or another kind the tracker knows
    src_node: int
    dst_node: int
    src: str
    dst: str
    sport: int
    dport: int
    size: int  #: bytes, 0 = unlimited
    start: float  #: application start time, s
    path: tuple[int, ...]  #: data links (egress ports)
    reverse_path: tuple[int, ...]  #: ACK links, TCP and RDMA only
    congestion_control: str
    constant_rate: bool
    #: a rate-based congestion control paces it (FlowTracker::IsPaced: RDMA's): its rate is its state
    paced: bool
    app_rate: float  #: bytes/s of an OnOff flow, 0 for TCP
    tag: int  #: attribution tag of the flow's events (WormholeSimulatorImpl)
    #: TypeId name of a TCP sender's RTT estimator ("" for flows without one)
    rtt_estimator: str = ""

    @property
    def links(self) -> frozenset[int]:
        """Every link the flow loads, data or ACKs: what it contends on."""
        return frozenset(self.path) | frozenset(self.reverse_path)

    @property
    def tcp(self) -> bool:
        """True for a TCP sender (a BulkSend's, or a socket the script drives): its window is its state."""
        return self.kind in TCP_KINDS

    @property
    def script_driven(self) -> bool:
        """True if the script's own code drives the sender: what it does is seen as the run goes."""
        return self.kind in SCRIPT_DRIVEN_KINDS

    def skip_blocker(self, pausable: frozenset[str]) -> str | None:
        """Why this flow must be simulated packet by packet, or None if it may be skipped.

        ``pausable`` are the TCP congestion controls a skip may pause (``pausable_congestion_control``).
        """
        if not self.path:
            return "route unknown (random ECMP or on-demand routing)"
        if self.kind in TCP_KINDS:
            if self.congestion_control in WINDOW_GROWS_WITH_TIME - pausable:
                return f"{self.congestion_control} keeps time-based state (--no-skip-cubic)"
            if self.congestion_control not in pausable:
                return f"{self.congestion_control or 'unknown'} keeps time-based state"
            if self.rtt_estimator != SKIP_AWARE_RTT_ESTIMATOR:
                return f"its RTT estimator {self.rtt_estimator or 'unknown'} would count skipped time"
            return None
        if self.kind == FlowKind.ONOFF_UDP:
            return None if self.constant_rate else "OnOff with off periods is bursty"
        if self.kind in SKIPPABLE_RDMA_KINDS:
            return None
        return f"{self.kind} flows are not tracked"


@dataclass(frozen=True)
class FlowResult:
    """What a run produced for one flow: the rows compare and reports are made of."""

    id: int
    kind: str
    src: str
    dst: str
    sport: int
    dport: int
    bytes: int  #: flow size, 0 = unlimited
    start: float
    rx_bytes: int  #: PacketSink::GetTotalRx() at the end of the run
    fct: float | None  #: finish - start, s; None if it did not finish
    credited_bytes: int
    #: How long it takes alone on its idle path (s), as HPCC's fct.txt has it (FlowTracker::GetStandaloneTime).
    standalone_fct: float = 0.0
    #: Mean packet RTT (s) over each 1/20 of its bytes, None where it had no sample (``--rtt``; None if not measured).
    rtt: list[float | None] | None = None
    #: Which of the process's simulations it was in (0, 1, ... at each ``Simulator::Destroy()``), so that
    #: flows of two simulations between the same addresses and ports are told apart.
    simulation: int = 0


@dataclass(frozen=True)
class TrajectoryPoint:
    """A flow's delivered bytes and congestion state at one sampling instant, from the start of its episode."""

    offset_ns: int
    delivered: int
    state: tuple[float, ...]  #: the congestion state's fields of the flow's kind, in order (memo/record.py)
