"""TCP flows a script drives through its own sockets, as ns-3 users write them.

A DCTCP dumbbell (wormhole_ns3.examples.dctcp_dumbbell's topology); sender i
opens a socket with ``Socket::CreateSocket(node, TcpSocketFactory)`` at the i-th
of --starts-ms, connects to a PacketSink on its receiver and sends the i-th of
--sizes-mb MB. No BulkSend, no OnOff: the script's own code writes, in one of
two ways (--writer):

* ``callback`` (the usual pattern): the socket's send callback refills the send
  buffer each time room frees up, and closes the socket after the last byte;
* ``timer``: the connect callback starts a timer of the script's own that writes
  what room there is every --period-us; a skip could not reproduce it.

Prints, per flow, the bytes its sink received and whether it got every byte.
"""

import argparse

from ns import ns

from wormhole_ns3.examples.dctcp_dumbbell import build_topology, configure_tcp

std = ns.cppyy.gbl.std
BASE_PORT = 7000
MB = 10**6
CHUNK = 1448 * 8

alive = []  # C++ only borrows the callables


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes-mb", default="40,60,8", help="each flow's size in MB, comma separated")
    parser.add_argument("--starts-ms", default="10,10,90", help="when each flow starts, comma separated")
    parser.add_argument("--rate", default="10Gbps")
    parser.add_argument("--tcp", default="TcpDctcp")
    parser.add_argument("--writer", choices=("callback", "timer"), default="callback")
    parser.add_argument("--period-us", type=float, default=200, help="the timer writer's period")
    return parser.parse_args()


def keep(function, signature):
    """A std::function of a Python callable, kept alive as long as the script."""
    made = std.function[signature](function)
    alive.append((function, made))
    return made


class Sender:
    """One socket the script opens, connects and writes to itself."""

    def __init__(self, node, address, port, size, writer, period):
        self.node, self.peer, self.size = node, ns.InetSocketAddress(address, port), size
        self.writer, self.period = writer, period
        self.written = 0
        self.closed = False
        self.socket = None

    def start(self):
        self.socket = ns.Socket.CreateSocket(self.node, ns.TcpSocketFactory.GetTypeId())
        self.socket.Bind()
        self.socket.Connect(self.peer.ConvertTo())
        connected = ns.Callback["void", "ns3::Ptr<ns3::Socket>"](
            keep(lambda socket: self.on_connected(), "void(ns3::Ptr<ns3::Socket>)"))
        failed = ns.Callback["void", "ns3::Ptr<ns3::Socket>"](
            keep(lambda socket: None, "void(ns3::Ptr<ns3::Socket>)"))
        alive.extend([connected, failed])
        self.socket.SetConnectCallback(connected, failed)
        if self.writer == "callback":
            room = ns.Callback["void", "ns3::Ptr<ns3::Socket>", "unsigned int"](
                keep(lambda socket, available: self.fill(), "void(ns3::Ptr<ns3::Socket>, unsigned int)"))
            alive.append(room)
            self.socket.SetSendCallback(room)

    def on_connected(self):
        self.fill()
        if self.writer == "timer":
            self.tick()

    def tick(self):
        self.fill()
        if not self.closed:
            ns.Simulator.Schedule(self.period, ns.MakeEvent(keep(self.tick, "void()")))

    def fill(self):
        """Write what room there is, up to the flow's size; close the socket after the last byte."""
        while self.written < self.size:
            room = self.socket.GetTxAvailable()
            if room == 0:
                return
            chunk = min(room, self.size - self.written, CHUNK)
            sent = self.socket.Send(ns.Create[ns.Packet](chunk), 0)
            if sent <= 0:
                return
            self.written += sent
        if not self.closed:
            self.closed = True
            self.socket.Close()


def main():
    args = parse_args()
    sizes = [int(float(mb) * MB) for mb in args.sizes_mb.split(",")]
    starts = [float(ms) / 1000 for ms in args.starts_ms.split(",")]
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    configure_tcp(1, args.tcp)
    senders, receivers, rx_addrs = build_topology(len(sizes), args.rate, "10us")
    sinks, flows = [], []
    for i, (size, start) in enumerate(zip(sizes, starts)):
        port = BASE_PORT + i
        helper = ns.PacketSinkHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), port).ConvertTo())
        apps = helper.Install(receivers.Get(i))
        apps.Start(ns.Seconds(0))
        sinks.append(ns.DynamicCast[ns.PacketSink](apps.Get(0)))
        sender = Sender(senders.Get(i), rx_addrs[i], port, size, args.writer,
                        ns.MicroSeconds(int(args.period_us)))
        ns.Simulator.Schedule(ns.Seconds(start), ns.MakeEvent(keep(sender.start, "void()")))
        flows.append(sender)
    ns.Simulator.Run()
    for i, (sink, sender) in enumerate(zip(sinks, flows)):
        print(f"flow {i} bytes {sink.GetTotalRx()} complete {sink.GetTotalRx() == sender.size}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
