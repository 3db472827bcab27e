// A program that includes single headers of modules (no <m>-module.h), as ns-3's third.cc does.
#include "ns3/core-module.h"
#include "ns3/mobility-helper.h"
#include "ns3/node-container.h"
#include "ns3/yans-wifi-helper.h"

#include <iostream>

using namespace ns3;

int
main(int argc, char* argv[])
{
    CommandLine cmd(__FILE__);
    cmd.Parse(argc, argv);
    NodeContainer nodes;
    nodes.Create(2);
    MobilityHelper mobility;
    mobility.Install(nodes);
    YansWifiPhyHelper phy;
    std::cout << "pcap link type " << phy.GetPcapDataLinkType() << std::endl;
    Simulator::Destroy();
    return 0;
}
