"""ns-3's event semantics, seen by the script's own events while a DCTCP dumbbell runs beside them.

What ns-3's simulator test suite checks, here with flows the accelerator skips
between the script's events: each tick fires at its exact time; a far event's
EventId answers IsPending and GetDelayLeft exactly at every tick; a cancelled
and a removed event never run; events due at the same time run in the order
they were scheduled; an event scheduled with a context runs in it;
Simulator::Stop ends a Run() that a second Run() resumes (and a second Stop ends); destroy events run
at Simulator::Destroy in order. Every line printed must be plain ns-3's.
"""

import argparse

from ns import ns

from wormhole_ns3.examples.dctcp_dumbbell import build_topology, configure_tcp, install_flows

std = ns.cppyy.gbl.std
TICK_NS = 5_000_000


def event(function):
    """One ns-3 event of a Python callable (its std::function made once per callable, as a script keeps it)."""
    made = std.function["void()"](function)
    alive.append((function, made))
    return lambda: ns.MakeEvent(made)


alive = []
log = []


def now_ns():
    return ns.Simulator.Now().GetTimeStep()


def main():
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    configure_tcp(1)
    flows = argparse.Namespace(flows=2, min_mb=20, max_mb=40, stagger_ms=0)
    senders, receivers, rx_addrs = build_topology(flows.flows, "10Gbps", "10us")
    sinks = install_flows(senders, receivers, rx_addrs, flows)

    far = ns.Simulator.Schedule(ns.Seconds(0.2), event(lambda: log.append(f"far event ran at {now_ns()} ns"))())

    def tick():
        log.append(f"tick at {now_ns()} ns: far pending {far.IsPending()} "
                   f"in {ns.Simulator.GetDelayLeft(far).GetTimeStep()} ns")
        if now_ns() < 190_000_000:
            ns.Simulator.Schedule(ns.NanoSeconds(TICK_NS), next_tick())
    next_tick = event(tick)
    ns.Simulator.Schedule(ns.NanoSeconds(TICK_NS), next_tick())

    cancelled = ns.Simulator.Schedule(ns.Seconds(0.15), event(lambda: log.append("cancelled event ran"))())
    removed = ns.Simulator.Schedule(ns.Seconds(0.16), event(lambda: log.append("removed event ran"))())

    def cancel_and_remove():
        ns.Simulator.Cancel(cancelled)
        ns.Simulator.Remove(removed)
        log.append(f"at {now_ns()} ns: cancelled expired {cancelled.IsExpired()}, removed expired "
                   f"{removed.IsExpired()}")
    ns.Simulator.Schedule(ns.Seconds(0.12), event(cancel_and_remove)())

    for name in ("first", "second", "third"):
        ns.Simulator.Schedule(ns.Seconds(0.13), event(lambda name=name: log.append(f"{name} at {now_ns()} ns"))())
    ns.Simulator.ScheduleWithContext(
        senders.Get(1).GetId(), ns.Seconds(0.14),
        event(lambda: log.append(f"context {ns.Simulator.GetContext()} at {now_ns()} ns"))())
    ns.Simulator.ScheduleDestroy(event(lambda: print("destroy event one"))())
    ns.Simulator.ScheduleDestroy(event(lambda: print("destroy event two"))())

    ns.Simulator.Stop(ns.Seconds(0.11))
    ns.Simulator.Run()
    log.append(f"first Run() returned at {now_ns()} ns")
    ns.Simulator.Stop(ns.Seconds(1))  # past the flows' ends, before their sockets' TIME_WAIT ends
    ns.Simulator.Run()
    log.append(f"second Run() returned at {now_ns()} ns")
    print("\n".join(log))
    for i, sink in enumerate(sinks):
        print(f"flow {i} bytes {sink.GetTotalRx()}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
