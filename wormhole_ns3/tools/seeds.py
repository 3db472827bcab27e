"""ns-3's own seed-to-seed spread, set beside the accelerated run's error (``compare --seeds N``).

A plain ns-3 run is one sample of what ns-3 gives: under another ``RngRun`` its
random streams (RED marking between its thresholds, random ECMP, an
application's jitter) draw other numbers, and its flows finish at other times.
``--seeds N`` runs the plain script under N run numbers, the baseline's own and
the N-1 after it, each a child process as the baseline is, asked for its run
through ``NS_GLOBAL_VALUE`` (which ns-3 reads when it starts). Per flow, and per
iteration where there are iterations, the spread of the N values ((max - min) /
median, and std / mean) is set beside the accelerated run's error against the
baseline. An error below that spread is below ns-3's own run-to-run noise: what
``--fidelity statistical`` promises, and all a user can ask of a run whose
outcome depends on the draws.

A script that calls ``RngSeedManager.SetRun`` itself runs under its own number
whatever it is asked; every run records the run it ran under (run.json
``rng_run``), so that case is told apart from a script whose outcome draws on no
random stream (its N runs, under N numbers, identical).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from wormhole_ns3.core.vocabulary import Label
from wormhole_ns3.tools.report import error_stats, flow_keys

#: The environment variable ns-3 reads its global values from, ``name=value`` items joined by ";".
GLOBAL_VALUES = "NS_GLOBAL_VALUE"
RNG_RUN = "RngRun"
#: ns-3's RngRun when nothing sets it.
DEFAULT_RUN = 1
#: The fewest plain runs that have a spread: the baseline's and one more.
MIN_SEEDS = 2


def seed_problem(seeds: int | None, plot: Path | None = None) -> str | None:
    """What is wrong with ``--seeds`` (and ``--plot``, which draws the seed spread), in one line; None if nothing."""
    if seeds is not None and seeds < MIN_SEEDS:
        return (f"--seeds {seeds}: ns-3's seed spread needs at least {MIN_SEEDS} plain runs "
                "(the baseline's and one more under another RngRun)")
    if plot is not None and seeds is None:
        return "--plot draws the accelerated error against ns-3's seed spread: give --seeds N too"
    return None


def seed_runs(baseline_run: int | None, count: int) -> list[int]:
    """The RngRun values of the extra plain runs: the ``count - 1`` after the baseline's (ns-3's default if unknown)."""
    first = (baseline_run or DEFAULT_RUN) + 1
    return list(range(first, first + count - 1))


def seeded_environment(environment: Mapping[str, str], run: int) -> dict[str, str]:
    """``environment`` with ``NS_GLOBAL_VALUE`` asking ns-3 for RngRun ``run``; its other global values kept."""
    kept = [item for item in environment.get(GLOBAL_VALUES, "").split(";")
            if item and item.split("=", 1)[0] != RNG_RUN]
    return {**environment, GLOBAL_VALUES: ";".join([*kept, f"{RNG_RUN}={run}"])}


class Quantity(Label):
    """What is compared across the runs, by its key in the reports."""

    FCT = "fct"
    ITERATION_TIME = "iteration_time"

    @property
    def heading(self) -> str:
        return {Quantity.FCT: "FCT", Quantity.ITERATION_TIME: "iteration time"}[self]

    @property
    def noun(self) -> str:
        return {Quantity.FCT: "flows", Quantity.ITERATION_TIME: "iterations"}[self]


@dataclass(frozen=True)
class ItemSpread:
    """One item (a flow, an iteration) across the plain runs: its values, (max - min) / median, std / mean."""

    values: list[float]
    spread: float
    cv: float


@dataclass(frozen=True)
class Matched:
    """One quantity's items that every plain run and the accelerated run finished, in the baseline's order.

    ``values`` holds, per item, its value in each plain run (the baseline's
    first); ``spread`` is (max - min) / median of those, ``cv`` their sample
    standard deviation over their mean, and ``error`` the accelerated run's
    relative error against the baseline. Values are durations, never zero.
    """

    quantity: Quantity
    keys: tuple[Hashable, ...]
    values: np.ndarray
    spread: np.ndarray
    cv: np.ndarray
    error: np.ndarray

    @classmethod
    def of(cls, quantity: Quantity, runs: Sequence[Mapping[Hashable, float]],
           errors: Mapping[Hashable, float | None]) -> Matched:
        """Join the plain runs' values (one mapping per run, the baseline's first) with the accelerated errors."""
        keys = tuple(key for key in runs[0]
                     if errors.get(key) is not None and all(key in run for run in runs[1:]))
        values = np.array([[run[key] for run in runs] for key in keys], dtype=float).reshape(len(keys), len(runs))
        spread = (values.max(axis=1) - values.min(axis=1)) / np.median(values, axis=1)
        cv = values.std(axis=1, ddof=1) / values.mean(axis=1)
        error = np.array([errors[key] for key in keys], dtype=float)
        return cls(quantity, keys, values, spread, cv, error)

    def by_key(self) -> dict[Hashable, ItemSpread]:
        """Each item's values and spread, by its key."""
        return {key: ItemSpread(self.values[k].tolist(), float(self.spread[k]), float(self.cv[k]))
                for k, key in enumerate(self.keys)}


@dataclass(frozen=True)
class Stats:
    """Mean, 99th percentile and maximum of a set of relative values (None for each when the set is empty)."""

    mean: float | None
    p99: float | None
    max: float | None

    @classmethod
    def of(cls, values: np.ndarray) -> Stats:
        return cls(**error_stats(values))


@dataclass(frozen=True)
class SpreadSummary:
    """One quantity: ns-3's seed spread over its items beside the accelerated run's error on the same items.

    ``within`` counts the items whose error is at most their own spread;
    ``within_noise`` says whether the error's 99th percentile is at
    most the spread's: the accelerated run is then as close to the baseline as
    another seed of plain ns-3 is.
    """

    quantity: Quantity
    items: int
    spread: Stats
    cv: Stats
    error: Stats
    within: int

    @classmethod
    def of(cls, matched: Matched) -> SpreadSummary:
        within = int(np.count_nonzero(matched.error <= matched.spread))
        return cls(matched.quantity, len(matched.keys), Stats.of(matched.spread), Stats.of(matched.cv),
                   Stats.of(matched.error), within)

    @property
    def within_noise(self) -> bool | None:
        if self.error.p99 is None or self.spread.p99 is None:
            return None
        return self.error.p99 <= self.spread.p99

    def as_dict(self) -> dict:
        return {"items": self.items, "spread": vars(self.spread), "cv": vars(self.cv), "error": vars(self.error),
                "within": self.within, "within_fraction": self.within / self.items if self.items else None,
                "within_noise": self.within_noise}


@dataclass(frozen=True)
class PlainRun:
    """What the seed comparison needs of one plain run.

    ``asked`` is the RngRun it was asked for (None: the baseline, under what
    its environment gave), ``ran`` the one it recorded (None in results made
    before runs recorded it), ``outcome`` a digest of what it computed.
    """

    asked: int | None
    ran: int | None
    events: int
    outcome: str

    @classmethod
    def of_results(cls, results: dict, asked: int | None, outcome: str | None = None) -> PlainRun:
        """From a run's results (run.json); the outcome is its flows' unless given (an experiment's tables)."""
        return cls(asked, results.get("rng_run"), results["events"], outcome or flows_digest(results))


def flows_digest(results: dict) -> str:
    """A digest of every flow's completion time and received bytes in a run's results, by flow key."""
    flows = sorted((key, f["fct"], f["rx_bytes"]) for key, f in zip(flow_keys(results["flows"]), results["flows"]))
    return hashlib.sha256(json.dumps(flows).encode()).hexdigest()


def flow_fcts(results: dict) -> dict[Hashable, float]:
    """Each finished flow's completion time in a run's results, by flow key, in the run's order."""
    return {key: f["fct"] for key, f in zip(flow_keys(results["flows"]), results["flows"]) if f["fct"] is not None}


class SeedCase(Label):
    """What the plain runs under other seeds say."""

    #: Their outcomes differ: the spread is ns-3's own run-to-run noise.
    VARIES = "varies"
    #: A run ran under another RngRun than it was asked for: the script sets its own.
    PINNED = "pinned"
    #: Under different RngRun values they are identical, events included: no random draw shapes the outcome.
    SEED_FREE = "seed-free"


def seed_case(runs: Sequence[PlainRun]) -> SeedCase:
    """Pinned if a run ran under another RngRun than it was asked for; seed-free if all are alike; else varies."""
    if any(run.asked is not None and run.ran is not None and run.ran != run.asked for run in runs):
        return SeedCase.PINNED
    if len({(run.outcome, run.events) for run in runs}) == 1:
        return SeedCase.SEED_FREE
    return SeedCase.VARIES


@dataclass(frozen=True)
class SeedReport:
    """The plain runs under N seeds, and per quantity their spread beside the accelerated error."""

    runs: tuple[PlainRun, ...]
    quantities: tuple[SpreadSummary, ...]

    @property
    def case(self) -> SeedCase:
        return seed_case(self.runs)

    def as_dict(self) -> dict:
        """The report as ``summary["seeds"]``: what ``seed_lines`` prints and the JSON keeps."""
        return {
            "plain_runs": len(self.runs),
            "asked": [run.asked for run in self.runs],
            "rng_run": [run.ran for run in self.runs],
            "events": [run.events for run in self.runs],
            "case": self.case.value,
            **{summary.quantity.value: summary.as_dict() for summary in self.quantities},
        }


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.3%}"


def _stats(stats: dict) -> str:
    return f"mean {_percent(stats['mean'])} p99 {_percent(stats['p99'])} max {_percent(stats['max'])}"


def _listed(runs: Sequence[int | None]) -> str:
    """Run numbers as a list; one a run did not record (a reused baseline made before runs did) as such."""
    return ", ".join("(not recorded)" if run is None else str(run) for run in runs)


def seed_lines(seeds: dict) -> list[tuple[str, str]]:
    """(label, text) lines of a seed report (``SeedReport.as_dict``): its case, then each quantity."""
    case = SeedCase(seeds["case"])
    runs = f"{seeds['plain_runs']} plain runs under RngRun {_listed(seeds['rng_run'])}"
    if case is SeedCase.PINNED:
        asked = _listed([run for run in seeds["asked"] if run is not None])
        ran = _listed(sorted({run for run in seeds["rng_run"] if run is not None}))
        return [("ns-3 seed spread", f"not measured: asked for RngRun {asked}, the plain runs ran under {ran}: "
                                     "the script sets RngRun itself (RngSeedManager.SetRun), so their spread is "
                                     "not ns-3's noise")]
    if case is SeedCase.SEED_FREE:
        return [("ns-3 seed spread", f"none: the {runs} are identical, events included: this script's outcome "
                                     "does not depend on ns-3's random draws")]
    lines = [("ns-3 seed spread", f"over the {runs}")]
    for quantity in Quantity:
        summary = seeds.get(quantity.value)
        if not summary or not summary["items"]:
            continue
        verdict = {True: "within ns-3's own noise", False: "ABOVE ns-3's own noise"}[summary["within_noise"]]
        lines += [
            (f"  {quantity.heading}", f"accelerated error p99 {_percent(summary['error']['p99'])} vs ns-3 seed spread "
                                    f"p99 {_percent(summary['spread']['p99'])}: {verdict}; {summary['within']} of "
                                    f"{summary['items']} {quantity.noun} within their own spread"),
            ("", f"seed spread (max-min)/median {_stats(summary['spread'])}; std/mean {_stats(summary['cv'])}"),
            ("", f"accelerated error {_stats(summary['error'])}"),
        ]
    return lines
