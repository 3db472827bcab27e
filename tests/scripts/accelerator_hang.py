"""A hang of the old kind, made on purpose: an accelerator event that reschedules itself for ever.

Run under ``wormhole-ns3 run`` only (it uses the accelerator's own API to
plant the bug). The script's one model event runs at 1 s; after it, only the
planted event is left, so plain ns-3 would have ended: the watchdog must end
the run with one line on stderr.
"""

from ns import ns

impl = ns.DynamicCast[ns.WormholeSimulatorImpl](ns.Simulator.GetImplementation())
impl.SetWatchdogLimit(1000)


def tick():
    impl.ScheduleSystemCallback(ns.MilliSeconds(1), again)


again = ns.Callback["void"](ns.cppyy.gbl.std.function["void()"](tick))
impl.ScheduleSystemCallback(ns.MilliSeconds(1), again)
ns.cppyy.cppdef('void ModelEvent() { std::cout << "the model\'s event ran" << std::endl; }')
ns.Simulator.Schedule(ns.Seconds(1), ns.cppyy.gbl.ModelEvent)
ns.Simulator.Run()
print(f"Run() returned at {ns.Simulator.Now().GetSeconds():.3f} s")
ns.Simulator.Destroy()
