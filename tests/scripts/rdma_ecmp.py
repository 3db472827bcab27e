"""RDMA flows between two leaves of a 2-leaf, 2-spine fabric with flow-hash ECMP:
prints, as JSON, each flow's UDP source port and delivered bytes and the data bytes
each spine forwarded."""

import argparse
import json
import sys

from wormhole_ns3.runtime import native
from wormhole_ns3.runtime.loader import install_ns_module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=8)
    parser.add_argument("--bytes", type=int, default=200_000)
    args = parser.parse_args()
    ns = install_ns_module()
    native.load()
    ns.RngSeedManager.SetSeed(1)

    senders, receivers, leaves, spines = (ns.NodeContainer() for _ in range(4))
    senders.Create(args.flows)
    receivers.Create(args.flows)
    leaves.Create(2)
    spines.Create(2)
    stack = ns.InternetStackHelper()
    stack.SetRoutingHelper(ns.FlowHashEcmpRoutingHelper())
    for group in (senders, receivers, leaves, spines):
        stack.Install(group)
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue("100Gbps"))
    p2p.SetChannelAttribute("Delay", ns.StringValue("1us"))
    addresses = ns.Ipv4AddressHelper()
    subnet = 0

    def link(a, b):
        nonlocal subnet
        devices = p2p.Install(a, b)
        addresses.SetBase(ns.Ipv4Address(f"10.{subnet // 256}.{subnet % 256}.0"),
                          ns.Ipv4Mask("255.255.255.0"))
        addresses.Assign(devices)
        subnet += 1
        return devices

    for i in range(args.flows):
        link(senders.Get(i), leaves.Get(0))
        link(receivers.Get(i), leaves.Get(1))
    for leaf in range(2):
        for spine in range(2):
            link(leaves.Get(leaf), spines.Get(spine))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()

    ns.RdmaHelper().Install(ns.NodeContainer(senders, receivers))
    switch_helper = ns.RdmaSwitchHelper()
    roots = switch_helper.Install(ns.NodeContainer(leaves, spines))
    ns.RdmaSwitchHelper.AssignStreams(roots, 0)

    flows = ns.RdmaFlowHelper()
    for i in range(args.flows):
        flows.AddFlow(senders.Get(i), receivers.Get(i), args.bytes, ns.MicroSeconds(1))
    ns.Simulator.Run()

    def forwarded(spine) -> int:
        """Bytes of the data class (class 1 of each egress queue disc) the spine sent."""
        tc = spine.GetObject[ns.TrafficControlLayer]()
        return sum(int(tc.GetRootQueueDiscOnDevice(spine.GetDevice(d)).GetQueueDiscClass(1)
                       .GetQueueDisc().GetStats().nTotalDequeuedBytes)
                   for d in range(1, spine.GetNDevices()))

    report = {
        "flows": [{"port": int(flows.GetFlow(i).GetSourcePort()),
                   "delivered": int(flows.GetFlow(i).GetDeliveredBytes())}
                  for i in range(args.flows)],
        "spine_bytes": [forwarded(spines.Get(s)) for s in range(2)],
    }
    ns.Simulator.Destroy()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
