"""Run the sanity incasts (DCQCN 2:1 and 8:1 at 100 and 40 Gb/s, HPCC 2:1 and 8:1 at
100 Gb/s), plot each, and write a summary table.

    python experiments/rdma/sanity.py --out experiments/rdma/results

Each case runs incast.py in its own process (one simulator per process) and
plot_incast.py on its samples; ``summary.json`` collects the numbers.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Case:
    """One incast run: its name and incast.py arguments."""

    name: str
    args: tuple[str, ...]


CASES = (
    Case("incast_2to1_100g", ("--senders", "2", "--rate", "100Gbps",
                              "--duration-ms", "40", "--warmup-ms", "20")),
    Case("incast_8to1_100g", ("--senders", "8", "--rate", "100Gbps",
                              "--duration-ms", "60", "--warmup-ms", "30")),
    Case("incast_2to1_40g", ("--senders", "2", "--rate", "40Gbps",
                             "--duration-ms", "40", "--warmup-ms", "20")),
    Case("incast_8to1_40g", ("--senders", "8", "--rate", "40Gbps",
                             "--duration-ms", "60", "--warmup-ms", "30")),
    Case("hpcc_2to1_100g", ("--cc", "hpcc", "--senders", "2", "--rate", "100Gbps",
                            "--duration-ms", "10", "--warmup-ms", "2")),
    Case("hpcc_8to1_100g", ("--cc", "hpcc", "--senders", "8", "--rate", "100Gbps",
                            "--duration-ms", "10", "--warmup-ms", "2")),
)


def run_case(case: Case, out: Path) -> dict:
    samples = out / f"{case.name}.json"
    subprocess.run([sys.executable, str(HERE / "incast.py"), *case.args, "--sample-us", "20",
                    "--json", str(samples)], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, str(HERE / "plot_incast.py"), str(samples),
                    str(out / f"{case.name}.png")], check=True)
    summary = json.loads(samples.read_text())["summary"]
    samples.unlink()  # the samples are large; the plot and the summary stay
    return {"args": " ".join(case.args), **summary}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--only", help="run just the case with this name")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    cases = [c for c in CASES if args.only in (None, c.name)]
    if not cases:
        parser.error(f"no case named {args.only}")
    results = {case.name: run_case(case, args.out) for case in cases}
    summary_file = args.out / "summary.json"
    previous = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    summary_file.write_text(json.dumps({**previous, **results}, indent=1) + "\n")
    for name, result in results.items():
        print(f"{name}: Jain {result['jain']:.4f}  utilization {result['utilization']:.4f}  "
              f"mean queue {result['queue_mean_kb']:.0f} KB  drops {result['drops']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
