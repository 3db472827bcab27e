/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * N:1 incast of RDMA flows (RoCEv2 with DCQCN) as a plain C++ ns-3 program,
 * using the shim's RdmaHelper, RdmaSwitchHelper and RdmaFlowHelper.
 *
 *   sender i --\
 *               switch ==> receiver      (every link --rate, --delay)
 *   ...     --/
 *
 * Flow i sends --bytes from sender i to the receiver, all starting at 10 us.
 * The NICs' FlowStart and FlowFinish trace sources print "start <i> at_us <t>"
 * and "finish <i> at_us <t>"; each completion callback prints
 * "flow <i> bytes <delivered> fct_us <fct>". The run ends when the last flow
 * completes.
 *
 *   wormhole-ns3 run --baseline experiments/cpp/rdma_incast.cc -- --flows=4
 */

#include "ns3/rdma-module.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <iostream>
#include <string>

using namespace ns3;

namespace
{

void
Traced(std::string what, Ptr<RdmaQueuePair> qp)
{
    std::cout << what << " " << qp->GetFlowId() << " at_us " << Simulator::Now().GetMicroSeconds()
              << std::endl;
}

void
Completed(Ptr<RdmaQueuePair> qp)
{
    std::cout << "flow " << qp->GetFlowId() << " bytes " << qp->GetDeliveredBytes() << " fct_us "
              << (qp->GetFinishTime() - qp->GetStartTime()).GetMicroSeconds() << std::endl;
}

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t flows = 2;
    uint64_t bytes = 1000000;
    std::string rate = "100Gbps";
    std::string delay = "1us";
    CommandLine cmd;
    cmd.AddValue("flows", "number of senders", flows);
    cmd.AddValue("bytes", "bytes per flow", bytes);
    cmd.AddValue("rate", "rate of every link", rate);
    cmd.AddValue("delay", "propagation delay of every link", delay);
    cmd.Parse(argc, argv);

    NodeContainer hosts;
    hosts.Create(flows + 1); // the last one receives
    NodeContainer sw;
    sw.Create(1);
    InternetStackHelper stack;
    stack.Install(hosts);
    stack.Install(sw);

    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", StringValue(rate));
    p2p.SetChannelAttribute("Delay", StringValue(delay));
    Ipv4AddressHelper addresses;
    for (uint32_t i = 0; i <= flows; ++i)
    {
        NetDeviceContainer link = p2p.Install(hosts.Get(i), sw.Get(0));
        addresses.SetBase(Ipv4Address(("10.0." + std::to_string(i) + ".0").c_str()),
                          "255.255.255.0");
        addresses.Assign(link);
    }
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    RdmaHelper rdma;
    rdma.Install(hosts);
    RdmaSwitchHelper switches;
    RdmaSwitchHelper::AssignStreams(switches.Install(sw), 0);

    RdmaFlowHelper flowHelper;
    for (uint32_t i = 0; i < flows; ++i)
    {
        flowHelper.AddFlow(hosts.Get(i),
                           hosts.Get(flows),
                           bytes,
                           MicroSeconds(10),
                           MakeCallback(&Completed));
    }
    Config::ConnectWithoutContext("/NodeList/*/$ns3::RdmaNic/FlowStart",
                                  MakeBoundCallback(&Traced, std::string("start")));
    Config::ConnectWithoutContext("/NodeList/*/$ns3::RdmaNic/FlowFinish",
                                  MakeBoundCallback(&Traced, std::string("finish")));
    Simulator::Run();
    Simulator::Destroy();
    return 0;
}
