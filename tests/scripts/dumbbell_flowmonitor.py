"""The demo dumbbell with a FlowMonitor: prints FlowMonitor's per-flow statistics.

Usage: dumbbell_flowmonitor.py [dumbbell options]; stops at 0.3 s simulated.
"""

import importlib.util
import sys
from pathlib import Path

from ns import ns

EXAMPLE = Path(__file__).resolve().parents[2] / "wormhole_ns3" / "examples" / "dctcp_dumbbell.py"
spec = importlib.util.spec_from_file_location("dumbbell", EXAMPLE)
dumbbell = importlib.util.module_from_spec(spec)
spec.loader.exec_module(dumbbell)

args = dumbbell.parse_args()
ns.RngSeedManager.SetSeed(1)
ns.RngSeedManager.SetRun(1)
dumbbell.configure_tcp(args.del_ack_count)
senders, receivers, addresses = dumbbell.build_topology(args.flows, args.rate, args.delay)
dumbbell.install_flows(senders, receivers, addresses, args)
helper = ns.FlowMonitorHelper()
monitor = helper.InstallAll()
ns.Simulator.Stop(ns.Seconds(0.3))
ns.Simulator.Run()
monitor.CheckForLostPackets()
classifier = ns.DynamicCast[ns.Ipv4FlowClassifier](helper.GetClassifier())
for flow_id, stats in monitor.GetFlowStats():
    t = classifier.FindFlow(flow_id)
    mean_delay = stats.delaySum.GetSeconds() / max(stats.rxPackets, 1)
    print(flow_id, t.sourcePort, t.destinationPort, stats.txPackets, stats.rxPackets,
          stats.rxBytes, stats.lostPackets, f"{mean_delay:.9f}")
ns.Simulator.Destroy()
sys.exit(0)
