r"""N:1 incast of RDMA flows: the DCQCN / HPCC / PFC sanity run.

Topology (every link has the same rate and delay)::

    sender 0 ---\
    sender 1 ----+-- switch ==bottleneck==> receiver
      ...       /
    sender N-1 /

With --leaves L > 1 the senders are spread round robin over L leaf switches whose
uplinks meet at a root switch that holds the receiver (a second tier for PFC to spread
through). Each sender starts one RDMA WRITE of --flow-mb MB to the receiver at
--start-us (plus i * --stagger-us for sender i), so N flows share the root's port
towards the receiver. Hosts run RdmaNic with DCQCN (or HPCC with --cc hpcc); switches
run RdmaSwitchHelper's egress queue discs (RED as DCQCN's ECN marker, Kmin/Kmax/Pmax
from the link rate unless given; INT stamping for HPCC), optionally with PFC. --loss
drops that fraction of the packets arriving at the receiver (a RateErrorModel), which
go-back-N must recover.

The run lasts --duration-ms (or until every flow completes if that is earlier) and is
sampled every --sample-us: per-flow pacing rate, delivered bytes and CNPs, and the
bottleneck queue. Statistics over the window after --warmup-ms: per-flow goodput, Jain's
fairness index, bottleneck utilization (wire bytes / capacity) and the mean queue.
--json writes everything (plot it with plot_incast.py); the summary is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from wormhole_ns3.runtime import native
from wormhole_ns3.runtime.loader import install_ns_module

#: IPv4 + UDP + BTH + ICRC + PPP bytes around each data payload on the wire.
WIRE_OVERHEAD = 20 + 8 + 12 + 4 + 2
#: An ACK on the wire (PPP, IPv4, UDP, BTH, AETH, ICRC) and HPCC's INT header.
ACK_BYTES = 2 + 20 + 8 + 12 + 4 + 4
INT_BYTES = 62
MB = 10**6


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--senders", type=int, default=2, help="N, the incast degree")
    parser.add_argument("--leaves", type=int, default=1,
                        help="senders spread over this many leaf switches under a root switch "
                             "that holds the receiver (1: one switch)")
    parser.add_argument("--rate", default="100Gbps", help="rate of every link")
    parser.add_argument("--delay", default="1us", help="propagation delay of every link")
    parser.add_argument("--flow-mb", type=float, default=1000, help="bytes per flow, in MB")
    parser.add_argument("--start-us", type=float, default=10)
    parser.add_argument("--stagger-us", type=float, default=0, help="start gap between senders")
    parser.add_argument("--duration-ms", type=float, default=5)
    parser.add_argument("--warmup-ms", type=float, default=2,
                        help="statistics cover the run after this time")
    parser.add_argument("--sample-us", type=float, default=10)
    parser.add_argument("--kmin-kb", type=float, help="ECN Kmin (default: 4 KB per Gbps)")
    parser.add_argument("--kmax-kb", type=float, help="ECN Kmax (default: 16 KB per Gbps)")
    parser.add_argument("--pmax", type=float, default=0.2)
    parser.add_argument("--buffer-kb", type=float, default=32000,
                        help="data bytes each switch port may queue")
    parser.add_argument("--pfc", action="store_true", help="enable PFC at the switch")
    parser.add_argument("--xoff-kb", type=float, default=60)
    parser.add_argument("--xon-kb", type=float, default=40)
    parser.add_argument("--headroom-kb", type=float, default=40)
    parser.add_argument("--loss", type=float, default=0.0,
                        help="fraction of packets dropped on arrival at the receiver")
    parser.add_argument("--cc", choices=("dcqcn", "hpcc"), default="dcqcn",
                        help="congestion control of every queue pair")
    parser.add_argument("--base-rtt-us", type=float,
                        help="HPCC's T (default: the base RTT to the receiver with a full "
                             "data packet)")
    parser.add_argument("--ack-interval", type=int, default=1)
    parser.add_argument("--mtu", type=int, default=1000, help="payload bytes per packet")
    parser.add_argument("--cc-attr", action="append", default=[], metavar="NAME=VALUE",
                        help="set an attribute of the congestion control (repeatable)")
    parser.add_argument("--nic-attr", action="append", default=[], metavar="NAME=VALUE",
                        help="set an attribute of ns3::RdmaNic (repeatable)")
    parser.add_argument("--json", type=Path, help="write samples and results here")
    args = parser.parse_args(argv)
    if args.senders < 1:
        parser.error("--senders must be at least 1")
    if not 1 <= args.leaves <= args.senders:
        parser.error("--leaves must be between 1 and --senders")
    if args.warmup_ms >= args.duration_ms:
        parser.error("--warmup-ms must be below --duration-ms")
    if (args.kmin_kb is None) != (args.kmax_kb is None):
        parser.error("give both --kmin-kb and --kmax-kb, or neither")
    if not 0 <= args.loss < 1:
        parser.error("--loss must be in [0, 1)")
    return args


@dataclass
class Flow:
    """One sender's flow, and what sampling saw of it."""

    id: int
    bytes: int
    delivered: int = 0
    fct_us: float | None = None
    cnps: int = 0
    marked: int = 0
    acks: int = 0
    timeouts: int = 0
    naks: int = 0
    retransmitted: int = 0
    rate_gbps: list[float] = field(default_factory=list)
    delivered_samples: list[int] = field(default_factory=list)
    cnp_samples: list[int] = field(default_factory=list)


@dataclass
class Network:
    """What a run needs from the built simulation."""

    helper: object  # ns3::RdmaFlowHelper
    flows: list[Flow]
    bottleneck: object  # the RdmaEgressQueueDisc towards the receiver
    senders: object  # NodeContainer
    switches: object  # NodeContainer; the last one is the root


def configure(ns, args) -> str:
    """Seed, congestion control and attribute defaults; return the congestion-control type."""
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    cc_type = "RdmaHpcc" if args.cc == "hpcc" else "RdmaDcqcn"
    if args.cc == "hpcc":
        ns.Config.SetDefault("ns3::RdmaHpcc::BaseRtt",
                             ns.TimeValue(ns.MicroSeconds(base_rtt_us(ns, args))))
    for type_name, settings in ((cc_type, args.cc_attr), ("RdmaNic", args.nic_attr)):
        for setting in settings:
            name, _, value = setting.partition("=")
            ns.Config.SetDefault(f"ns3::{type_name}::{name}", ns.StringValue(value))
    return cc_type


def build(ns, args) -> Network:
    """Create the hosts, switches, links, RDMA stacks and flows."""
    cc_type = configure(ns, args)
    senders = ns.NodeContainer()
    senders.Create(args.senders)
    receiver = ns.NodeContainer()
    receiver.Create(1)
    switches = ns.NodeContainer()
    switches.Create(args.leaves + 1 if args.leaves > 1 else 1)
    root = switches.Get(switches.GetN() - 1)
    hosts = ns.NodeContainer(senders, receiver)

    stack = ns.InternetStackHelper()
    stack.Install(hosts)
    stack.Install(switches)
    stream = stack.AssignStreams(hosts, 0)
    stream += stack.AssignStreams(switches, stream)

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
    p2p.SetChannelAttribute("Delay", ns.StringValue(args.delay))
    addresses = ns.Ipv4AddressHelper()

    def link(a, b, subnet: int):
        devices = p2p.Install(a, b)
        addresses.SetBase(ns.Ipv4Address(f"10.{subnet // 256}.{subnet % 256}.0"),
                          ns.Ipv4Mask("255.255.255.0"))
        addresses.Assign(devices)
        return devices

    for i in range(args.senders):
        link(senders.Get(i), switches.Get(i % args.leaves) if args.leaves > 1 else root, i)
    for leaf in range(args.leaves if args.leaves > 1 else 0):
        link(switches.Get(leaf), root, args.senders + 1 + leaf)
    to_receiver = link(receiver.Get(0), root, args.senders)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    if args.loss > 0:
        error_model = ns.CreateObject[ns.RateErrorModel]()
        error_model.SetAttribute("ErrorRate", ns.DoubleValue(args.loss))
        error_model.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        stream += error_model.AssignStreams(stream)
        to_receiver.Get(0).SetAttribute("ReceiveErrorModel", ns.PointerValue(error_model))

    rdma = ns.RdmaHelper()
    rdma.SetNicAttribute("Mtu", ns.UintegerValue(args.mtu))
    rdma.SetNicAttribute("AckInterval", ns.UintegerValue(args.ack_interval))
    rdma.SetNicAttribute("CongestionControl",
                         ns.TypeIdValue(ns.TypeId.LookupByName(f"ns3::{cc_type}")))
    rdma.Install(hosts)

    switch_helper = ns.RdmaSwitchHelper()
    switch_helper.SetBufferSize(int(args.buffer_kb * 1000))
    switch_helper.SetMeanPacketSize(args.mtu + WIRE_OVERHEAD - 2)
    if args.kmin_kb is not None:
        switch_helper.SetEcn(int(args.kmin_kb * 1000), int(args.kmax_kb * 1000), args.pmax)
    if args.cc == "hpcc":
        switch_helper.EnableTelemetry()
    if args.pfc:
        switch_helper.EnablePfc(int(args.xoff_kb * 1000), int(args.xon_kb * 1000),
                                int(args.headroom_kb * 1000))
    stream += ns.RdmaSwitchHelper.AssignStreams(switch_helper.Install(switches), stream)
    traffic_control = root.GetObject[ns.TrafficControlLayer]()
    bottleneck = traffic_control.GetRootQueueDiscOnDevice(to_receiver.Get(1))

    helper = ns.RdmaFlowHelper()
    flows = []
    for i in range(args.senders):
        size = int(args.flow_mb * MB)
        start = ns.MicroSeconds(args.start_us + i * args.stagger_us)
        helper.AddFlow(senders.Get(i), receiver.Get(0), size, start)
        flows.append(Flow(id=i, bytes=size))
    return Network(helper, flows, bottleneck, senders, switches)


def base_rtt_us(ns, args) -> float:
    """Propagation plus one full data packet and one ACK per hop, over every hop."""
    if args.base_rtt_us is not None:
        return args.base_rtt_us
    rate = ns.DataRate(args.rate)

    def hop_us(size: int) -> float:
        return rate.CalculateBytesTxTime(size).GetNanoSeconds() / 1000

    hops = 2 if args.leaves == 1 else 3
    delay_us = ns.Time(args.delay).GetNanoSeconds() / 1000
    data = args.mtu + WIRE_OVERHEAD + INT_BYTES
    return hops * (2 * delay_us + hop_us(data) + hop_us(ACK_BYTES + INT_BYTES))


def jain(values: list[float]) -> float:
    """Jain's fairness index: 1 when all values are equal, 1/n when one takes everything."""
    total = sum(values)
    squares = sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares else 1.0


def run(args) -> dict:
    ns = install_ns_module()
    native.load()
    network = build(ns, args)
    helper, flows, bottleneck = network.helper, network.flows, network.bottleneck
    capacity_bps = ns.DataRate(args.rate).GetBitRate()

    times_us, queue_bytes, wire_bytes = [], [], []
    step = ns.MicroSeconds(args.sample_us)
    end_us = args.duration_ms * 1000
    now_us = 0.0
    while now_us < end_us - 1e-9:
        ns.Simulator.Stop(step)
        ns.Simulator.Run()
        now_us = ns.Simulator.Now().GetMicroSeconds()
        times_us.append(now_us)
        queue_bytes.append(int(bottleneck.GetNBytes()))
        stats = bottleneck.GetStats()
        wire_bytes.append(int(stats.nTotalDequeuedBytes) + 2 * int(stats.nTotalDequeuedPackets))
        for flow in flows:
            qp = helper.GetFlow(flow.id)
            flow.rate_gbps.append(qp.GetRate().GetBitRate() / 1e9 if qp.IsStarted() else 0.0)
            flow.delivered_samples.append(int(qp.GetDeliveredBytes()))
            flow.cnp_samples.append(int(qp.GetNCnpsReceived()))
        if helper.GetNFinished() == len(flows):
            break

    for flow in flows:
        qp = helper.GetFlow(flow.id)
        flow.delivered = int(qp.GetDeliveredBytes())
        flow.cnps = int(qp.GetNCnpsReceived())
        flow.marked = int(qp.GetReceiver().GetPacketsMarked())
        flow.acks = int(qp.GetReceiver().GetNAcksSent())
        flow.timeouts = int(qp.GetNTimeouts())
        flow.naks = int(qp.GetNNaksReceived())
        flow.retransmitted = int(qp.GetPacketsRetransmitted())
        if qp.IsFinished():
            flow.fct_us = (qp.GetFinishTime() - qp.GetStartTime()).GetNanoSeconds() / 1000

    stats = bottleneck.GetStats()
    summary = {
        "drops": sum(int(node_drops(ns, network.switches.Get(i)))
                     for i in range(network.switches.GetN())),
        "marks": int(stats.nTotalMarkedPackets),
        # lost, or still in flight if the run stopped before the flows completed
        "packets_not_received": sum(
            int(helper.GetFlow(f.id).GetPacketsSent())
            - int(helper.GetFlow(f.id).GetReceiver().GetPacketsReceived()) for f in flows),
        **pfc_statistics(ns, network),
        **window_statistics(args, times_us, queue_bytes, wire_bytes, flows, capacity_bps),
    }
    ns.Simulator.Destroy()
    return {
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "times_us": times_us,
        "queue_bytes": queue_bytes,
        "flows": [asdict(flow) for flow in flows],
        "summary": summary,
    }


def node_drops(ns, switch) -> int:
    """Packets dropped by the egress queue discs of one switch."""
    traffic_control = switch.GetObject[ns.TrafficControlLayer]()
    return sum(
        traffic_control.GetRootQueueDiscOnDevice(switch.GetDevice(d)).GetStats().nTotalDroppedPackets
        for d in range(1, switch.GetNDevices()))  # device 0 is the loopback


def pfc_statistics(ns, network: Network) -> dict:
    """PAUSEs sent, headroom drops, the fullest ingress port, and how long ports were paused."""
    switches = [network.switches.Get(i) for i in range(network.switches.GetN())]
    buffers = [s.GetObject[ns.RdmaPfcSwitch]() for s in switches]
    if not any(buffers):
        return {"pauses": 0}

    def paused_us(nodes) -> float:
        return sum(node.GetDevice(d).GetObject[ns.RdmaPfcPort]().GetPausedTime().GetNanoSeconds()
                   for node in nodes for d in range(1, node.GetNDevices())) / 1000

    return {
        "pauses": sum(int(b.GetNPausesSent()) for b in buffers),
        "headroom_drops": sum(int(b.GetHeadroomDrops()) for b in buffers),
        "max_ingress_kb": max(int(b.GetMaxIngressBytes()) for b in buffers) / 1000,
        "host_paused_us": paused_us(
            [network.senders.Get(i) for i in range(network.senders.GetN())]),
        "switch_paused_us": paused_us(switches),
    }


def window_statistics(args, times_us, queue_bytes, wire_bytes, flows, capacity_bps) -> dict:
    """Goodput, fairness, utilization and queue over the samples after the warm-up."""
    first = next((i for i, t in enumerate(times_us) if t >= args.warmup_ms * 1000), None)
    if first is None or first == len(times_us) - 1:
        return {"window_us": 0}
    last = len(times_us) - 1
    seconds = (times_us[last] - times_us[first]) / 1e6
    goodput = [
        (f.delivered_samples[last] - f.delivered_samples[first]) * 8 / seconds / 1e9
        for f in flows
    ]
    queue = queue_bytes[first:last + 1]
    return {
        "window_us": times_us[last] - times_us[first],
        "goodput_gbps": goodput,
        "jain": jain(goodput),
        "utilization": (wire_bytes[last] - wire_bytes[first]) * 8 / seconds / capacity_bps,
        "queue_mean_kb": sum(queue) / len(queue) / 1000,
        "queue_max_kb": max(queue) / 1000,
        "cnps_in_window": [f.cnp_samples[last] - f.cnp_samples[first] for f in flows],
    }


def main(argv=None) -> int:
    args = parse_args(argv)
    result = run(args)
    if args.json:
        args.json.write_text(json.dumps(result))
    summary = result["summary"]
    print(json.dumps({"summary": summary, "flows": [
        {k: v for k, v in f.items() if not isinstance(v, list)} for f in result["flows"]]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
