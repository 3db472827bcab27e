/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Priority flow control at a switch: per-ingress-port buffer accounting and
 * PAUSE / RESUME of the upstream port.
 */
#ifndef RDMA_PFC_SWITCH_H
#define RDMA_PFC_SWITCH_H

#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace ns3
{

class NetDevice;
class Packet;

/**
 * @brief The lossless-class buffer of a switch, accounted per ingress port.
 *
 * Aggregated to a switch node; RdmaSwitchHelper adds its ports. A data packet
 * (any IPv4 packet whose DSCP is not ControlDscp) is charged to the port it
 * arrived on (MacRx) until it starts leaving the switch (PhyTxBegin of its
 * egress device) or is dropped. When a port's bytes reach XoffBytes the
 * switch sends PAUSE to the device at the other end of that port's link;
 * when they fall to XonBytes, RESUME. PAUSE and RESUME are modelled out of
 * band: they reach the upstream RdmaPfcPort one propagation delay of the
 * link later and take no link capacity. A port may hold HeadroomBytes more
 * than XoffBytes, for what is in flight while the pause travels; the egress
 * queue disc drops a packet beyond that (counted, and traced).
 */
class RdmaPfcSwitch : public Object
{
  public:
    static TypeId GetTypeId();
    RdmaPfcSwitch();

    /** Account the lossless traffic arriving on, and leaving through, @p device. */
    void AddPort(Ptr<NetDevice> device);

    /**
     * Called by the egress queue disc for each data packet.
     * @return false if the packet's ingress port has used up its headroom;
     *         the packet is then forgotten (the caller drops it)
     */
    bool Admit(Ptr<const Packet> packet);
    /** A packet was dropped inside the switch: stop charging it. */
    void Forget(Ptr<const Packet> packet);

    /** @return lossless bytes held for ingress port @p ifIndex (device index on the node). */
    uint64_t GetIngressBytes(uint32_t ifIndex) const;
    /** @return PAUSE frames sent upstream of port @p ifIndex. */
    uint32_t GetNPausesSent(uint32_t ifIndex) const;
    /** @return PAUSE frames sent on all ports. */
    uint32_t GetNPausesSent() const;
    /** @return data packets dropped because their ingress port's headroom was full. */
    uint64_t GetHeadroomDrops() const;
    /** @return the most bytes any ingress port held. */
    uint64_t GetMaxIngressBytes() const;

    /** Trace signature of PauseSent: port (device index) and true for PAUSE, false for RESUME. */
    typedef void (*PauseTracedCallback)(uint32_t ifIndex, bool pause);

  private:
    /** Per-port state, indexed by device index. */
    struct Port
    {
        Ptr<NetDevice> device;
        uint64_t bytes{0};
        bool pausing{false};
        uint32_t pauses{0};
    };

    /** What a charged packet holds. */
    struct Charge
    {
        uint32_t ifIndex;
        uint32_t bytes;
    };

    void DoDispose() override;
    void Arrive(uint32_t ifIndex, Ptr<const Packet> packet);
    void Depart(Ptr<const Packet> packet);
    bool IsLossless(Ptr<const Packet> packet) const;
    /** Release @p charge; RESUME upstream when its port falls to XON. */
    void Release(const Charge& charge);
    /** Tell the device across the link of port @p ifIndex to pause or resume. */
    void Signal(uint32_t ifIndex, bool pause);

    uint64_t m_xoff;
    uint64_t m_xon;
    uint64_t m_headroom;
    uint8_t m_controlDscp;

    std::vector<Port> m_ports;
    std::unordered_map<uint64_t, Charge> m_charges; //!< by packet uid
    uint64_t m_headroomDrops{0};
    uint64_t m_maxIngress{0};
    bool m_ipv4Hooked{false};
    TracedCallback<uint32_t, bool> m_pauseTrace;
    TracedCallback<Ptr<const Packet>> m_headroomDropTrace;
};

} // namespace ns3

#endif /* RDMA_PFC_SWITCH_H */
