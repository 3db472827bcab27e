/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Plain records of a tracked flow, read in one call across the Python
 * boundary instead of one call per field.
 */
#ifndef WORMHOLE_FLOW_RECORD_H
#define WORMHOLE_FLOW_RECORD_H

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

/**
 * @brief What a flow is and where it goes (FlowTracker::GetFlowRecord): each
 * field is what the FlowTracker getter of the same name returns, converted
 * the same way (addresses as dotted strings, the start time in seconds, the
 * OnOff rate in bit/s), so the batched read and the per-field one never differ.
 */
struct FlowRecord
{
    uint32_t id{0};                   //!< the flow's number (discovery order)
    std::string kind;                 //!< GetKind: "bulk-tcp", "onoff-udp", "rdma-dcqcn", ...
    uint32_t srcNode{0};              //!< GetSrcNode
    uint32_t dstNode{0};              //!< GetDstNode (UINT32_MAX if unknown)
    std::string src;                  //!< GetSrcAddress
    std::string dst;                  //!< GetDstAddress
    uint16_t sport{0};                //!< GetSrcPort
    uint16_t dport{0};                //!< GetDstPort
    uint64_t size{0};                 //!< GetSize: bytes, 0 if unlimited
    double start{0};                  //!< GetStartTime, in seconds
    std::vector<uint64_t> path;       //!< GetPath: link ids (node << 16 | device)
    std::vector<uint64_t> reversePath; //!< GetReversePath
    std::string congestionOps;        //!< GetCongestionOps
    std::string rttEstimator;         //!< GetRttEstimator
    bool constantRate{false};         //!< IsConstantRate
    bool paced{false};                //!< IsPaced
    double appRateBps{0};             //!< GetAppRate: bit/s
    uint32_t tag{0};                  //!< GetTag
};

/**
 * @brief What a run produced for a flow (FlowTracker::GetFlowOutcome), from
 * the same getters as a per-field read: start and finish in seconds, finish
 * -1 while the flow is unfinished.
 */
struct FlowOutcome
{
    uint32_t id{0};       //!< the flow's number
    std::string kind;     //!< GetKind
    std::string src;      //!< GetSrcAddress
    std::string dst;      //!< GetDstAddress
    uint16_t sport{0};    //!< GetSrcPort
    uint16_t dport{0};    //!< GetDstPort
    uint64_t size{0};     //!< GetSize
    double start{0};      //!< GetStartTime, in seconds
    double finish{-1};    //!< GetFinishTime, in seconds (-1 while unfinished)
    uint64_t rxBytes{0};  //!< GetSinkTotalRx
    uint64_t credited{0}; //!< GetCredited
    double standalone{0}; //!< GetStandaloneTime, in seconds (0 if its path is unknown)
};

} // namespace ns3

#endif /* WORMHOLE_FLOW_RECORD_H */
