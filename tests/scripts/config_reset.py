"""Two simulations, each built after ``Config::Reset()``, as ns-3's test cases build theirs.

ns-3's ``TestCase::Run`` resets every attribute default and global value
around each test case. Each case here resets, configures DCTCP, runs a
two-flow dumbbell to its end, prints what its sinks received and destroys it.
With ``--own-simulator NAME`` the second case selects ns-3's simulator
implementation NAME itself (``GlobalValue::Bind``) before building.
"""

import argparse

from ns import ns

from wormhole_ns3.examples.dctcp_dumbbell import build_topology, configure_tcp, install_flows


def run_case(case: int, own_simulator: str | None) -> None:
    ns.Config.Reset()
    if own_simulator is not None:
        ns.GlobalValue.Bind("SimulatorImplementationType", ns.StringValue(own_simulator))
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1 + case)
    configure_tcp(1)
    flows = argparse.Namespace(flows=2, min_mb=20 + 10 * case, max_mb=40, stagger_ms=0)
    senders, receivers, rx_addrs = build_topology(flows.flows, "10Gbps", "10us")
    sinks = install_flows(senders, receivers, rx_addrs, flows)
    ns.Simulator.Run()
    for i, sink in enumerate(sinks):
        print(f"case {case} flow {i} bytes {sink.GetTotalRx()}")
    ns.Simulator.Destroy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--own-simulator", help="the implementation the second case selects itself")
    args = parser.parse_args()
    run_case(0, None)
    run_case(1, args.own_simulator)


if __name__ == "__main__":
    main()
