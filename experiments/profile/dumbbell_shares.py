"""How plain ns-3 shares the demo dumbbell's bottleneck over time: the ground truth a skip credits.

Runs ``wormhole_ns3/examples/dctcp_dumbbell.py`` in plain ns-3 (no accelerator),
reads every PacketSink's received bytes each ``--period`` seconds from a C++
event (so Python is not called per sample), and writes one CSV row per sample:
the time and each flow's bytes. With ``--table``, it then prints each flow's
rate over bins of ``--bin`` seconds as a multiple of the fair share of the
flows active in that bin (a flow counts in a bin if it started before the
bin's end and had not received all its bytes at its start).

    python experiments/profile/dumbbell_shares.py --out results/shares.csv --table
    python experiments/profile/dumbbell_shares.py --out results/shares.csv --table -- --stagger-ms 3

Arguments after ``--`` go to the dumbbell script. A run of the default
dumbbell takes as long as plain ns-3 does (minutes).
"""

from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass
from pathlib import Path

SAMPLER = r"""
#include <vector>
namespace dumbbell_shares {
std::vector<ns3::Ptr<ns3::PacketSink>> sinks;
std::vector<double> times;
std::vector<std::vector<uint64_t>> received;
double period = 0;
double until = 0;
void Sample()
{
    std::vector<uint64_t> row;
    for (auto& sink : sinks) { row.push_back(sink->GetTotalRx()); }
    times.push_back(ns3::Simulator::Now().GetSeconds());
    received.push_back(row);
    if (ns3::Simulator::Now().GetSeconds() + period <= until) {
        ns3::Simulator::Schedule(ns3::Seconds(period), &Sample);
    }
}
}
"""


def parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    split = argv.index("--") if "--" in argv else len(argv)
    own, script = argv[:split], argv[split + 1:]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="CSV to write: time, then each flow's bytes")
    parser.add_argument("--period", type=float, default=0.0005, help="seconds between samples")
    parser.add_argument("--until", type=float, default=3.0,
                        help="last sample time (s); must pass the last flow's end")
    parser.add_argument("--table", action="store_true", help="print each flow's share per bin")
    parser.add_argument("--bin", type=float, default=0.002, help="seconds per row of --table")
    return parser.parse_args(own), script


@dataclass
class Shares:
    """Every flow's received bytes at each sample time, with the flows' sizes and start times."""

    times: list[float]
    received: list[list[int]]
    sizes: list[int]
    starts: list[float]


def sample(script_args: list[str], period: float, until: float) -> Shares:
    """Run the dumbbell in plain ns-3, reading every sink's bytes each ``period`` until ``until``."""
    import cppyy
    from ns import ns

    from wormhole_ns3.examples import dctcp_dumbbell as dumbbell

    ns.PacketSink  # noqa: B018 (loads the applications module before the sampler is compiled)
    cppyy.cppdef(SAMPLER)
    sampler = cppyy.gbl.dumbbell_shares
    sampler.period, sampler.until = period, until
    sys.argv = ["dctcp_dumbbell.py", *script_args]
    args = dumbbell.parse_args()
    install = dumbbell.install_flows

    def install_sampled(*install_args):
        sinks = install(*install_args)
        for sink in sinks:
            sampler.sinks.push_back(sink)
        ns.Simulator.Schedule(ns.Seconds(dumbbell.FIRST_START_S), sampler.Sample)
        return sinks

    dumbbell.install_flows = install_sampled
    dumbbell.main()
    sizes = [dumbbell.flow_bytes(i, args.flows, args.min_mb, args.max_mb) for i in range(args.flows)]
    starts = [dumbbell.FIRST_START_S + i * args.stagger_ms / 1000.0 for i in range(args.flows)]
    return Shares(list(sampler.times), [list(row) for row in sampler.received], sizes, starts)


def share_table(shares: Shares, bin_s: float, period: float) -> list[str]:
    """Each flow's rate over each bin, as a multiple of the fair share of the flows active in it."""
    times, received, sizes, starts = shares.times, shares.received, shares.sizes, shares.starts
    step = max(1, round(bin_s / period))
    lines = [f"{'time (s)':>9} {'flows':>5} {'Gb/s':>6}  " + " ".join(f"{f'f{i}':>5}" for i in range(len(sizes)))]
    for k in range(0, len(times) - step, step):
        span = times[k + step] - times[k]
        rates = [(after - before) / span for before, after in zip(received[k], received[k + step])]
        active = [i for i in range(len(sizes)) if starts[i] < times[k + step] and received[k][i] < sizes[i]]
        if not active:
            continue
        fair = sum(rates) / len(active)
        cells = [f"{rates[i] / fair:5.2f}" if i in active else f"{'-':>5}" for i in range(len(sizes))]
        lines.append(f"{times[k]:9.4f} {len(active):5d} {sum(rates) * 8e-9:6.2f}  " + " ".join(cells))
    return lines


def main(argv: list[str]) -> None:
    args, script_args = parse_args(argv)
    shares = sample(script_args, args.period, args.until)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["time"] + [f"flow{i}" for i in range(len(shares.sizes))])
        writer.writerows([f"{t:.6f}", *row] for t, row in zip(shares.times, shares.received))
    if args.table:
        print("\n".join(share_table(shares, args.bin, args.period)))


if __name__ == "__main__":
    main(sys.argv[1:])
