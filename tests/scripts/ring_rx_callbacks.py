"""Ring all-reduce written as dependent traffic: every message is a new BulkSend.

Each host keeps one PacketSink. When a host's sink has received the whole of a
message from its ring predecessor (seen from the sink's Rx trace, in a Python
callback), the host creates a new BulkSendApplication for its next message to its
successor, there and then. No flow of a step exists before the step before it
ends: an accelerator that only knows the applications present when Run() starts
sees the first step's flows only.

One all-reduce is 2 (N - 1) steps; after each all-reduce a host computes for
--compute-ms before its next one (the next BulkSend's start time). The script
prints, per all-reduce, the time the last host received its last message.
"""

import argparse

from ns import ns
from star import star

PORT = 9000


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=8)
    parser.add_argument("--message-mb", type=float, default=8, help="bytes per ring message, in MB")
    parser.add_argument("--allreduces", type=int, default=3)
    parser.add_argument("--compute-ms", type=float, default=2.0)
    parser.add_argument("--rate", default="10Gbps")
    return parser.parse_args()


class Ring:
    """The ring's state: how many messages each host has received and sent."""

    def __init__(self, hosts, message_bytes, allreduces, compute_ms):
        self.hosts = hosts
        self.n = len(hosts)
        self.message_bytes = message_bytes
        self.steps = 2 * (self.n - 1)
        self.messages = self.steps * allreduces
        self.compute = ns.MicroSeconds(int(compute_ms * 1000))
        self.addresses = [h.GetObject[ns.Ipv4]().GetAddress(1, 0).GetLocal() for h in hosts]
        self.received = [0] * self.n
        self.sent = [0] * self.n
        self.done_at = {}  # all-reduce -> time its last message arrived anywhere
        self.sinks = []
        self._alive = []

    def install_sinks(self):
        for i, host in enumerate(self.hosts):
            helper = ns.PacketSinkHelper(
                "ns3::TcpSocketFactory", ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT).ConvertTo())
            apps = helper.Install(host)
            apps.Start(ns.Seconds(0))
            sink = ns.DynamicCast[ns.PacketSink](apps.Get(0))
            self.sinks.append(sink)
            def received(packet, address, i=i):
                self.on_rx(i)

            on_rx = ns.cppyy.gbl.std.function["void(ns3::Ptr<const ns3::Packet>, const ns3::Address&)"](received)
            callback = ns.Callback["void", "ns3::Ptr<const ns3::Packet>", "const ns3::Address&"](on_rx)
            self._alive += [received, on_rx, callback]  # C++ only borrows them
            sink.TraceConnectWithoutContext("Rx", callback)

    def send(self, i, delay):
        """Host i's next message to its successor, as a new application started `delay` from now."""
        successor = (i + 1) % self.n
        helper = ns.BulkSendHelper(
            "ns3::TcpSocketFactory", ns.InetSocketAddress(self.addresses[successor], PORT).ConvertTo())
        helper.SetAttribute("MaxBytes", ns.UintegerValue(self.message_bytes))
        helper.SetAttribute("SendSize", ns.UintegerValue(1448 * 10))
        apps = helper.Install(self.hosts[i])
        apps.Start(delay)
        self.sent[i] += 1

    def on_rx(self, i):
        complete = self.sinks[i].GetTotalRx() // self.message_bytes
        while self.received[i] < complete:
            self.received[i] += 1
            allreduce, step = divmod(self.received[i], self.steps)
            if step == 0:
                self.done_at[allreduce - 1] = ns.Simulator.Now().GetSeconds()
            if self.sent[i] < self.messages:
                self.send(i, self.compute if step == 0 else ns.Seconds(0))


def main():
    args = parse_args()
    ring = Ring(star(args.hosts, args.rate), int(args.message_mb * 1e6), args.allreduces, args.compute_ms)
    ring.install_sinks()
    for i in range(ring.n):
        ring.send(i, ns.MilliSeconds(1))
    ns.Simulator.Run()
    for allreduce in range(args.allreduces):
        print(f"allreduce {allreduce} done {ring.done_at.get(allreduce, float('nan')):.9f}")
    print("messages received", sum(ring.received), "of", ring.n * ring.messages)
    for i, sink in enumerate(ring.sinks):
        print(f"host {i} bytes {sink.GetTotalRx()}")
    ns.Simulator.Destroy()


if __name__ == "__main__":
    main()
