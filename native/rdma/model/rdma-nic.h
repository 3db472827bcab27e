/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * A RoCEv2 NIC: queue pairs over ns-3's UDP/IPv4, served at line rate in
 * round robin, each paced at the rate of its congestion control.
 */
#ifndef RDMA_NIC_H
#define RDMA_NIC_H

#include "ns3/data-rate.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <vector>

namespace ns3
{

class Node;
class NetDevice;
class NetDeviceQueue;
class Packet;
class Ipv4Route;
class Ipv4EndPoint;
class Ipv4Interface;
class UdpL4Protocol;
class RdmaQueuePair;
class RdmaReceiveQueuePair;
class RdmaPfcPort;

/**
 * @brief The RoCEv2 host stack of one node, bound to one of its devices.
 *
 * Packets are UDP datagrams to port 4791 sent through the node's real
 * UdpL4Protocol and Ipv4L3Protocol: data packets carry DSCP DataDscp with
 * ECT(0), so RED queues on the way can mark CE; ACKs, NAKs and CNPs carry
 * DSCP ControlDscp, not ECN-capable. Each queue pair has its own UDP source
 * port, so flow-hash ECMP spreads queue pairs over paths.
 *
 * Transmission: Setup() removes the device's root queue disc, shrinks the
 * device's transmit queue to TxQueuePackets and registers the NIC as the
 * wake callback of the device's NetDeviceQueue. The NIC hands the device one
 * packet at a time while the queue is not stopped: first any pending control
 * packet, then a data packet of the next queue pair in round-robin order
 * whose pacer allows it (the pacer spaces a queue pair's packets by their
 * wire size at its congestion-control rate). When none is ready, a single
 * timer fires at the earliest pacing time. So the link runs at line rate
 * whenever some queue pair may send, and queues build in the network, not
 * in the NIC. While the device's RdmaPfcPort is paused only control packets
 * leave.
 *
 * Receiving: one UDP endpoint on port 4791 demultiplexes by the BTH's
 * destination QP to receive queue pairs (data) or queue pairs (ACK, NAK, CNP).
 */
class RdmaNic : public Object
{
  public:
    /** UDP destination port of RoCEv2. */
    static constexpr uint16_t ROCE_PORT = 4791;

    static TypeId GetTypeId();
    RdmaNic();

    /**
     * Bind to @p device of a node that has the Internet stack and an IPv4
     * address on that device (RdmaHelper::Install does this).
     */
    void Setup(Ptr<NetDevice> device);

    /**
     * Create a flow of @p bytes from this NIC to @p receiver: a queue pair
     * here and its receive queue pair there, connected. It does not send
     * until StartQueuePair().
     * @param sourcePort UDP source port; 0 picks one from a hash of node and QPN
     */
    Ptr<RdmaQueuePair> CreateQueuePair(Ptr<RdmaNic> receiver, uint64_t bytes, uint16_t sourcePort);
    /** Start sending a queue pair of this NIC now; fires FlowStart. */
    void StartQueuePair(Ptr<RdmaQueuePair> qp);
    /**
     * Start a queue pair of this NIC after @p delay, in an event in the
     * node's context; the queue pair keeps that event (GetStartEvent), so an
     * accelerator can attribute it to the flow or take it over. The event is
     * scheduled from a first event in the node's context, at once.
     */
    void ScheduleQueuePair(Ptr<RdmaQueuePair> qp, Time delay);

    Ptr<Node> GetNode() const;
    Ptr<NetDevice> GetDevice() const;
    Ipv4Address GetAddress() const;
    DataRate GetLineRate() const;
    /** @return payload bytes per data packet. */
    uint32_t GetMtu() const;

    /** @return queue pairs created on this NIC, in creation order. */
    uint32_t GetNQueuePairs() const;
    Ptr<RdmaQueuePair> GetQueuePair(uint32_t i) const;
    /** @return queue pairs that have started and are not fully acknowledged. */
    uint32_t GetNActiveQueuePairs() const;

    /** @return data packets handed to the device (retransmissions included). */
    uint64_t GetDataPacketsSent() const;
    /** @return ACKs, NAKs and CNPs handed to the device. */
    uint64_t GetControlPacketsSent() const;
    /** @return packets that named a queue pair this NIC does not have. */
    uint64_t GetUnknownQpDrops() const;

    // --- used by queue pairs ---------------------------------------------

    /** Send whatever may be sent now (a queue pair got data, window or a NAK). */
    void Kick();
    /** Queue an ACK, NAK or CNP; it leaves before any data packet. */
    void SendControl(Ptr<Packet> packet, Ipv4Address destination, uint16_t sourcePort);
    /** The receiver of @p qp holds the whole message. */
    void NotifyFinished(Ptr<RdmaQueuePair> qp);
    /** Every packet of @p qp is acknowledged; the NIC stops serving it. */
    void NotifyAcknowledged(Ptr<RdmaQueuePair> qp);

    /** Trace signature of FlowStart and FlowFinish. */
    typedef void (*QueuePairTracedCallback)(Ptr<RdmaQueuePair> qp);

  private:
    /** A control packet waiting for the device. */
    struct Control
    {
        Ptr<Packet> packet;
        Ipv4Address destination;
        uint16_t sourcePort;
    };

    void DoDispose() override;
    /** Check at simulation start that nothing replaced the NIC's hold on the device. */
    void DoInitialize() override;
    /** Create the receive side of a flow from @p peer (its QPN and address). */
    Ptr<RdmaReceiveQueuePair> Accept(uint32_t peerQpn, Ipv4Address peer, uint16_t sourcePort);
    /** UDP is being disposed and has deleted the end point. */
    void EndPointDestroyed();
    void Receive(Ptr<Packet> packet, Ipv4Header header, uint16_t port, Ptr<Ipv4Interface> iface);
    void TrySend();
    /** @return the next queue pair in round-robin order allowed to send now, or nullptr. */
    Ptr<RdmaQueuePair> NextReady();
    /** Arm the pacing timer for the earliest queue pair waiting on its pacer. */
    void SchedulePacing();
    void Transmit(Ptr<Packet> packet, Ipv4Address destination, uint16_t sourcePort, uint8_t tos);
    Ptr<Ipv4Route> Route(Ipv4Address destination);
    uint16_t PickSourcePort(uint32_t qpn) const;

    // Attributes
    uint32_t m_mtu;
    uint32_t m_ackInterval;
    Time m_cnpInterval;
    Time m_retransmitTimeout;
    uint32_t m_txQueuePackets;
    uint8_t m_dataDscp;
    uint8_t m_controlDscp;
    TypeId m_ccType;

    Ptr<Node> m_node;
    Ptr<NetDevice> m_device;
    Ptr<NetDeviceQueue> m_txQueue;
    Ptr<UdpL4Protocol> m_udp;
    Ptr<RdmaPfcPort> m_pfc;
    Ipv4EndPoint* m_endPoint{nullptr};
    Ipv4Address m_address;
    DataRate m_lineRate;
    uint32_t m_wireOverhead{0};
    uint32_t m_nextQpn{1};

    std::vector<Ptr<RdmaQueuePair>> m_queuePairs;
    std::vector<Ptr<RdmaReceiveQueuePair>> m_receiveQueuePairs;
    std::unordered_map<uint32_t, Ptr<RdmaQueuePair>> m_senders;
    std::unordered_map<uint32_t, Ptr<RdmaReceiveQueuePair>> m_receivers;
    std::unordered_map<uint32_t, Ptr<Ipv4Route>> m_routes;

    std::vector<Ptr<RdmaQueuePair>> m_active; //!< served in round robin
    size_t m_nextActive{0};
    std::deque<Control> m_control;
    EventId m_paceEvent;
    bool m_sending{false};

    uint64_t m_dataPackets{0};
    uint64_t m_controlPackets{0};
    uint64_t m_unknownQp{0};

    TracedCallback<Ptr<RdmaQueuePair>> m_flowStart;
    TracedCallback<Ptr<RdmaQueuePair>> m_flowFinish;
};

} // namespace ns3

#endif /* RDMA_NIC_H */
