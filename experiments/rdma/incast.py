r"""N:1 incast of RDMA flows through one switch: DCQCN sanity run.

Topology (every link has the same rate and delay)::

    sender 0 ---\
    sender 1 ----+-- switch ==bottleneck==> receiver
      ...       /
    sender N-1 /

Each sender starts one RDMA WRITE of --flow-mb MB to the receiver at --start-us
(plus i * --stagger-us for sender i), so N flows share the switch port towards the
receiver. Hosts run RdmaNic (DCQCN); the switch runs RdmaSwitchHelper's egress queue
discs (RED as DCQCN's ECN marker, Kmin/Kmax/Pmax from the link rate unless given),
optionally with PFC. --loss drops that fraction of the packets arriving at the
receiver (a RateErrorModel), which go-back-N must recover.

The run lasts --duration-ms (or until every flow completes if that is earlier) and is
sampled every --sample-us: per-flow DCQCN rate, delivered bytes and CNPs, and the
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

from wormhole_ns3 import native
from wormhole_ns3.loader import install_ns_module

#: IPv4 + UDP + BTH + ICRC + PPP bytes around each data payload on the wire.
WIRE_OVERHEAD = 20 + 8 + 12 + 4 + 2
#: An ACK on the wire (PPP, IPv4, UDP, BTH, AETH, ICRC) and HPCC's INT header.
ACK_BYTES = 2 + 20 + 8 + 12 + 4 + 4
INT_BYTES = 62
MB = 10**6


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--senders", type=int, default=2, help="N, the incast degree")
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
                        help="HPCC's T (default: the star's base RTT with a full data packet)")
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
    timeouts: int = 0
    naks: int = 0
    retransmitted: int = 0
    rate_gbps: list[float] = field(default_factory=list)
    delivered_samples: list[int] = field(default_factory=list)
    cnp_samples: list[int] = field(default_factory=list)


def build(ns, args):
    """Create the star, the RDMA stacks and the flows; return (flows, bottleneck qdisc, extras)."""
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
    senders = ns.NodeContainer()
    senders.Create(args.senders)
    receiver = ns.NodeContainer()
    receiver.Create(1)
    switch = ns.NodeContainer()
    switch.Create(1)
    hosts = ns.NodeContainer(senders, receiver)

    stack = ns.InternetStackHelper()
    stack.Install(hosts)
    stack.Install(switch)
    stream = stack.AssignStreams(hosts, 0)
    stream += stack.AssignStreams(switch, stream)

    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(args.rate))
    p2p.SetChannelAttribute("Delay", ns.StringValue(args.delay))
    addresses = ns.Ipv4AddressHelper()
    links = []
    for i in range(args.senders + 1):
        host = senders.Get(i) if i < args.senders else receiver.Get(0)
        devices = p2p.Install(host, switch.Get(0))
        addresses.SetBase(ns.Ipv4Address(f"10.0.{i}.0"), ns.Ipv4Mask("255.255.255.0"))
        addresses.Assign(devices)
        links.append(devices)
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    error_model = None
    if args.loss > 0:
        error_model = ns.CreateObject[ns.RateErrorModel]()
        error_model.SetAttribute("ErrorRate", ns.DoubleValue(args.loss))
        error_model.SetAttribute("ErrorUnit", ns.StringValue("ERROR_UNIT_PACKET"))
        error_model.AssignStreams(stream)
        stream += 1
        links[-1].Get(0).SetAttribute("ReceiveErrorModel", ns.PointerValue(error_model))

    rdma = ns.RdmaHelper()
    rdma.SetNicAttribute("Mtu", ns.UintegerValue(args.mtu))
    rdma.SetNicAttribute("AckInterval", ns.UintegerValue(args.ack_interval))
    rdma.SetNicAttribute("CongestionControl", ns.TypeIdValue(ns.TypeId.LookupByName(f"ns3::{cc_type}")))
    rdma.Install(hosts)

    switches = ns.RdmaSwitchHelper()
    switches.SetBufferSize(int(args.buffer_kb * 1000))
    switches.SetMeanPacketSize(args.mtu + WIRE_OVERHEAD - 2)
    if args.kmin_kb is not None:
        switches.SetEcn(int(args.kmin_kb * 1000), int(args.kmax_kb * 1000), args.pmax)
    if args.cc == "hpcc":
        switches.EnableTelemetry()
    if args.pfc:
        switches.EnablePfc(int(args.xoff_kb * 1000), int(args.xon_kb * 1000),
                           int(args.headroom_kb * 1000))
    roots = switches.Install(switch)
    stream += ns.RdmaSwitchHelper.AssignStreams(roots, stream)
    bottleneck = roots.Get(args.senders)  # the switch port towards the receiver

    helper = ns.RdmaFlowHelper()
    flows = []
    for i in range(args.senders):
        size = int(args.flow_mb * MB)
        start = ns.MicroSeconds(args.start_us + i * args.stagger_us)
        helper.AddFlow(senders.Get(i), receiver.Get(0), size, start)
        flows.append(Flow(id=i, bytes=size))
    return helper, flows, bottleneck, switch.Get(0), error_model


def base_rtt_us(ns, args) -> float:
    """Two hops each way: propagation plus one full data packet and one ACK per hop."""
    if args.base_rtt_us is not None:
        return args.base_rtt_us
    rate = ns.DataRate(args.rate)

    def hop_us(size: int) -> float:
        return rate.CalculateBytesTxTime(size).GetNanoSeconds() / 1000

    delay_us = ns.Time(args.delay).GetNanoSeconds() / 1000
    data = args.mtu + WIRE_OVERHEAD + INT_BYTES
    return 4 * delay_us + 2 * hop_us(data) + 2 * hop_us(ACK_BYTES + INT_BYTES)


def jain(values: list[float]) -> float:
    """Jain's fairness index: 1 when all values are equal, 1/n when one takes everything."""
    total = sum(values)
    squares = sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares else 1.0


def run(args) -> dict:
    ns = install_ns_module()
    native.load()
    helper, flows, bottleneck, switch, error_model = build(ns, args)
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
        flow.timeouts = int(qp.GetNTimeouts())
        flow.naks = int(qp.GetNNaksReceived())
        flow.retransmitted = int(qp.GetPacketsRetransmitted())
        if qp.IsFinished():
            flow.fct_us = (qp.GetFinishTime() - qp.GetStartTime()).GetNanoSeconds() / 1000

    stats = bottleneck.GetStats()
    pfc = switch.GetObject[ns.RdmaPfcSwitch]()
    summary = {
        "drops": int(stats.nTotalDroppedPackets),
        "marks": int(stats.nTotalMarkedPackets),
        "pauses": int(pfc.GetNPausesSent()) if pfc else 0,
        "headroom_drops": int(pfc.GetHeadroomDrops()) if pfc else 0,
        "error_model_drops": _error_model_drops(flows, helper) if error_model else 0,
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


def _error_model_drops(flows, helper) -> int:
    """Packets the receiver never saw: sent by the NIC minus received by the receive QPs."""
    sent = sum(int(helper.GetFlow(f.id).GetPacketsSent()) for f in flows)
    received = sum(int(helper.GetFlow(f.id).GetReceiver().GetPacketsReceived()) for f in flows)
    return sent - received


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
