"""Credit (and optionally take back, or time-shift) RDMA flows of an incast mid-run, then let them finish.

Builds experiments/rdma/incast.py's star, runs to --at-us, then for every flow calls
RdmaQueuePair::Credit(--credit-bytes), then Uncredit(--uncredit-bytes) (a skip cut
short), and, for flow 0 only, ShiftTimes(--shift-us), and runs until every flow
completes. Prints one JSON object: per flow the counters just before and just after,
the bytes credited and taken back, the final delivered bytes and the FCT.
"""

import argparse
import importlib.util
import json
import sys
from pathlib import Path

from wormhole_ns3.runtime import native
from wormhole_ns3.runtime.loader import install_ns_module

INCAST = Path(__file__).resolve().parents[2] / "experiments" / "rdma" / "incast.py"


def load_incast():
    spec = importlib.util.spec_from_file_location("rdma_incast", INCAST)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def counters(qp) -> dict:
    return {
        "sent": int(qp.GetBytesSent()),
        "acked": int(qp.GetBytesAcked()),
        "delivered": int(qp.GetDeliveredBytes()),
        "rate_bps": int(qp.GetRate().GetBitRate()),
        "target_bps": int(qp.GetTargetRate().GetBitRate()),
        "alpha": float(qp.GetAlpha()),
        "source_port": int(qp.GetSourcePort()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at-us", type=float, default=300)
    parser.add_argument("--credit-bytes", type=int, default=1_000_000)
    parser.add_argument("--uncredit-bytes", type=int, default=0)
    parser.add_argument("--shift-us", type=float, default=0)
    parser.add_argument("incast_args", nargs=argparse.REMAINDER,
                        help="arguments for incast.py after --")
    args = parser.parse_args()
    incast = load_incast()
    run_args = incast.parse_args([a for a in args.incast_args if a != "--"])

    ns = install_ns_module()
    native.load()
    network = incast.build(ns, run_args)
    helper, flows = network.helper, network.flows
    ns.Simulator.Stop(ns.MicroSeconds(args.at_us))
    ns.Simulator.Run()
    report = []
    for flow in flows:
        qp = helper.GetFlow(flow.id)
        before = counters(qp)
        credited = int(qp.Credit(args.credit_bytes))
        taken_back = int(qp.Uncredit(args.uncredit_bytes))
        if flow.id == 0 and args.shift_us:
            qp.ShiftTimes(ns.MicroSeconds(args.shift_us))
        report.append({"id": flow.id, "size": flow.bytes, "before": before, "credited": credited,
                       "taken_back": taken_back, "after": counters(qp)})
    ns.Simulator.Stop(ns.MilliSeconds(run_args.duration_ms))
    ns.Simulator.Run()
    for entry in report:
        qp = helper.GetFlow(entry["id"])
        entry["final_delivered"] = int(qp.GetDeliveredBytes())
        entry["final_acked"] = int(qp.GetBytesAcked())
        entry["finished"] = bool(qp.IsFinished())
        entry["acknowledged"] = bool(qp.IsAcknowledged())
        entry["fct_us"] = (qp.GetFinishTime() - qp.GetStartTime()).GetNanoSeconds() / 1000
        entry["credited_total"] = int(qp.GetCreditedBytes())
    ns.Simulator.Destroy()
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
