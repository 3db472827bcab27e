"""CSMA links joined by a bridge, two OnOff flows that stop, pcap on every port.

Plain ns-3 ends when its queue runs dry; the OnOff flows stay "active" for
the accelerator after their applications stop, so its samplers used to keep
the run going for ever.
"""

import sys

from ns import ns


def main(argv):
    ns.CommandLine().Parse(argv)

    terminals = ns.NodeContainer()
    terminals.Create(4)
    switch = ns.NodeContainer()
    switch.Create(1)
    csma = ns.CsmaHelper()
    csma.SetChannelAttribute("DataRate", ns.DataRateValue(ns.DataRate(5000000)))
    csma.SetChannelAttribute("Delay", ns.TimeValue(ns.MilliSeconds(2)))
    terminal_devices = ns.NetDeviceContainer()
    switch_devices = ns.NetDeviceContainer()
    for i in range(4):
        link = csma.Install(ns.NodeContainer(ns.NodeContainer(terminals.Get(i)), switch))
        terminal_devices.Add(link.Get(0))
        switch_devices.Add(link.Get(1))
    bridge = ns.BridgeNetDevice()
    switch.Get(0).AddDevice(bridge)
    for port in range(switch_devices.GetN()):
        bridge.AddBridgePort(switch_devices.Get(port))

    ns.InternetStackHelper().Install(terminals)
    ipv4 = ns.Ipv4AddressHelper()
    ipv4.SetBase(ns.Ipv4Address("10.1.1.0"), ns.Ipv4Mask("255.255.255.0"))
    ipv4.Assign(terminal_devices)

    sinks = []
    for src, dst, start in ((0, 1, 1.0), (3, 0, 1.1)):
        remote = ns.InetSocketAddress(ns.Ipv4Address(f"10.1.1.{dst + 1}"), 9)
        onoff = ns.OnOffHelper("ns3::UdpSocketFactory", remote.ConvertTo())
        onoff.SetConstantRate(ns.DataRate("500kb/s"))
        app = onoff.Install(ns.NodeContainer(terminals.Get(src)))
        app.Start(ns.Seconds(start))
        app.Stop(ns.Seconds(3.0))
        local = ns.InetSocketAddress(ns.Ipv4Address.GetAny(), 9)
        sink = ns.PacketSinkHelper("ns3::UdpSocketFactory", local.ConvertTo())
        sinks.append(sink.Install(ns.NodeContainer(terminals.Get(dst))))

    csma.EnablePcapAll("csma-bridge", False)
    ns.Simulator.Run()
    print(f"ended at {ns.Simulator.Now().GetSeconds():.6f} s")
    for apps in sinks:
        print("received", ns.DynamicCast[ns.PacketSink](apps.Get(0)).GetTotalRx())
    ns.Simulator.Destroy()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
