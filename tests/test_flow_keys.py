"""Which flow of one run is which flow of another: ends, destination port and start order, not source ports.

A user's script creates a host's next BulkSend in the Rx callback of whichever
of its flows ended; when two flows end in the other order, ns-3 gives their
successors each other's ephemeral source ports. Both runs must still number
them alike, in ``compare`` and in the ``flows.csv`` the runner makes for them.
"""

import pytest

from wormhole_ns3.tools.experiment.results import FLOW_COLUMNS
from wormhole_ns3.tools.experiment.run import harness_flow_rows
from wormhole_ns3.tools.report import comparison, flow_keys

A, B, C = "10.1.0.1", "10.1.1.1", "10.1.2.1"


def flow(id_: int, src: str, dst: str, sport: int, start: float, fct: float | None, dport: int = 5000) -> dict:
    return {"id": id_, "src": src, "dst": dst, "sport": sport, "dport": dport, "bytes": 1000, "start": start,
            "fct": fct, "rx_bytes": 1000 if fct is not None else 0, "credited_bytes": 0}


#: Host A's flow to B, then two more to B and one to C opened in the order their triggers ended, plain ...
PLAIN = [flow(0, A, B, 49153, 0.0, 1.0), flow(1, A, B, 49154, 2.0, 1.0), flow(2, A, C, 49155, 2.0, 2.0),
         flow(3, A, B, 49156, 5.0, 4.0), flow(4, A, B, 49157, 5.0, 1.0, dport=5001)]
#: ... and accelerated, where the trigger of A's flow to C ended first: it took B's port, and was discovered first.
ACCELERATED = [flow(0, A, B, 49153, 0.0, 1.0), flow(1, A, C, 49154, 2.0, 2.02), flow(2, A, B, 49155, 2.0, 1.0),
               flow(3, A, B, 49157, 5.0, None), flow(4, A, B, 49156, 5.0, 1.0, dport=5001)]


def test_a_flow_is_the_nth_to_start_between_its_ends_and_destination_port_whatever_its_source_port():
    assert flow_keys(PLAIN) == [(0, A, B, 5000, 0), (0, A, B, 5000, 1), (0, A, C, 5000, 0), (0, A, B, 5000, 2),
                                (0, A, B, 5001, 0)]
    assert sorted(flow_keys(ACCELERATED)) == sorted(flow_keys(PLAIN))


def test_flows_starting_together_between_the_same_ends_are_told_apart_by_their_discovery_order():
    later_first = [flow(7, A, B, 49160, 3.0, 1.0), flow(5, A, B, 49158, 3.0, 1.0), flow(6, A, B, 49159, 1.0, 1.0)]
    assert flow_keys(later_first) == [(0, A, B, 5000, 2), (0, A, B, 5000, 1), (0, A, B, 5000, 0)]


def test_flows_of_another_simulation_of_the_process_are_other_flows():
    second = [dict(flow(0, A, B, 49153, 0.0, 1.0), simulation=1)]
    assert flow_keys(PLAIN[:1] + second) == [(0, A, B, 5000, 0), (1, A, B, 5000, 0)]


def run_results(flows: list[dict]) -> dict:
    """What ``comparison`` reads of a harness run besides its flows."""
    return {"script": "user.py", "argv": [], "run_wall_s": 1.0, "events": 10, "system_events": 0, "skips": 0,
            "skip_backs": 0, "skipped_time_s": 0.0, "sim_time_s": 9.0, "config": {}, "flows": flows}


def test_compare_matches_each_flow_with_its_own_across_swapped_source_ports():
    summary = comparison(run_results(PLAIN), run_results(ACCELERATED))
    matched = {(row["src"], row["dst"], row["sport"]): (row["fct_baseline"], row["fct_accelerated"])
               for row in summary["flows"]}
    assert matched == {(A, B, 49153): (1.0, 1.0), (A, C, 49154): (2.0, 2.02), (A, B, 49155): (1.0, 1.0),
                       (A, B, 49157): (4.0, None), (A, B, 49156): (1.0, 1.0)}
    assert summary["fct_max_rel_err"] == pytest.approx(0.01)  # only the flow to C is off, by 1%
    assert summary["flows_finished_baseline"] == 5 and summary["flows_finished_accelerated"] == 4
    assert not summary["rx_bytes_exact"]  # A's last flow to B received nothing accelerated
    assert comparison(run_results(PLAIN), run_results(PLAIN[::-1]))["rx_bytes_exact"]


def test_the_runner_numbers_a_table_less_scripts_flows_alike_in_both_runs():
    def tasks(flows):
        return {row[0]: (row[FLOW_COLUMNS.index("dst")], row[FLOW_COLUMNS.index("start")])
                for row in harness_flow_rows({"flows": flows})}

    plain = {0: (B, 0.0), 1: (B, 2.0), 2: (B, 5.0), 3: (B, 5.0), 4: (C, 2.0)}  # by (ends, port, n)
    assert tasks(PLAIN) == plain
    assert tasks(ACCELERATED) == {task: ends for task, ends in plain.items() if task != 2}  # 2 unfinished
