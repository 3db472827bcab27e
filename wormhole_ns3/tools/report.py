"""Accuracy and speed of an accelerated run against its baseline: numbers and a table."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from wormhole_ns3.core.draws import Fidelity
from wormhole_ns3.runtime.queues import queue_comparison, queue_line
from wormhole_ns3.runtime.rtt import NOT_MEASURED, rtt_comparison, rtt_line


def flow_keys(flows: Sequence[dict]) -> list[tuple]:
    """What makes each of a run's flows the same flow in another run of the script, in the flows' order.

    A flow is the n-th to start from its source address to its destination
    address and port (ties by discovery order) in its simulation of the process
    (results written before simulations were numbered hold one, 0). Not its source port: ns-3
    gives each socket a node opens the next ephemeral port, so a user's
    callbacks that open a host's sockets in another order (its flows ended in
    another order) give its flows each other's source ports.
    """
    order = sorted(range(len(flows)), key=lambda k: (flows[k]["start"], flows[k]["id"]))
    seen: Counter[tuple] = Counter()
    keys: list[tuple] = [()] * len(flows)
    for k in order:
        ends = (flows[k].get("simulation", 0), flows[k]["src"], flows[k]["dst"], flows[k]["dport"])
        keys[k] = (*ends, seen[ends])
        seen[ends] += 1
    return keys


def error_stats(errors) -> dict[str, float | None]:
    """Mean, 99th percentile and maximum of relative errors; None for each when there are none."""
    values = np.asarray(errors, dtype=float)
    if not values.size:
        return {"mean": None, "p99": None, "max": None}
    return {"mean": float(values.mean()), "p99": float(np.percentile(values, 99)), "max": float(values.max())}


def comparison(baseline: dict, accelerated: dict) -> dict:
    """Per-flow FCT errors, byte exactness, speedup and event counts of two runs' results."""
    base_flows = dict(zip(flow_keys(baseline["flows"]), baseline["flows"]))
    rows, rtts = [], []
    for flow, key in zip(accelerated["flows"], flow_keys(accelerated["flows"])):
        base = base_flows.get(key)
        fct_b = base["fct"] if base else None
        fct_a = flow["fct"]
        rel = abs(fct_a - fct_b) / fct_b if fct_a is not None and fct_b else None
        rtts.append((base.get("rtt") if base else None, flow.get("rtt")))
        rows.append(
            {
                "id": flow["id"],
                "simulation": flow.get("simulation", 0),
                "src": flow["src"],
                "dst": flow["dst"],
                "sport": flow["sport"],
                "dport": flow["dport"],
                "bytes": flow["bytes"],
                "start": flow["start"],
                "fct_baseline": fct_b,
                "fct_accelerated": fct_a,
                "rel_err": rel,
                "rx_bytes_baseline": base["rx_bytes"] if base else None,
                "rx_bytes_accelerated": flow["rx_bytes"],
                "credited_bytes": flow["credited_bytes"],
            }
        )
    errors = error_stats([r["rel_err"] for r in rows if r["rel_err"] is not None])
    finished_b = sum(1 for f in baseline["flows"] if f["fct"] is not None)
    finished_a = sum(1 for r in rows if r["fct_accelerated"] is not None)
    wall_a = accelerated["run_wall_s"]
    process_b, process_a = baseline.get("process_wall_s"), accelerated.get("process_wall_s")
    return {
        "script": accelerated["script"],
        "argv": accelerated["argv"],
        "speedup": baseline["run_wall_s"] / wall_a if wall_a > 0 else math.inf,
        "run_wall_baseline_s": baseline["run_wall_s"],
        "run_wall_accelerated_s": wall_a,
        "process_speedup": process_b / process_a if process_b and process_a else None,
        "process_wall_baseline_s": process_b,
        "process_wall_accelerated_s": process_a,
        "events_baseline": baseline["events"],
        "events_accelerated": accelerated["events"],
        "system_events": accelerated["system_events"],
        "events_ratio": baseline["events"] / max(accelerated["events"], 1),
        # why either side ran (some of) the script otherwise than its mode says: plain, or unobserved
        "fallback": accelerated.get("fallback"),
        "fallback_baseline": baseline.get("fallback"),
        "skips": accelerated["skips"],
        "skip_backs": accelerated["skip_backs"],
        "skipped_time_s": accelerated["skipped_time_s"],
        "sim_time_baseline_s": baseline["sim_time_s"],
        "sim_time_accelerated_s": accelerated["sim_time_s"],
        "flows_finished_baseline": finished_b,
        "flows_finished_accelerated": finished_a,
        "fct_mean_rel_err": errors["mean"],
        "fct_p99_rel_err": errors["p99"],
        "fct_max_rel_err": errors["max"],
        "rx_bytes_exact": len(rows) == len(baseline["flows"])
        and all(r["rx_bytes_baseline"] == r["rx_bytes_accelerated"] for r in rows),
        **{key: accelerated.get(key) for key in MEMO_COUNTERS},
        "packet_level_time_s": accelerated.get("packet_level_time_s", {}),
        "config": accelerated["config"],
        "profile": accelerated.get("profile"),
        "verify": accelerated.get("verify"),
        "transient_memo": accelerated.get("transient_memo"),
        "queues": (queue_comparison(baseline["queues"], accelerated["queues"])
                   if baseline.get("queues") is not None and accelerated.get("queues") is not None else None),
        **(rtt_comparison(rtts) if baseline["config"].get("rtt") and accelerated["config"].get("rtt")
           else NOT_MEASURED),
        "flows": rows,
    }


#: The memo's counters of an accelerated run (run/harness.memo_results), carried into its comparison.
MEMO_COUNTERS = (
    "memo_hits", "memo_mirrored", "memo_misses", "memo_recorded", "memo_diverged", "memo_distrusted",
    "memo_draw_dependent", "memo_entries", "flows_replayed", "flows_resumed", "events_avoided_by_memo",
)


def profile_parts(summary: dict) -> str | None:
    """Where the accelerated Run() time went (``--profile``), as "section s (share)" parts; None without one."""
    profile = summary.get("profile")
    if not profile:
        return None
    wall = summary["run_wall_accelerated_s"] or 1.0
    parts = ", ".join(f"{section} {seconds:.2f} s ({seconds / wall:.0%})"
                      for section, seconds in profile["seconds"].items())
    startup = profile.get("startup_s")  # results written before start-up was kept have none
    return parts if startup is None else f"{parts}; start-up (process time outside Run()) {startup:.2f} s"


def guard_parts(summary: dict) -> str | None:
    """The error guard's estimate per kind (``--verify``), next to the true FCT error; None without a guard."""
    verify = summary.get("verify")
    if not verify:
        return None
    parts = []
    for kind in ("skip", "replay", "mirror", "absorb", "resume"):
        rec = verify.get(kind)
        if rec is None or (not rec["checked"] and kind not in ("skip", "replay")):
            continue  # kinds never checked are named only where every run has them
        estimate = "-" if rec["error_max"] is None else f"{rec['error_max']:.3%}"
        part = f"{kind} {estimate} over {rec['checked']} checked"
        parts.append(part + (" (stopped)" if rec["stopped"] else ""))
    true = summary.get("fct_max_rel_err")
    return (f"estimate (max) {', '.join(parts)}; bound {verify['skip']['bound']:.3%}; "
            f"true FCT error max {'-' if true is None else f'{true:.3%}'}")


def fidelity_hint(summary: dict) -> str | None:
    """Under statistical fidelity without ``--seeds``: the errors shown are against one seed only; else None."""
    fidelity = (summary.get("config") or {}).get("fidelity", Fidelity.SAME_SEED)
    if Fidelity(fidelity) is not Fidelity.STATISTICAL or summary.get("seeds"):
        return None
    return ("statistical: the errors above are against one seed of plain ns-3; "
            "judge the run against ns-3's seed spread with --seeds N")


def transient_line(summary: dict) -> str | None:
    """The transient memo's decisions (``--transient-memo``): a run where all miss says here why nothing repeats."""
    counts = summary.get("transient_memo")
    if not counts:
        return None
    return (f"{counts['hit']} restored ({counts['events_avoided']:,.0f} events avoided), {counts['miss']} misses, "
            f"{counts['refused']} refused, {counts['recorded']} recorded, "
            f"{counts.get('abandoned', 0)} recordings abandoned as their flows changed before converging")


def optional_parts(summary: dict) -> list[tuple[str, str]]:
    """(label, text) of each part a comparison has only when asked for: profile, guard, transients, queues, RTTs."""
    parts = [("accelerated Run()", profile_parts(summary)), ("error guard", guard_parts(summary)),
             ("transient memo", transient_line(summary)), ("queue lengths", queue_line(summary)),
             ("RTT", rtt_line(summary)), ("fidelity", fidelity_hint(summary))]
    return [(label, text) for label, text in parts if text]


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def format_table(summary: dict) -> str:
    """The human-readable comparison: one line per flow (with --seeds, its seed spread beside its error), the totals."""
    seeded = summary.get("seeds") is not None
    lines = [
        f"{'flow':>4} {'src':>15} {'dst':>15} {'bytes':>12} {'start s':>9} "
        f"{'FCT base s':>11} {'FCT accel s':>11} {'error':>8}" + (f" {'seed spread':>11}" if seeded else "")
    ]
    for r in summary["flows"]:
        spread = r.get("seed_spread")
        lines.append(
            f"{r['id']:>4} {r['src']:>15} {r['dst']:>15} {r['bytes']:>12} {r['start']:>9.4f} "
            f"{_fmt(r['fct_baseline'], '11.6f')} {_fmt(r['fct_accelerated'], '11.6f')} "
            f"{_fmt(r['rel_err'] * 100 if r['rel_err'] is not None else None, '7.3f')}%"
            + (f" {_fmt(spread * 100 if spread is not None else None, '10.3f')}%" if seeded else "")
        )
    pct = lambda v: _fmt(v * 100 if v is not None else None, ".3f") + "%"  # noqa: E731
    lines += [
        "",
        f"speedup (Run() wall)  {summary['speedup']:.1f}x   "
        f"({summary['run_wall_baseline_s']:.2f} s -> {summary['run_wall_accelerated_s']:.2f} s)",
        f"speedup (process)     {_fmt(summary['process_speedup'], '.1f')}x   "
        f"({_fmt(summary['process_wall_baseline_s'], '.2f')} s -> "
        f"{_fmt(summary['process_wall_accelerated_s'], '.2f')} s, start-up included)",
        f"events                {summary['events_baseline']:,} -> {summary['events_accelerated']:,} "
        f"({summary['events_ratio']:.1f}x fewer; {summary['system_events']:,} accelerator events)",
        f"skips                 {summary['skips']} covering {summary['skipped_time_s']:.4f} s "
        f"of simulated time ({summary['skip_backs']} cut short)",
        f"FCT error             mean {pct(summary['fct_mean_rel_err'])}  "
        f"p99 {pct(summary['fct_p99_rel_err'])}  max {pct(summary['fct_max_rel_err'])}",
        f"PacketSink totals     {'exact' if summary['rx_bytes_exact'] else 'DIFFER'}",
    ]
    breakdown = summary.get("packet_level_time_s") or {}
    if breakdown:
        parts = ", ".join(f"{why} {t * 1e3:.1f} ms" for why, t in sorted(breakdown.items()))
        lines.append(f"not skipped because    {parts}")
    lines += [f"{label:<21} {text}" for label, text in optional_parts(summary)]
    for label, key in (("fallback", "fallback"), ("baseline fallback", "fallback_baseline")):
        if summary.get(key):
            lines.append(f"{label:<21} {summary[key]}")
    if "stdout_identical" in summary:
        lines.append(f"script output         {'identical' if summary['stdout_identical'] else 'DIFFERS'}")
    return "\n".join(lines)
