"""Three different simulations in one process, each destroyed before the next is built.

1. an OnOff UDP flow to a CSMA subnet's broadcast address, heard by two sinks;
2. an OnOff UDP flow to a multicast group on another CSMA bus, heard by three;
3. a two-flow DCTCP dumbbell (what the accelerator skips).

No flow of the first two has a sink of its own, so the tracker keeps them
waiting for one; each simulation prints what its sinks received.
"""

import argparse

from ns import ns

from wormhole_ns3.examples.dctcp_dumbbell import build_topology, configure_tcp, install_flows

PORT = 9


def csma_bus(nodes: int, subnet: str):
    """A CSMA bus of ``nodes`` nodes with IPv4 addresses in ``subnet``/24."""
    bus = ns.NodeContainer()
    bus.Create(nodes)
    csma = ns.CsmaHelper()
    csma.SetChannelAttribute("DataRate", ns.StringValue("100Mbps"))
    csma.SetChannelAttribute("Delay", ns.TimeValue(ns.MicroSeconds(5)))
    devices = csma.Install(bus)
    ns.InternetStackHelper().Install(bus)
    addresses = ns.Ipv4AddressHelper()
    addresses.SetBase(ns.Ipv4Address(subnet), ns.Ipv4Mask("255.255.255.0"))
    addresses.Assign(devices)
    return bus, devices


def udp_to(destination: str, sender, receivers, bytes_: int) -> list:
    """An OnOff UDP flow from ``sender`` to ``destination``; a PacketSink on each receiver."""
    onoff = ns.OnOffHelper("ns3::UdpSocketFactory",
                           ns.InetSocketAddress(ns.Ipv4Address(destination), PORT).ConvertTo())
    onoff.SetConstantRate(ns.DataRate("10Mbps"), 1000)
    onoff.SetAttribute("MaxBytes", ns.UintegerValue(bytes_))
    onoff.Install(sender).Start(ns.Seconds(0.01))
    helper = ns.PacketSinkHelper("ns3::UdpSocketFactory",
                                 ns.InetSocketAddress(ns.Ipv4Address.GetAny(), PORT).ConvertTo())
    return [ns.DynamicCast[ns.PacketSink](helper.Install(node).Get(0)) for node in receivers]


def run_and_report(name: str, sinks: list) -> None:
    ns.Simulator.Stop(ns.Seconds(1))
    ns.Simulator.Run()
    for i, sink in enumerate(sinks):
        print(f"{name}: sink {i} received {sink.GetTotalRx()} bytes")
    ns.Simulator.Destroy()


def broadcast() -> None:
    bus, _ = csma_bus(3, "10.1.1.0")
    sinks = udp_to("10.1.1.255", bus.Get(0), [bus.Get(1), bus.Get(2)], 200_000)
    run_and_report("broadcast", sinks)


def multicast() -> None:
    bus, devices = csma_bus(4, "10.2.1.0")
    ns.Ipv4StaticRoutingHelper().SetDefaultMulticastRoute(bus.Get(0), devices.Get(0))
    sinks = udp_to("225.1.2.4", bus.Get(0), [bus.Get(1), bus.Get(2), bus.Get(3)], 300_000)
    run_and_report("multicast", sinks)


def dumbbell() -> None:
    ns.RngSeedManager.SetSeed(1)
    ns.RngSeedManager.SetRun(1)
    configure_tcp(1)
    flows = argparse.Namespace(flows=2, min_mb=20, max_mb=40, stagger_ms=0)
    senders, receivers, rx_addrs = build_topology(flows.flows, "10Gbps", "10us")
    sinks = install_flows(senders, receivers, rx_addrs, flows)
    run_and_report("dumbbell", sinks)


def main() -> None:
    broadcast()
    multicast()
    dumbbell()


if __name__ == "__main__":
    main()
