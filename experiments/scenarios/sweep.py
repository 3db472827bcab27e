"""Compare plain ns-3 and the accelerator on N generated scenarios; report the distribution of their errors.

    python experiments/scenarios/sweep.py --scenarios 50 --seed 1 --jobs 1 --out sweep/

Scenario i is ``generator.generate(seed, i)``. For each, its spec is written to
``OUT/specs/i.json`` and ``wormhole-ns3 compare --json OUT/runs/i.json --trace
OUT/runs/i.skips.csv scenario.py --spec OUT/specs/i.json`` runs (default settings:
plain ns-3, then accelerated), its output in ``OUT/runs/i.log``. Then ``OUT/scenarios.csv``,
``OUT/summary.json`` and ``OUT/errors.png`` (distribution.py) are written over all N.

Resumable: a scenario whose comparison JSON exists is read, not run again (compare
writes it whole, after everything else, so it exists only for a finished scenario);
a failed one is run again; a sweep killed takes its running comparison with it. A
folder holding specs of another seed or generator is refused rather than mixed in.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from distribution import Failure, plot, summary, summary_text, write_markdown, write_summary, write_table
from generator import PACKET_HOP_BUDGET, generate
from outcome import Outcome
from spec import ScenarioSpec, SpecError, load

from wormhole_ns3.tools.experiment.child import die_with_parent_hook

SCRIPT = Path(__file__).resolve().with_name("scenario.py")


class SweepError(Exception):
    """A sweep that cannot go on; the message names the problem in one line."""


@dataclass(frozen=True)
class ScenarioFiles:
    """Where scenario ``index`` of a sweep keeps its spec and results."""

    spec: Path
    comparison: Path
    trace: Path
    log: Path

    @classmethod
    def of(cls, out: Path, index: int) -> ScenarioFiles:
        stem = f"{index:04d}"
        return cls(spec=out / "specs" / f"{stem}.json", comparison=out / "runs" / f"{stem}.json",
                   trace=out / "runs" / f"{stem}.skips.csv", log=out / "runs" / f"{stem}.log")


@dataclass(frozen=True)
class Sweep:
    scenarios: int
    seed: int
    jobs: int
    out: Path
    timeout_s: float
    #: Each scenario's data packets times their hops at most (generator.PACKET_HOP_BUDGET by default).
    budget: int

    def prepare(self, index: int) -> tuple[ScenarioSpec, ScenarioFiles]:
        """Scenario ``index``'s spec, written to its file, or checked against the one a previous sweep wrote."""
        spec = generate(self.seed, index, self.budget)
        files = ScenarioFiles.of(self.out, index)
        if files.spec.exists():
            try:
                kept = load(files.spec)
            except SpecError as error:
                raise SweepError(f"{error}: remove it to run that scenario again") from None
            if kept != spec:
                raise SweepError(f"{files.spec} holds another scenario ({kept.name}, not {spec.name}): "
                                 f"{self.out} was made with another seed or generator; use another --out")
        else:
            partial = files.spec.with_name(files.spec.name + ".partial")
            partial.write_text(spec.to_json())
            partial.replace(files.spec)
        return spec, files

    def run(self, index: int, spec: ScenarioSpec, files: ScenarioFiles) -> Outcome | Failure:
        """Scenario ``index`` compared (or its earlier comparison read)."""
        if not files.comparison.exists():
            command = [sys.executable, "-m", "wormhole_ns3", "compare", "--json", str(files.comparison),
                       "--trace", str(files.trace), str(SCRIPT), "--spec", str(files.spec)]
            with files.log.open("w") as log:
                try:
                    code = subprocess.run(command, stdout=log, stderr=subprocess.STDOUT, timeout=self.timeout_s,
                                          preexec_fn=die_with_parent_hook()).returncode
                except subprocess.TimeoutExpired:
                    return Failure(index, spec.name, f"compare ran over {self.timeout_s:g} s (see {files.log})")
            if code != 0 or not files.comparison.exists():
                return Failure(index, spec.name, f"compare exited with {code}: {_last_line(files.log)}")
        outcome = Outcome.read(index, spec, files.comparison, files.trace)
        baseline, accelerated = outcome.flows_finished
        if baseline != accelerated:
            return Failure(index, spec.name, f"plain ns-3 finished {baseline} flows, the accelerated run {accelerated}")
        return outcome

    def execute(self) -> tuple[list[Outcome], list[Failure]]:
        for folder in ("specs", "runs"):
            (self.out / folder).mkdir(parents=True, exist_ok=True)
        prepared = [self.prepare(index) for index in range(self.scenarios)]
        results: dict[int, Outcome | Failure] = {}
        with ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = {pool.submit(self.run, index, spec, files): index
                       for index, (spec, files) in enumerate(prepared)}
            for future in as_completed(futures):
                index = futures[future]
                results[index] = future.result()
                print(f"[{len(results)}/{self.scenarios}] {_progress_line(results[index])}", flush=True)
        ordered = [results[index] for index in sorted(results)]
        return ([r for r in ordered if isinstance(r, Outcome)], [r for r in ordered if isinstance(r, Failure)])


def _last_line(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _progress_line(result: Outcome | Failure) -> str:
    if isinstance(result, Failure):
        return f"{result.name}: FAILED: {result.reason}"
    p = result.spec.parameters()
    return (f"{result.spec.name} {p['topology']} {p['transport']} {p['red_kind']} {p['flows']} flows: "
            f"FCT error max {result.fct_max:.3%} mean {result.fct_mean:.3%}, PacketSink "
            f"{'exact' if result.rx_bytes_exact else 'DIFFER'}, events {result.events_ratio:.1f}x fewer, "
            f"Run() {result.speedup:.1f}x")


def parse_args(argv: list[str] | None = None) -> Sweep:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", type=int, required=True, help="how many scenarios (0 .. N-1)")
    parser.add_argument("--seed", type=int, required=True, help="the generator's seed")
    parser.add_argument("--jobs", type=int, default=1, help="comparisons run at once (each runs one ns-3 at a time)")
    parser.add_argument("--out", type=Path, required=True, help="folder of the sweep (created; resumed if it exists)")
    parser.add_argument("--budget", type=int, default=PACKET_HOP_BUDGET,
                        help=f"each scenario's data packets times their hops at most (default {PACKET_HOP_BUDGET:,}: "
                             "plain ns-3 runs the largest in about 30 s)")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds one comparison may take (default 3600)")
    args = parser.parse_args(argv)
    for name in ("scenarios", "jobs", "budget"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    if args.timeout <= 0:
        parser.error(f"--timeout must be positive, got {args.timeout:g}")
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} exists and is not a folder")
    return Sweep(args.scenarios, args.seed, args.jobs, args.out, args.timeout, args.budget)


def main(argv: list[str] | None = None) -> int:
    sweep = parse_args(argv)
    try:
        outcomes, failures = sweep.execute()
    except SweepError as error:
        print(f"sweep.py: error: {error}", file=sys.stderr)
        return 2
    document = summary(sweep.seed, outcomes, failures)
    write_table(outcomes, sweep.out / "scenarios.csv")
    write_summary(document, sweep.out / "summary.json")
    plot(outcomes, sweep.out / "errors.png", f"{len(outcomes)} generated scenarios (seed {sweep.seed})")
    write_markdown(document, sweep.out / "summary.md")
    print(summary_text(document))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
