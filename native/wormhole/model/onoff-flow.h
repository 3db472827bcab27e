/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * An OnOffApplication's flow (over UDP, or TCP) and its PacketSink.
 */
#ifndef WORMHOLE_ONOFF_FLOW_H
#define WORMHOLE_ONOFF_FLOW_H

#include "application-flow.h"

namespace ns3
{

class OnOffApplication;

/**
 * @brief An OnOff flow: kinds "onoff-udp" and "onoff-tcp".
 *
 * It sends at its configured rate while on; it is constant-rate if its off
 * time is a constant 0. A credit is whole packets of its PacketSize taken
 * from the bytes it has yet to send (its last packet, and so its total,
 * depend on where its count stands).
 */
class OnOffFlow : public ApplicationFlow
{
  public:
    static TypeId GetTypeId();
    OnOffFlow();

    std::string GetKind() const override;
    double GetAppRate() const override;
    bool IsConstantRate() const override;
    uint64_t GetSendable() const override;
    /** True once the application's stop event has run: OnOff never restarts. */
    bool HasStopped() const override;

  protected:
    Ptr<Socket> GetSocket() const override;
    uint64_t& SentCounter() const override;
    uint64_t TakeFromSender(uint64_t bytes) override;
    uint64_t GiveBackToSender(uint64_t bytes) override;
    uint64_t AppCreditable() const override;

  private:
    Ptr<OnOffApplication> OnOff() const;
};

} // namespace ns3

#endif /* WORMHOLE_ONOFF_FLOW_H */
