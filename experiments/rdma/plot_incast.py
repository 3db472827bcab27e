"""Plot an incast run written by ``incast.py --json``: per-flow pacing rate (DCQCN's Rc or
HPCC's W/T) and goodput, bottleneck queue with Kmin/Kmax, CNPs per flow.

    python experiments/rdma/plot_incast.py run.json run.png
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

#: Goodput is averaged over this many samples so single packets do not dominate.
GOODPUT_SMOOTHING = 5


def goodput_gbps(times_us: list[float], delivered: list[int], span: int) -> tuple[list, list]:
    """Delivered-byte rate over windows of ``span`` samples, at each window's end."""
    xs, ys = [], []
    for i in range(span, len(times_us)):
        dt = (times_us[i] - times_us[i - span]) / 1e6
        xs.append(times_us[i] / 1000)
        ys.append((delivered[i] - delivered[i - span]) * 8 / dt / 1e9)
    return xs, ys


def ecn_thresholds_kb(run_args: dict) -> tuple[float, float]:
    """Kmin and Kmax as RdmaSwitchHelper sets them (4 / 16 KB per Gbps unless given)."""
    if run_args.get("kmin_kb") is not None:
        return run_args["kmin_kb"], run_args["kmax_kb"]
    gbps = float(run_args["rate"].lower().removesuffix("gbps"))
    return 4 * gbps, 16 * gbps


def plot(run: dict, output: Path) -> None:
    times_ms = [t / 1000 for t in run["times_us"]]
    flows = run["flows"]
    summary = run["summary"]
    fig, axes = plt.subplots(4, 1, figsize=(8, 10), sharex=True)
    for flow in flows:
        label = f"flow {flow['id']}"
        axes[0].plot(times_ms, flow["rate_gbps"], lw=0.8, label=label)
        axes[1].plot(*goodput_gbps(run["times_us"], flow["delivered_samples"], GOODPUT_SMOOTHING),
                     lw=0.8, label=label)
        axes[3].plot(times_ms, flow["cnp_samples"], lw=0.8, label=label)
    cc = run["args"].get("cc", "dcqcn")
    axes[0].set_ylabel("DCQCN rate Rc (Gb/s)" if cc == "dcqcn" else "HPCC rate W/T (Gb/s)")
    axes[1].set_ylabel("goodput (Gb/s)")
    axes[2].plot(times_ms, [q / 1000 for q in run["queue_bytes"]], lw=0.8, color="k")
    kmin, kmax = ecn_thresholds_kb(run["args"])
    axes[2].axhline(kmin, ls="--", color="tab:green", label="Kmin")
    axes[2].axhline(kmax, ls="--", color="tab:red", label="Kmax")
    axes[2].set_ylabel("bottleneck queue (KB)")
    axes[2].legend(loc="upper right")
    axes[3].set_ylabel("CNPs received")
    axes[3].set_xlabel("time (ms)")
    if len(flows) <= 8:
        axes[0].legend(loc="upper right", ncol=4, fontsize="small")
    title = (f"{cc.upper()} {len(flows)}:1 incast at {run['args']['rate']}: Jain {summary.get('jain', 0):.4f}, "
             f"utilization {summary.get('utilization', 0):.3f}, "
             f"mean queue {summary.get('queue_mean_kb', 0):.0f} KB")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(output, dpi=110)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="JSON written by incast.py --json")
    parser.add_argument("output", type=Path, help="PNG to write")
    args = parser.parse_args(argv)
    plot(json.loads(args.run.read_text()), args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
