/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * The PFC pause state of one transmitting port.
 */
#ifndef RDMA_PFC_PORT_H
#define RDMA_PFC_PORT_H

#include "ns3/callback.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include <cstdint>

namespace ns3
{

/**
 * @brief Whether a port may transmit lossless (RDMA data) traffic.
 *
 * Aggregated to a NetDevice. The switch downstream of the link (RdmaPfcSwitch)
 * calls ReceivePause() and ReceiveResume() one propagation delay after its
 * ingress buffer of this link crosses XOFF or XON. Whatever transmits on the
 * device (an RdmaNic, or an RdmaEgressQueueDisc on a switch) stops handing
 * lossless packets to the device while IsPaused() and is restarted by the
 * resume callback; control packets (ACK, NAK, CNP) travel on another priority
 * and are never paused. A PAUSE holds until the RESUME (no pause quanta).
 */
class RdmaPfcPort : public Object
{
  public:
    static TypeId GetTypeId();
    RdmaPfcPort();

    /** A PAUSE frame for the lossless priority arrived. */
    void ReceivePause();
    /** A RESUME (PAUSE with zero quanta) arrived. */
    void ReceiveResume();
    bool IsPaused() const;

    /** Called on every resume: the transmitter restarts. */
    void SetResumeCallback(Callback<void> resume);

    /** @return how many times this port went from running to paused. */
    uint32_t GetNPauses() const;
    /** @return total time spent paused, up to now. */
    Time GetPausedTime() const;

  private:
    void DoDispose() override;

    bool m_paused{false};
    uint32_t m_pauses{0};
    Time m_pausedSince;
    Time m_pausedTotal;
    Callback<void> m_resume;
    TracedCallback<bool> m_pauseTrace;
};

} // namespace ns3

#endif /* RDMA_PFC_PORT_H */
