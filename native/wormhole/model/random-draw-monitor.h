/*
 * SPDX-License-Identifier: GPL-2.0-only
 */
#ifndef WORMHOLE_RANDOM_DRAW_MONITOR_H
#define WORMHOLE_RANDOM_DRAW_MONITOR_H

#include "ns3/object.h"
#include "ns3/ptr.h"
#include "ns3/traced-callback.h"

#include <cstdint>

namespace ns3
{

class RngStream;

/**
 * @ingroup wormhole
 * @brief Sees every random number ns-3 draws, whichever model draws it.
 *
 * Every RandomVariableStream of ns-3 (RED's marking and dropping, random
 * ECMP, error models, applications' jitter, and any model of the user's)
 * draws through one function, RngStream::RandU01. A shortcut is sound only
 * if the outcome it stands in for does not depend on the draws the run
 * would make, so the accelerator must know which events drew: this monitor
 * fires its "Draw" trace source at every draw, and the simulator attributes
 * the draw to the running event's tag and node.
 *
 * ns-3 has no hook there, and the wheel's libraries are prebuilt, so the
 * monitor interposes on the call itself: every loaded library that calls
 * RandU01 through its procedure linkage table has that table's slot pointed
 * at the monitor, which counts and calls the real function. The draws, their
 * values and their order are unchanged. Where that is impossible (a library
 * linked with direct calls, a platform other than ELF), Install() returns
 * false and IsActive() says so: the accelerator then treats every episode as
 * one whose draws it cannot see.
 *
 * There is one monitor per process (Get()), installed once and never removed.
 */
class RandomDrawMonitor : public Object
{
  public:
    static TypeId GetTypeId();

    /** @return the process's monitor (created at the first call). */
    static Ptr<RandomDrawMonitor> Get();

    RandomDrawMonitor();

    /**
     * Interpose on RngStream::RandU01 in every loaded library that calls it
     * through its linkage table; idempotent.
     * @return true if draws are seen (IsActive).
     */
    bool Install();
    /** @return true once Install() has interposed somewhere: every draw is then counted. */
    bool IsActive() const;
    /** @return the number of library call sites interposed on. */
    uint32_t GetInterposedLibraries() const;
    /** @return the number of draws seen since Install(). */
    uint64_t GetDrawCount() const;

    /**
     * TracedCallback signature of a draw.
     * @param [in] stream the stream the number was drawn from.
     * @param [in] value the number drawn, in (0, 1).
     */
    typedef void (*DrawCallback)(const RngStream* stream, double value);

    /** Called by the interposed function for every draw, once it is made. */
    void NotifyDraw(const RngStream* stream, double value);

  private:
    uint32_t m_interposed{0};
    uint64_t m_draws{0};
    TracedCallback<const RngStream*, double> m_drawTrace;
};

} // namespace ns3

#endif /* WORMHOLE_RANDOM_DRAW_MONITOR_H */
