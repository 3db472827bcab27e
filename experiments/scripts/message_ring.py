"""Messages passed around a ring of hosts, each one watched by a new Python callback: what users write.

    host 0 --+                 every host on its own --rate / --delay link to one switch,
    host 1 --+-- switch        TCP (ns-3's default NewReno), global routing
    ...    --+

--tokens messages travel at once. A message is a new BulkSend of --message-kb from
its host to the next host's new PacketSink (a port of its own). Its sender
schedules its start with a new closure (``Simulator.Schedule`` of a
``std.function``), and connects a new closure to its sink's Rx trace
(``ns.Callback[...](std.function[...](closure))``, as ns-3's Python examples
do): when the closure has seen the whole message arrive, it sends the next one
from that host, --think-us later, until --messages have been sent.

Plain cppyy compiles a C++ wrapper for every such closure (tens of ms each),
which is most of this script's ``Run()``; ``wormhole-ns3 run`` hands them to one
trampoline per signature instead.

Output: one line per message (id, source, destination, start and end in ns),
then the number delivered and the last end.
"""

import argparse

from ns import ns

std = ns.cppyy.gbl.std
PORT_BASE = 10000
RxFunction = std.function["void(ns3::Ptr<const ns3::Packet>, const ns3::Address&)"]
RxCallback = ns.Callback["void", "ns3::Ptr<const ns3::Packet>", "const ns3::Address&"]
Event = std.function["void()"]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--tokens", type=int, default=8, help="messages travelling at once")
    parser.add_argument("--messages", type=int, default=1024, help="messages sent in all")
    parser.add_argument("--message-kb", type=float, default=16, help="bytes per message, in KB")
    parser.add_argument("--think-us", type=float, default=5, help="time between a message's end and the next")
    parser.add_argument("--rate", default="10Gbps")
    parser.add_argument("--delay", default="2us")
    args = parser.parse_args()
    if not 0 < args.tokens <= args.messages:
        parser.error("--tokens must be between 1 and --messages")
    return args


def star(hosts, rate, delay):
    """Hosts around one switch; each host's address."""
    nodes = ns.NodeContainer()
    nodes.Create(hosts + 1)
    ns.InternetStackHelper().InstallAll()
    p2p = ns.PointToPointHelper()
    p2p.SetDeviceAttribute("DataRate", ns.StringValue(rate))
    p2p.SetChannelAttribute("Delay", ns.StringValue(delay))
    addresses = ns.Ipv4AddressHelper()
    switch = nodes.Get(hosts)
    host_addresses = []
    for h in range(hosts):
        devices = p2p.Install(nodes.Get(h), switch)
        addresses.SetBase(ns.Ipv4Address(f"10.1.{h}.0"), ns.Ipv4Mask("255.255.255.0"))
        host_addresses.append(addresses.Assign(devices).GetAddress(0))
    ns.Ipv4GlobalRoutingHelper.PopulateRoutingTables()
    return nodes, host_addresses


class MessageRing:
    """Every message's course: sent when its predecessor arrived, watched by its own closure."""

    def __init__(self, nodes, addresses, args):
        self.nodes = nodes
        self.addresses = addresses
        self.hosts = len(addresses)
        self.size = int(args.message_kb * 1000)
        self.total = args.messages
        self.think = ns.NanoSeconds(int(args.think_us * 1000))
        self.sent = 0
        self.messages = []  # [source, destination, start ns, end ns or None]
        self._alive = []  # C++ only borrows the callables and their wrappers

    def send(self, source, delay):
        """The next message, from ``source`` to its successor, ``delay`` from now."""
        if self.sent == self.total:
            return
        message = self.sent
        self.sent += 1
        destination = (source + 1) % self.hosts
        self.messages.append([source, destination, None, None])

        def start():
            self.messages[message][2] = ns.Simulator.Now().GetNanoSeconds()
            self.open(message, source, destination)

        event = Event(start)
        self._alive += [start, event]
        ns.Simulator.Schedule(delay, event)

    def open(self, message, source, destination):
        port = PORT_BASE + message
        sink_apps = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo()
        ).Install(self.nodes.Get(destination))
        sink_apps.Start(ns.Seconds(0))
        sink = ns.DynamicCast[ns.PacketSink](sink_apps.Get(0))
        received = [0]

        def on_rx(packet, _address):
            received[0] += packet.GetSize()
            if received[0] == self.size:
                self.messages[message][3] = ns.Simulator.Now().GetNanoSeconds()
                self.send(destination, self.think)

        function = RxFunction(on_rx)
        callback = RxCallback(function)
        self._alive += [on_rx, function, callback]
        sink.TraceConnectWithoutContext("Rx", callback)

        sender = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(self.addresses[destination], port).ConvertTo())
        sender.SetAttribute("MaxBytes", ns.UintegerValue(self.size))
        sender.Install(self.nodes.Get(source)).Start(ns.Seconds(0))

    def report(self):
        for message, (source, destination, start, end) in enumerate(self.messages):
            print(f"message {message} {source}->{destination} start {start} end {end}")
        ends = [end for *_, end in self.messages if end is not None]
        print("delivered", len(ends), "of", self.total, "last end", max(ends, default=None))


def main():
    args = parse_args()
    nodes, addresses = star(args.hosts, args.rate, args.delay)
    ring = MessageRing(nodes, addresses, args)
    for token in range(args.tokens):
        ring.send(token % args.hosts, ns.MicroSeconds(1))
    ns.Simulator.Run()
    ring.report()
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
