"""``wormhole-ns3 ARGS`` in this process, every answer of ``MemoDriver.unforeseeable`` and ``upcoming`` checked.

Usage: ``python forecast_check.py OUT.json ARGS...``. Each answer of the one C++ call
of ``unforeseeable`` (FlowTracker::GetUnforeseeable) is compared with the same two
questions asked one at a time, the memo's way before it: what the known ends
release (``MemoDriver.releases``), then every flow at the earliest
(FlowTracker::GetUpcomingFlows), each row's route read and filtered here. Each
answer of ``upcoming`` (FlowTracker::GetUpcomingDue, routes by number) is compared
with the rows and routes ``MemoDriver.releases`` reads. OUT.json holds how many
were asked, how many named flows, and every answer that differed.
"""

import json
import sys

from wormhole_ns3.memo.driver import MemoDriver
from wormhole_ns3.runtime.boundary import int_rows, length_prefixed
from wormhole_ns3.tools.cli import main

out, args = sys.argv[1], sys.argv[2:]
kept: dict = {"asked": 0, "named": 0, "differ": [], "upcoming": 0, "due": 0, "upcoming_differ": []}
one_call = MemoDriver.unforeseeable
numbered = MemoDriver.upcoming


def one_at_a_time(driver, now_ns, links, horizon_ns, ends, own, beyond_ns):
    released = driver.releases(now_ns, horizon_ns, ends, [])
    foreseen = {(task, start) for start, _, _, task, _ in released}
    joiners = [handle for _, route, _, _, handle in released if route & links]
    held = set(links).union(*(route for _, route, _, _, _ in released if route & links))
    known = {flow: time for flow, (time, _) in driver._completion_of.items()} | {flow: beyond_ns for flow in own} | ends
    ending = sorted(known.items())
    to_come = driver.run.boundary.upcoming_flow_vector(vector[index] for vector, index in joiners)
    upcoming = driver.tracker.GetUpcomingFlows(
        driver.ns3.NanoSeconds(horizon_ns),
        [f for f, _ in ending],
        [t for _, t in ending],
        to_come,
        [beyond_ns] * len(joiners),
        True,
    )
    rows = int_rows(driver.tracker.GetUpcomingFlowFields(upcoming), 6)
    routes = length_prefixed(driver.tracker.GetUpcomingFlowRoutes(upcoming, list(range(len(rows)))))
    return [
        (start, sorted(set(route) & held))
        for (start, *_, task), route in zip(rows, routes)
        if (task, start) not in foreseen and set(route) & held
    ]


def checked(driver, now_ns, links, horizon_ns, ends, own, beyond_ns):
    own = list(own)
    answer = one_call(driver, now_ns, links, horizon_ns, ends, own, beyond_ns)
    expected = one_at_a_time(driver, now_ns, links, horizon_ns, ends, own, beyond_ns)
    got = [(start, sorted(reached)) for start, reached in answer]
    kept["asked"] += 1
    kept["named"] += bool(got)
    if got != expected:
        kept["differ"].append({"now_ns": now_ns, "got": got, "expected": expected})
    return answer


def checked_upcoming(driver, now_ns, horizon_ns):
    answer = numbered(driver, now_ns, horizon_ns)
    until = now_ns + horizon_ns
    gated = sum(1 for time, _ in driver._gated.values() if time <= until)
    expected = [(start, links, nodes) for start, links, nodes, _, _ in driver.releases(now_ns, horizon_ns, {}, [])]
    kept["upcoming"] += 1
    kept["due"] += len(expected)
    if [tuple(due) for due in answer[gated:]] != expected:
        kept["upcoming_differ"].append({"now_ns": now_ns, "got": len(answer) - gated, "expected": len(expected)})
    return answer


MemoDriver.unforeseeable = checked  # type: ignore[method-assign]
MemoDriver.upcoming = checked_upcoming  # type: ignore[method-assign]
try:
    code = main(args)
finally:
    with open(out, "w") as f:
        json.dump(kept, f)
raise SystemExit(code)
