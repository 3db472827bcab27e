"""Every way a script hands a Python callable to ns-3, and what it sees back: the trampolines' behaviour.

Prints arguments and return values as C++ passes them, exceptions raised in
callbacks (called from Python, and unwinding Simulator::Run), what becomes of a
callable the script let go of, and when two callbacks compare equal (which is
what TraceDisconnect goes by). Run plainly and under the accelerator, it must
print the same.
"""

from ns import ns

std = ns.cppyy.gbl.std
PacketCallback = ns.Callback["void", "ns3::Ptr<const ns3::Packet>"]
alive = []  # C++ only borrows the callables


def keep(*objects):
    alive.extend(objects)
    return objects[-1]


def show(label, call):
    try:
        print(label, "->", repr(call()))
    except Exception as error:  # noqa: BLE001 - what the script sees is the point
        print(label, "raised", type(error).__name__, str(error).splitlines()[-1].strip())


def arguments_and_returns():
    def scaled(x, factor):
        return x * factor

    def greeting(name):
        return f"hello {name}"

    show("double(double,int)", lambda: keep(scaled, std.function["double(double, int)"](scaled))(1.5, 3))
    show("string(string)", lambda: keep(greeting, std.function["std::string(std::string)"](greeting))("ns-3"))
    show("bool(int)", lambda: keep(std.function["bool(int)"](keep(lambda n: n % 2 == 0)))(4))
    show("int from a float", lambda: keep(std.function["int(int)"](keep(lambda n: n / 2)))(3))
    show("Callback<int,int,int>", lambda: keep(ns.Callback["int", "int", "int"](keep(lambda a, b: a - b)))(9, 4))
    show("a class as the callable", lambda: keep(std.function["void(int)"](keep(type("Probe", (), {
        "__init__": lambda self, n: print("  Probe made with", n)}))))(7))


def exceptions():
    def fails(n):
        raise ValueError(f"callback {n} failed")

    show("raise from Python", lambda: keep(fails, std.function["void(int)"](fails))(1))
    show("raise through Callback", lambda: keep(ns.Callback["void", "int"](fails))(2))
    show("wrong arity", lambda: keep(std.function["void(int)"](keep(lambda: None)))(3))
    show("unconvertible return", lambda: keep(std.function["int()"](keep(lambda: "text")))())


def lifetimes():
    show("inline lambda", lambda: std.function["void(int)"](lambda n: print("  never", n))(1))
    def dropped(n):
        print("  still here", n)
    function = std.function["void(int)"](dropped)
    show("kept", lambda: function(2))
    del dropped
    show("dropped after", lambda: function(3))


def callbacks():
    def sink(packet):
        pass

    show("Callback straight from a callable", lambda: PacketCallback(keep(sink)))
    function = keep(std.function["void(ns3::Ptr<const ns3::Packet>)"](sink))
    one = keep(PacketCallback(function))
    print("Callback of a std::function equal to itself", one.IsEqual(one),
          "to another of the same", one.IsEqual(keep(PacketCallback(function))))
    show("then straight from a callable", lambda: keep(PacketCallback(keep(lambda packet: print("  straight")))(
        ns.Create[ns.Packet](10))))


def traces_and_events():
    queue = ns.CreateObject[ns.DropTailQueue[ns.Packet]]()
    sizes = []

    def enqueued(packet):
        sizes.append(packet.GetSize())

    callback = keep(PacketCallback(keep(std.function["void(ns3::Ptr<const ns3::Packet>)"](keep(enqueued)))))
    queue.TraceConnectWithoutContext("Enqueue", callback)
    queue.Enqueue(ns.Create[ns.Packet](100))
    queue.TraceDisconnectWithoutContext("Enqueue", callback)
    queue.Enqueue(ns.Create[ns.Packet](200))
    print("trace saw", sizes, "after disconnecting", queue.GetNPackets(), "queued")

    fired = []
    for k in range(50):
        def event(k=k):
            fired.append((k, ns.Simulator.Now().GetMicroSeconds()))
        ns.Simulator.Schedule(ns.MicroSeconds(10 * k), keep(event, std.function["void()"](event)))
    ns.Simulator.Run()
    print("events fired", len(fired), fired[:3], fired[-1])

    def explode():
        raise RuntimeError(f"at {ns.Simulator.Now().GetMicroSeconds()} us")
    ns.Simulator.Schedule(ns.MicroSeconds(5), keep(explode, std.function["void()"](explode)))
    show("Run with a raising event", ns.Simulator.Run)
    ns.Simulator.Schedule(ns.MicroSeconds(5), std.function["void()"](lambda: print("  never")))
    show("Run with a deleted callable", ns.Simulator.Run)
    ns.Simulator.Destroy()


arguments_and_returns()
exceptions()
lifetimes()
callbacks()
traces_and_events()
