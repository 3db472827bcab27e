"""Lookups by name of what lives in modules the script never names as a Python attribute.

A log component, TypeIds in ObjectFactory and Config, an attribute path, and
C++ handed to cppyy.cppdef: plain ``from ns import ns`` has loaded every
module, so each is found. ``helper`` names a class whose header is not named
after it (YansWifiPhyHelper is in yans-wifi-helper.h).
"""

import sys

from ns import ns

ns.LogComponentEnable("OlsrRoutingProtocol", ns.LOG_LEVEL_INFO)
ns.LogComponentEnable("AodvRoutingProtocol", ns.LOG_LEVEL_INFO)
print(ns.TypeId.LookupByName("ns3::YansWifiPhy").GetName())
print(ns.TypeId.LookupByName("ns3::LteEnbNetDevice").GetParent().GetName())
ns.Config.SetDefault("ns3::WifiRemoteStationManager::RtsCtsThreshold", ns.UintegerValue(100))
ns.Config.SetDefault("ns3::RandomWalk2dMobilityModel::Mode", ns.StringValue("Time"))

node = ns.CreateObject[ns.Node]()
factory = ns.ObjectFactory("ns3::ConstantPositionMobilityModel")
node.AggregateObject(factory.Create())
ns.Config.Set("/NodeList/0/$ns3::MobilityModel/Position", ns.VectorValue(ns.Vector(1, 2, 3)))

ns.cppyy.cppdef("""
double PositionX(ns3::Ptr<ns3::Node> node)
{
    return node->GetObject<ns3::MobilityModel>()->GetPosition().x;
}
""")
print("x =", ns.cppyy.gbl.PositionX(node))
if "helper" in sys.argv:
    ns.cppyy.cppdef("""
    int PhyLinkType() { ns3::YansWifiPhyHelper phy; return phy.GetPcapDataLinkType(); }
    """)
    print("pcap link type", ns.cppyy.gbl.PhyLinkType())
ns.Simulator.Destroy()
