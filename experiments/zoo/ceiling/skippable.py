r"""How many events any skipper or memo could save on a script: the ceiling, measured.

A steady skip is sound only while a partition's flow set (the flows tied
together by shared links, ``accel/partitioner.py``) stays unchanged, and only
once its flows have converged and a judge has seen them so. A transient memo
hit needs a partition's transient to repeat an earlier one: the same flows
at the same offsets from its change; a whole-episode replay needs a whole
episode (flows tied together from opening to idle links) to repeat. This
tool measures what those conditions leave on a run, whatever the judge:

``record``
    runs the script accelerated with nothing skipped or replayed
    (``--no-memo --min-skip-samples 1e12``: its events are plain ns-3's) and writes
    one row per partition lifetime, from the flow event that formed it to the
    one that changed its active flows: its flows and the events its flows'
    tags ran in between (``Partitioner.class_events``, read at both ends; a
    read, no decision). Also the run's ``run.json``.
``analyze``
    reads them: the lifetimes' lengths weighted by their events; the oracle
    bound, the share of events after ``T_conv + window`` in every lifetime
    (events taken as spread evenly over a lifetime), as the best events ratio
    ``1 / (1 - share)``; and the memo ceilings, the events of lifetimes and of
    episodes that repeat an earlier one's flows and offsets.
``convergence``
    measures ``T_conv`` in plain ns-3, from the DCTCP dumbbell's shares
    (``experiments/profile/dumbbell_shares.py``'s CSV): after each flow arrival
    or departure, how long until every active flow's rate (over bins of
    ``--bin``) is within ``--tolerance`` of the active flows' mean and stays
    there until the next change.

    python experiments/zoo/ceiling/skippable.py record --out sk/two-rings experiments/zoo/two_rings.py --mb 2
    python experiments/zoo/ceiling/skippable.py analyze sk/two-rings --t-conv 0.002
    python experiments/profile/dumbbell_shares.py --out shares.csv --period 0.00001 --until 0.2 -- \
        --rate 10Gbps --delay 1us --flows 4 --min-mb 10 --max-mb 20 --stagger-ms 2
    python experiments/zoo/ceiling/skippable.py convergence shares.csv --bin 0.0001
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wormhole_ns3.accel.partitioner import Partitioner, PartitionState

#: ``record``'s runs: no replay, and no skip is ever long enough to make (the partitions are formed and judged
#: as by default, but nothing is skipped), so the rows' events are plain ns-3's.
RECORD_OPTIONS = ("--no-memo", "--min-skip-samples", "1e12")
#: Multiples of the measured ``T_conv`` the bound is reported at, besides 0.
T_CONV_MULTIPLES = (0.5, 1.0, 2.0, 4.0)
#: Tolerances (s) of the offsets a repeat must match: exact to the ns, to 1 us, to 10 us.
OFFSET_TOLERANCES = (1e-9, 1e-6, 1e-5)
#: Events ratios whose longest dead time (``T_conv`` + window) is reported: the issue's 5x, and 2x.
TARGETS = (2.0, 5.0)
#: Lifetime lengths (s) the event shares are reported above.
LENGTHS = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2)


@dataclass(frozen=True)
class Lifetime:
    """One partition with unchanged active flows, from the flow event that formed it to the next change."""

    simulation: int
    start: float
    end: float
    flows: tuple[int, ...]
    events: int

    @property
    def length(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Flow:
    """What makes a flow the same flow in a later iteration: its endpoints, port and size; and when it started."""

    simulation: int
    id: int
    identity: tuple[str, str, int, int]
    start: float


# ------------------------------------------------------------------ record

class LifetimeLog:
    """The lifetimes of a run's partitions, read from the partitioner after each of its repartitions.

    A partition still open when its simulation ends (a flow that never finished) is not a row.
    """

    def __init__(self) -> None:
        self.rows: list[Lifetime] = []
        #: The partitions open now, by their state's id: (partitioner, state, formed at, events then).
        self._open: dict[int, tuple[Partitioner, PartitionState, float, int]] = {}
        #: Each simulation's partitioner, in the order they first repartitioned (kept: an id is not reused).
        self._partitioners: list[Partitioner] = []

    def observe(self, partitioner: Partitioner, now: float) -> None:
        """Close the partitions the repartition retired and open the ones it formed."""
        simulation = next((n for n, p in enumerate(self._partitioners) if p is partitioner), None)
        if simulation is None:
            simulation = len(self._partitioners)
            self._partitioners.append(partitioner)
        current = {id(st): st for st in partitioner.partitions.values()}
        for key in [k for k, (owner, *_) in self._open.items() if owner is partitioner and k not in current]:
            _, st, start, events = self._open.pop(key)
            self.rows.append(Lifetime(simulation, start, now, tuple(sorted(st.partition.flows)),
                                      partitioner.class_events(st) - events))
        for key, st in current.items():
            if key not in self._open:
                self._open[key] = (partitioner, st, now, partitioner.class_events(st))

    def write(self, path: Path) -> None:
        with path.open("w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(["simulation", "start", "end", "events", "flows"])
            for row in sorted(self.rows, key=lambda r: (r.simulation, r.start, r.flows)):
                writer.writerow([row.simulation, f"{row.start:.9f}", f"{row.end:.9f}", row.events,
                                 " ".join(map(str, row.flows))])


def record(out: Path, script: str, script_args: list[str]) -> int:
    """Run ``script`` accelerated with nothing skipped, logging every partition lifetime; write both files."""
    from wormhole_ns3.accel.partitioner import Partitioner
    from wormhole_ns3.tools import cli

    out.mkdir(parents=True, exist_ok=True)
    log = LifetimeLog()
    repartition = Partitioner.repartition

    def logged(self: Partitioner, now: float) -> None:
        repartition(self, now)
        log.observe(self, now)

    Partitioner.repartition = logged  # type: ignore[method-assign]
    try:
        code = cli.main(["run", *RECORD_OPTIONS, "--results", str(out / "run.json"), script, *script_args])
    finally:
        Partitioner.repartition = repartition  # type: ignore[method-assign]
    log.write(out / "partitions.csv")
    return code


# ------------------------------------------------------------------ analyze

def read_lifetimes(path: Path) -> list[Lifetime]:
    with path.open() as rows:
        return [Lifetime(int(r["simulation"]), float(r["start"]), float(r["end"]),
                         tuple(int(f) for f in r["flows"].split()), int(r["events"]))
                for r in csv.DictReader(rows)]


def read_flows(run: dict) -> dict[tuple[int, int], Flow]:
    return {(f["simulation"], f["id"]): Flow(f["simulation"], f["id"], (f["src"], f["dst"], f["dport"], f["bytes"]),
                                             f["start"])
            for f in run["flows"] if f["start"] is not None}


def weighted_quantile(values: Sequence[float], weights: Sequence[float], q: float) -> float:
    """The ``q`` quantile of ``values`` where each counts ``weights`` times (the smallest value reaching q)."""
    pairs = sorted(zip(values, weights))
    total = sum(weights)
    reached = 0.0
    for value, weight in pairs:
        reached += weight
        if reached >= q * total:
            return value
    return pairs[-1][0] if pairs else math.nan


def skippable_events(lifetimes: Iterable[Lifetime], dead: float) -> float:
    """Events after ``dead`` seconds from each lifetime's start: an oracle skips those at best."""
    return sum(r.events * max(0.0, 1.0 - dead / r.length) for r in lifetimes if r.length > 0)


def dead_time_for(lifetimes: Sequence[Lifetime], total: int, target: float) -> float | None:
    """The longest ``T_conv`` + window at which an oracle still reaches the events ratio ``target``.

    None if even an oracle judging at each change (0 s) does not.
    """
    wanted = (1.0 - 1.0 / target) * total
    if skippable_events(lifetimes, 0.0) < wanted:
        return None
    low, high = 0.0, max(r.length for r in lifetimes)
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if skippable_events(lifetimes, middle) >= wanted else (low, middle)
    return low


def ratio(share: float) -> float:
    return math.inf if share >= 1 else 1.0 / (1.0 - share)


def _offset(t: float, tolerance: float) -> int:
    return round(t / tolerance)


def transient_key(row: Lifetime, flows: dict[tuple[int, int], Flow], tolerance: float | None) -> tuple:
    """A lifetime's flows by identity, each with its start's offset from the change (None: offsets ignored)."""
    return tuple(sorted(
        (f.identity, None if tolerance is None else _offset(f.start - row.start, tolerance))
        for f in (flows[(row.simulation, i)] for i in row.flows)
    ))


@dataclass(frozen=True)
class Episode:
    """Flows tied together by the lifetimes that held them: the whole-episode memo's unit, or finer.

    The memo's episode also ties a flow to one still draining on its links; an episode of its
    that repeats is made of these that repeat, so counting these finds at least its repeats.
    """

    flows: tuple[Flow, ...]
    events: int

    @property
    def opening(self) -> float:
        return min(f.start for f in self.flows)

    def key(self, tolerance: float | None) -> tuple:
        return tuple(sorted(
            (f.identity, None if tolerance is None else _offset(f.start - self.opening, tolerance))
            for f in self.flows
        ))


def episodes(lifetimes: list[Lifetime], flows: dict[tuple[int, int], Flow]) -> list[Episode]:
    """The lifetimes' flows joined where a lifetime holds them together, with their lifetimes' events."""
    parent: dict[tuple[int, int], tuple[int, int]] = {}

    def find(x: tuple[int, int]) -> tuple[int, int]:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for row in lifetimes:
        first = find((row.simulation, row.flows[0]))
        for f in row.flows[1:]:
            parent[find((row.simulation, f))] = first
    members: dict[tuple[int, int], list[Flow]] = {}
    events: dict[tuple[int, int], int] = {}
    for key in parent:
        members.setdefault(find(key), []).append(flows[key])
    for row in lifetimes:
        root = find((row.simulation, row.flows[0]))
        events[root] = events.get(root, 0) + row.events
    return sorted((Episode(tuple(sorted(m, key=lambda f: f.id)), events[root]) for root, m in members.items()),
                  key=lambda e: e.opening)


def repeated_events(items: Iterable[tuple[tuple, int]]) -> tuple[int, int]:
    """(how many items repeat an earlier item's key, their events), items in time order."""
    seen: set[tuple] = set()
    count = events = 0
    for key, weight in items:
        if key in seen:
            count += 1
            events += weight
        seen.add(key)
    return count, events


@dataclass(frozen=True)
class Ceiling:
    """What ``analyze`` found on one recorded run."""

    total_events: int
    partition_events: int
    lifetimes: int
    length_quantiles: dict[str, float]
    share_longer_than: dict[str, float]
    #: Events in lifetimes of a flow alone on its links: it converges at its line rate, with no one to share with.
    alone_events: int
    window: float
    t_conv: float
    t_conv_alone: float
    bound: list[dict[str, float]]
    #: Per events ratio, the longest T_conv + window at which an oracle reaches it (None: not even at 0).
    dead_time_for: dict[str, float | None]
    transient_repeats: list[dict[str, float]]
    episode_repeats: list[dict[str, float]]
    episodes: int


def bound_share(lifetimes: Sequence[Lifetime], total: int, t_conv: float, t_conv_alone: float,
                window: float) -> float:
    """The oracle's skippable share of the run's events: after ``t_conv`` (``t_conv_alone`` for a flow
    alone on its links) and the window in every lifetime."""
    alone = [r for r in lifetimes if len(r.flows) == 1]
    contended = [r for r in lifetimes if len(r.flows) > 1]
    return (skippable_events(contended, t_conv + window) + skippable_events(alone, t_conv_alone + window)) / total


def analyze(directory: Path, t_conv: float, window: float | None, t_conv_alone: float = 0.0) -> Ceiling:
    run = json.loads((directory / "run.json").read_text())
    # flow events at one instant form partitions that no time passes in: no transient, no events
    lifetimes = [r for r in read_lifetimes(directory / "partitions.csv") if r.length > 0]
    flows = read_flows(run)
    total = int(run["events"])
    in_partitions = sum(r.events for r in lifetimes)
    if window is None:
        window = float(run["config"]["min_window"]) * float(run["sample_period_s"])
    lengths = [r.length for r in lifetimes]
    weights = [r.events for r in lifetimes]
    quantiles = {f"p{round(q * 100)}": weighted_quantile(lengths, weights, q) for q in (0.1, 0.5, 0.9, 0.99)}
    longer = {f"{length:g}": sum(r.events for r in lifetimes if r.length > length) / total for length in LENGTHS}
    bound = []
    for t in sorted({0.0, *(m * t_conv for m in T_CONV_MULTIPLES if t_conv > 0)}):
        for w in (0.0, window):
            share = bound_share(lifetimes, total, t, min(t, t_conv_alone), w)
            bound.append({"t_conv": t, "window": w, "share": share, "events_ratio": ratio(share)})
    dead = {f"{target:g}x": dead_time_for(lifetimes, total, target) for target in TARGETS}
    ordered = sorted(lifetimes, key=lambda r: (r.simulation, r.start))
    found = episodes(ordered, flows)
    transient_repeats, episode_repeats = [], []
    for tolerance in (*OFFSET_TOLERANCES, None):
        count, events = repeated_events((transient_key(r, flows, tolerance), r.events) for r in ordered)
        transient_repeats.append({"tolerance": tolerance if tolerance is not None else math.inf, "repeats": count,
                                  "share": events / total, "events_ratio": ratio(events / total)})
        count, events = repeated_events((e.key(tolerance), e.events) for e in found)
        episode_repeats.append({"tolerance": tolerance if tolerance is not None else math.inf, "repeats": count,
                                "share": events / total, "events_ratio": ratio(events / total)})
    alone = sum(r.events for r in lifetimes if len(r.flows) == 1)
    return Ceiling(total, in_partitions, len(lifetimes), quantiles, longer, alone, window, t_conv, t_conv_alone,
                   bound, dead, transient_repeats, episode_repeats, len(found))


def _tolerance(tolerance: float) -> str:
    return "ignored" if math.isinf(tolerance) else f"to {tolerance * 1e6:g} us"


def report(c: Ceiling) -> list[str]:
    us = 1e6
    lines = [
        f"events {c.total_events:,}; in {c.lifetimes:,} partition lifetimes {c.partition_events:,} "
        f"({c.partition_events / c.total_events:.1%})",
        "lifetime length, weighted by its events: "
        + ", ".join(f"{q} {v * us:,.0f} us" for q, v in c.length_quantiles.items()),
        "events in lifetimes longer than: "
        + ", ".join(f"{float(k) * us:,.0f} us {v:.1%}" for k, v in c.share_longer_than.items()),
        f"events in lifetimes of a flow alone on its links: {c.alone_events / c.total_events:.1%}",
        f"oracle bound (judging window {c.window * us:,.0f} us, measured T_conv {c.t_conv * us:,.0f} us, "
        f"{c.t_conv_alone * us:,.0f} us for a flow alone):",
    ]
    lines += [f"  T_conv {b['t_conv'] * us:8,.0f} us  window {b['window'] * us:6,.0f} us  "
              f"skippable {b['share']:6.1%}  best events ratio {b['events_ratio']:.2f}x" for b in c.bound]
    lines.append("longest T_conv + window that still reaches: " + ", ".join(
        f"{target} {'never' if d is None else f'{d * us:,.0f} us'}" for target, d in c.dead_time_for.items()))
    for name, rows, of in (("transients", c.transient_repeats, c.lifetimes), ("episodes", c.episode_repeats,
                                                                               c.episodes)):
        lines.append(f"memo ceiling, {name} repeating an earlier one (of {of:,}):")
        lines += [f"  offsets {_tolerance(r['tolerance']):>14}: {r['repeats']:5,} repeats, "
                  f"{r['share']:6.1%} of events, best ratio {r['events_ratio']:.2f}x" for r in rows]
    return lines


def table(rows: Sequence[tuple[str, Ceiling]]) -> list[str]:
    """One markdown row per recorded run: lifetimes, the bound at T_conv 0 and at the measured one, the memo's."""
    def at(c: Ceiling, t: float, window: bool) -> str:
        b = next(b for b in c.bound if b["t_conv"] == t and (b["window"] > 0) == window)
        return f"{b['events_ratio']:.2f}x"

    def dead(d: float | None) -> str:
        return "never" if d is None else f"{d * 1e6:,.0f} us"

    def repeats(rs: list[dict[str, float]], tolerance: float) -> str:
        r = next(r for r in rs if r["tolerance"] == tolerance)
        return f"{r['share']:.1%}"

    lines = ["| run | events | lifetimes | weighted median | alone | T_conv 0 | + window | 5x needs | "
             "T_conv measured + window | transients repeat (1 us / any offsets) | episodes repeat (1 us / any) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, c in rows:
        lines.append(
            f"| {name} | {c.total_events:,} | {c.lifetimes:,} | {c.length_quantiles['p50'] * 1e6:,.0f} us | "
            f"{c.alone_events / c.total_events:.1%} | {at(c, 0.0, False)} | {at(c, 0.0, True)} "
            f"({c.window * 1e6:,.0f} us) | {dead(c.dead_time_for['5x'])} | {at(c, c.t_conv, True)} | "
            f"{repeats(c.transient_repeats, 1e-6)} / {repeats(c.transient_repeats, math.inf)} | "
            f"{repeats(c.episode_repeats, 1e-6)} / {repeats(c.episode_repeats, math.inf)} |")
    return lines


# ------------------------------------------------------------------ convergence

def convergence_times(times: Sequence[float], received: Sequence[Sequence[int]], sizes: Sequence[int],
                      starts: Sequence[float], bin_s: float, tolerance: float) -> list[tuple[float, float]]:
    """(change time, T_conv) per flow arrival or departure: the first bin from which on, until the next
    change, every active flow's rate is within ``tolerance`` of the active flows' mean rate.

    inf: not by the next change; nan: no bin with a flow active fits before the next change.
    """
    period = times[1] - times[0]
    step = max(1, round(bin_s / period))
    ends = [next((times[k] for k in range(len(times)) if received[k][i] >= sizes[i]), math.inf)
            for i in range(len(sizes))]
    changes = sorted({*starts, *(e for e in ends if math.isfinite(e))})
    found = []
    for n, change in enumerate(changes):
        following = changes[n + 1] if n + 1 < len(changes) else times[-1]
        converged, judged = math.inf, False
        for k in range(len(times) - step):
            t0, t1 = times[k], times[k + step]
            if t0 < change or t1 > following:
                continue
            active = [i for i in range(len(sizes)) if starts[i] <= t0 and ends[i] >= t1]
            if not active:
                break
            judged = True
            rates = [(received[k + step][i] - received[k][i]) / (t1 - t0) for i in active]
            mean = sum(rates) / len(rates)
            fair = all(abs(r - mean) <= tolerance * mean for r in rates)
            if fair and math.isinf(converged):
                converged = t0 - change
            elif not fair:
                converged = math.inf
        found.append((change, converged if judged else math.nan))
    return found


def read_shares(path: Path) -> tuple[list[float], list[list[int]], list[int], list[float]]:
    """A ``dumbbell_shares.py`` CSV: the sample times, each flow's bytes then, and each flow's size and start.

    A flow's size is its last sample's bytes (every flow of the dumbbell ends), its start the
    sample before the one that first saw it deliver.
    """
    with path.open() as rows:
        table = list(csv.reader(rows))[1:]
    times = [float(row[0]) for row in table]
    received = [[int(b) for b in row[1:]] for row in table]
    sizes = received[-1]
    starts = [times[max(0, next(k for k, row in enumerate(received) if row[i] > 0) - 1)] for i in range(len(sizes))]
    return times, received, sizes, starts


def convergence(shares: Path, bin_s: float, tolerance: float) -> list[str]:
    found = convergence_times(*read_shares(shares), bin_s, tolerance)
    lines = [f"{'change (s)':>10} {'T_conv (us)':>11}"]
    lines += [f"{change:10.6f} {t * 1e6:11,.0f}" for change, t in found]
    judged = [t for _, t in found if not math.isnan(t)]
    finite = sorted(t for t in judged if math.isfinite(t))
    lines.append(f"{len(finite)} of {len(judged)} changes converged"
                 + (f": median {finite[len(finite) // 2] * 1e6:,.0f} us, max {finite[-1] * 1e6:,.0f} us"
                    if finite else ""))
    return lines


# ------------------------------------------------------------------ command line

def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    rec = commands.add_parser("record", help="run a script, writing its partition lifetimes")
    rec.add_argument("--out", type=Path, required=True)
    rec.add_argument("script")
    rec.add_argument("script_args", nargs=argparse.REMAINDER)
    ana = commands.add_parser("analyze", help="the ceiling of recorded runs (several: one markdown table)")
    ana.add_argument("directories", type=Path, nargs="+")
    ana.add_argument("--t-conv", type=float, default=0.0, help="measured convergence time, s (inf: never)")
    ana.add_argument("--t-conv-alone", type=float, default=0.0,
                     help="convergence time of a flow alone on its links, s (at most --t-conv's row)")
    ana.add_argument("--window", type=float, default=None,
                     help="judging window, s (default: the run's min_window sample periods)")
    conv = commands.add_parser("convergence", help="T_conv from a dumbbell_shares.py CSV of plain ns-3")
    conv.add_argument("shares", type=Path)
    conv.add_argument("--bin", type=float, default=1e-4, help="seconds a rate is measured over")
    conv.add_argument("--tolerance", type=float, default=0.05)
    args = parser.parse_args(argv)
    if args.command == "record":
        return record(args.out, args.script, args.script_args)
    if args.command == "analyze":
        found = []
        for directory in args.directories:
            ceiling = analyze(directory, args.t_conv, args.window, args.t_conv_alone)
            (directory / "skippable.json").write_text(json.dumps(ceiling.__dict__, indent=1) + "\n")
            found.append((directory.name, ceiling))
        print("\n".join(report(found[0][1]) if len(found) == 1 else table(found)))
        return 0
    print("\n".join(convergence(args.shares, args.bin, args.tolerance)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
