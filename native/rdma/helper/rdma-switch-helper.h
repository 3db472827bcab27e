/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Configures switch egress ports for RoCEv2: DCQCN's ECN marking with ns-3's
 * RED, a strict-priority control class, and optionally PFC.
 */
#ifndef RDMA_SWITCH_HELPER_H
#define RDMA_SWITCH_HELPER_H

#include "ns3/node-container.h"
#include "ns3/queue-disc-container.h"

#include <cstdint>

namespace ns3
{

class NetDevice;

/**
 * @brief Installs an RdmaEgressQueueDisc on every port of switch nodes.
 *
 * Data class: a RedQueueDisc in byte mode set up as DCQCN's marker: QW = 1
 * (the instantaneous queue), MinTh = Kmin, MaxTh = Kmax, LInterm = 1 / Pmax,
 * UseEcn, marks instead of drops above Kmax (UseHardDrop off, Gentle off),
 * no wait between marks, MaxSize = the port's buffer. The marking probability
 * grows linearly from 0 at Kmin to Pmax at Kmax and is 1 above (RED spaces
 * the marks uniformly). Unless SetEcn() is called, Kmin, Kmax and Pmax
 * follow the link rate as in HPCC's and SimAI's ns-3 configurations
 * (KMIN_MAP / KMAX_MAP / PMAX_MAP: 100 KB / 400 KB at 25 Gb/s, 400 KB /
 * 1600 KB at 100 Gb/s, Pmax 0.2): Kmin = 4 kB and Kmax = 16 kB per Gb/s.
 * Control class: a FIFO. The device transmit queue is cut to one packet so
 * that the queue builds in the queue disc, where RED and PFC see it.
 *
 * With EnablePfc(), each switch also gets an RdmaPfcSwitch with the given
 * thresholds, every port an RdmaPfcPort, and the egress queue discs pause
 * their data class while their port is paused. With EnableTelemetry(), the
 * egress queue discs stamp HPCC's INT records. Call Install() before the
 * simulation starts, after addresses are assigned.
 */
class RdmaSwitchHelper
{
  public:
    RdmaSwitchHelper();

    /** Mark between @p kminBytes and @p kmaxBytes with probability up to @p pmax. */
    void SetEcn(uint32_t kminBytes, uint32_t kmaxBytes, double pmax);
    /** Bytes of data each egress port can hold (default 32 MB: SimAI.conf BUFFER_SIZE). */
    void SetBufferSize(uint32_t bytes);
    /** Mean data packet size RED uses in byte mode (default 1048: 1000 B payload + headers). */
    void SetMeanPacketSize(uint32_t bytes);
    /** Turn PFC on with these per-ingress-port thresholds (see RdmaPfcSwitch). */
    void EnablePfc(uint64_t xoffBytes, uint64_t xonBytes, uint64_t headroomBytes);
    /** Stamp INT records on data packets that carry an INT header (for HPCC). */
    void EnableTelemetry();

    /** Configure every non-loopback port of each node; return the root queue discs. */
    QueueDiscContainer Install(NodeContainer switches) const;
    QueueDiscContainer Install(Ptr<Node> node) const;

    /**
     * Give the RED queue discs below @p roots fixed random streams from
     * @p stream on; @return the number of streams used.
     */
    static int64_t AssignStreams(QueueDiscContainer roots, int64_t stream);

  private:
    Ptr<QueueDisc> InstallPort(Ptr<NetDevice> device) const;

    bool m_ecnSet{false};
    uint32_t m_kmin{0};
    uint32_t m_kmax{0};
    double m_pmax{0.2};
    uint32_t m_bufferBytes;
    uint32_t m_meanPacketSize;
    bool m_pfc{false};
    uint64_t m_xoff{0};
    uint64_t m_xon{0};
    uint64_t m_headroom{0};
    bool m_telemetry{false};
};

} // namespace ns3

#endif /* RDMA_SWITCH_HELPER_H */
