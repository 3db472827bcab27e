/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Finds the flows of an unmodified ns-3 script (BulkSend/PacketSink over TCP,
 * OnOff/UDP, and flows of other models through FlowSources), follows their
 * lifecycle and attributes their packets, and is the one object the Python
 * controller and memo driver call: the rest is its parts' (FlowRegistry,
 * RouteWalker, RateSampler, ProgressCrediter, StartGate). What depends on the
 * kind of flow is its adapter's (TrackedFlow). Everything here runs per
 * packet; the Python controller only polls it.
 */
#ifndef WORMHOLE_FLOW_TRACKER_H
#define WORMHOLE_FLOW_TRACKER_H

#include "ns3/application.h"
#include "ns3/callback.h"
#include "ns3/event-id.h"
#include "ns3/ipv4-address.h"
#include "ns3/nstime.h"
#include "ns3/object.h"
#include "ns3/traced-callback.h"

#include "flow-record.h"
#include "flow-registry.h"
#include "progress-crediter.h"
#include "random-sources.h"
#include "rate-sampler.h"
#include "route-walker.h"
#include "start-gate.h"
#include "tcp-flow-state.h"
#include "tracked-flow.h"
#include "created-flows.h"
#include "lookup-facts.h"
#include "upcoming-flow.h"
#include "workload-forecast.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{

class Packet;
class PacketSink;
class Address;
class Node;
class FlowMonitor;
class Ipv4FlowClassifier;
class Ipv4Header;
class ApplicationFlow;
class FlowSource;
class WorkloadOracle;

/**
 * @brief Per-flow counters and crediting for the flows of a script.
 *
 * A flow is one sending application (BulkSendApplication over TCP, or
 * OnOffApplication over UDP) and the PacketSink that receives it, or a flow
 * a registered FlowSource finds (an RDMA queue pair, with the wormhole-rdma
 * module). Flows are numbered in discovery order (node, then application
 * index, then each flow source's own order), which is the same in every run
 * of a script.
 *
 * The tracker depends on ns-3 only. Models plug in through three extension
 * points, registered by adapter modules and instantiated by every tracker
 * when it is created: FlowSource (flows of other kinds), RouteOracle (the
 * own route of a flow through per-flow ECMP routing) and WorkloadOracle
 * (workloads that create flows while running, and their upcoming flows).
 *
 * The tracker itself finds flows (discovery, at the start and while the
 * simulation runs), follows their lifecycle (start, finish: its traces and
 * the flow event callback) and tags their packets. It owns one of each of
 * its parts, and its other methods hand a flow number to the part that owns
 * the concept: the flows and their state (FlowRegistry), their routes
 * (RouteWalker), rate samples (RateSampler), crediting and time shifting
 * (ProgressCrediter), gated and held starts (StartGate). The per-flow getters
 * stay here because the Python side calls them by flow number through one
 * object (core/ports.py's TrackerPort); a C++ caller can take the flow
 * itself (GetFlow).
 */
class FlowTracker : public Object
{
  public:
    /** Lifecycle of a flow (FlowRegistry::State). */
    enum State
    {
        PENDING = FlowRegistry::PENDING,   //!< application not started sending yet
        ACTIVE = FlowRegistry::ACTIVE,     //!< sending; counted in its partition
        FINISHED = FlowRegistry::FINISHED, //!< sink received every byte (sized flows only)
    };

    static TypeId GetTypeId();
    FlowTracker();

    /**
     * Scan every node for sending applications and sinks not seen yet, then
     * ask each flow source about the node (RDMA queue pairs that have started
     * or have a start event), and hook their traces. Safe to call again when a script adds flows: only those
     * added since the last call are looked at. When the simulator
     * accelerates, also hook every point-to-point device not seen yet, so
     * each packet's transmission is attributed to its own flow.
     * @return the number of flows found by this call.
     */
    uint32_t Discover();

    uint32_t GetNFlows() const;
    /** @return the flow a tracker index names (what an observer of the tracker's traces reads). */
    Ptr<TrackedFlow> GetFlow(uint32_t flow) const;

    /**
     * Attribute the pending start event of every flow that has not started
     * (and whose start was not attributed yet) to the flow's own tag. Call
     * once the applications are initialized. @return the number of start
     * events attributed.
     */
    uint32_t AttributeStartEvents();

    /**
     * Follow the flows created while the simulation runs, and the simulator's
     * unattributed and workload events. Whatever creates a flow (a workload,
     * a user's callback in any event, Python or C++) enters the flow's node
     * (WormholeSimulatorImpl::SetAfterNodesEnteredHook): after that event,
     * only the entered nodes are looked at, and the new flows' start events
     * are attributed once their applications are initialized. `onChange` is
     * called after an event that created flows or attributed a start, after
     * every unattributed event (it may have changed anything), and after a
     * workload event while some flow's start event is not scheduled yet. The
     * common cases, a packet event or a workload event that created nothing
     * (a compute task ending), stay in C++ and scan nothing. `onChange` is
     * told whether the event that ran was unattributed (a skip cannot bound
     * what it did).
     */
    void WatchUnattributedEvents(Callback<void, bool> onChange);
    /**
     * In a run that accelerates nothing (a baseline's WormholeBaselineSimulatorImpl,
     * or the accelerator's simulator with fast-forwarding off), find the flows
     * created while the simulation runs, as an accelerated run does: after each
     * event that entered a node, that node is looked at. Nothing else is done per
     * event, so the baseline stays plain ns-3. Does nothing under another simulator.
     */
    void FollowRunTimeFlows();
    /**
     * Whether an unattributed event that created no flow is reported to
     * `onChange` (true, the default): the controller turns it off while no
     * skip is in progress and nothing it keeps could be changed by such an
     * event, so a script made of unattributed events (a UDP echo) never calls
     * into Python.
     */
    void SetUnattributedEventsWatched(bool watched);

    /**
     * @return the links a flow that has not started will use, from the routing
     * tables as they are now, in hop order: the data path's hop count, the data
     * path, then the reverse (ACK) path (none for UDP); no links if unknown. For
     * a started flow, its actual links. One route walk and one crossing for both
     * paths, which the memo and the controller read for every flow.
     */
    std::vector<uint64_t> GetPlannedRoute(uint32_t flow) const;
    /**
     * @return the links (data path, then reverse path for TCP) a flow between
     * two nodes with these ports would use, as GetPlannedRoute finds them.
     */
    std::vector<uint64_t> GetRouteBetween(Ptr<Node> src,
                                          Ptr<Node> dst,
                                          uint16_t srcPort,
                                          uint16_t dstPort,
                                          bool tcp) const;
    /**
     * @return the flows the script's workloads will start within `horizon` at
     * times already known (WorkloadOracle::GetUpcomingFlows; with the
     * wormhole-datacenter module, every FlowDag's), every oracle's in turn.
     * Each tracked flow in @p ending is taken to end at the matching time of
     * @p endsNs (ns), and each flow to come in @p toCome (as an earlier call
     * returned it) at the matching time of @p toComeEndsNs: what they release
     * is then known too. With @p earliest, every flow that may start within
     * the horizon, at the earliest it may (WorkloadOracle::GetUpcomingFlows).
     */
    std::vector<UpcomingFlow> GetUpcomingFlows(Time horizon,
                                               const std::vector<uint32_t>& ending = {},
                                               const std::vector<int64_t>& endsNs = {},
                                               const std::vector<UpcomingFlow>& toCome = {},
                                               const std::vector<int64_t>& toComeEndsNs = {},
                                               bool earliest = false) const;
    /**
     * @return the earliest time (absolute) at which a workload may start a
     * flow whose data or ACK path loads one of @p links, within @p horizon
     * from now: GetUpcomingFlows with @p earliest (every running flow taken
     * to end now, every flow to come to end as it starts), so a lower bound
     * of when anything the run cannot foresee yet may reach those links.
     * Time::Max() if no flow may. Route walks stay in C++: one crossing.
     */
    Time GetEarliestReleaseOn(const std::vector<uint64_t>& links, Time horizon) const;
    /**
     * @return what a caller outside C++ reads of each of @p flows, flat, six
     * numbers a flow: start (ns), source node id, destination node id, source
     * port, destination port, the workload's id of the flow. One crossing for
     * all of them: the memo reads hundreds of upcoming flows per lookup, and
     * five crossings each cost moe-medium's warm run a tenth of its time.
     */
    static std::vector<int64_t> GetUpcomingFlowFields(const std::vector<UpcomingFlow>& flows);
    /**
     * @return the routes of the flows of @p flows at @p indices, as
     * GetRouteBetween finds them (data path, then reverse path), each link
     * once and in increasing order, flat: each flow's number of links, then
     * its links (WorkloadForecast::GetRoutes, which walks each once). One
     * crossing for every flow a lookup meets for the first time, rather than a
     * GetRouteBetween and the reads of its nodes and ports for each.
     */
    std::vector<uint64_t> GetUpcomingFlowRoutes(const std::vector<UpcomingFlow>& flows,
                                                const std::vector<uint32_t>& indices) const;
    /**
     * WorkloadForecast::GetUnforeseeable, its lists in one buffer of @p size
     * numbers, as a caller across the Python boundary hands it (a numpy
     * array: a list converted to a std::vector costs that call several times
     * over): @p nLinks links, then each ending flow and its end (ns), then
     * @p nOwn flows of the episode's own. Throws std::invalid_argument if
     * the sizes do not add up.
     */
    std::vector<int64_t> GetUnforeseeable(int64_t horizonNs,
                                          int64_t beyondNs,
                                          const int64_t* query,
                                          size_t size,
                                          uint32_t nLinks,
                                          uint32_t nOwn) const;
    /**
     * WorkloadForecast::GetDue, the tracked flows' ends in one buffer of @p
     * size numbers (each flow, then its end in ns), as a caller across the
     * Python boundary hands it (a numpy array). Throws std::invalid_argument
     * for an odd size.
     */
    std::vector<int64_t> GetUpcomingDue(int64_t horizonNs,
                                        const int64_t* ends,
                                        size_t size,
                                        uint32_t knownRoutes) const;
    /**
     * CreatedFlows::Take: the flows numbered @p from or more, what each is
     * and, with @p gate, its start gated, in one crossing.
     */
    std::vector<int64_t> TakeCreatedFlows(uint32_t from, bool gate);
    /**
     * @return GetStartEventUid of each of the @p size flows at @p flows (a
     * numpy array across the Python boundary): one crossing for a batch of
     * gated starts.
     */
    std::vector<int64_t> GetStartEventUids(const int64_t* flows, size_t size) const;
    /**
     * LookupFacts::Read: of the @p size flows at @p flows (a numpy array
     * across the Python boundary), with @p routes their planned routes, with
     * @p identities each one's pacing, kind, fingerprint and planned
     * congestion control, in one crossing for a lookup's batch.
     */
    FlowFacts GetLookupFacts(const int64_t* flows, size_t size, bool routes, bool identities) const;
    /**
     * Replace each of the @p size links at @p links (a numpy array across
     * the Python boundary, read back in place) by GetQueuedPackets of it:
     * one crossing, and no vector made, for the links a memo key or a
     * batch's joiners read.
     */
    void ReadQueuedPackets(int64_t* links, size_t size) const;
    /**
     * DecideStart for each pair of a flow and its decision (non-zero: held)
     * among the @p size numbers at @p decisions (a numpy array across the
     * Python boundary), in order: one crossing for a batch's decided starts.
     * Throws std::invalid_argument for an odd size.
     */
    void DecideStarts(const int64_t* decisions, size_t size);

    // What a flow is
    std::string GetKind(uint32_t flow) const;
    uint32_t GetSrcNode(uint32_t flow) const;
    uint32_t GetDstNode(uint32_t flow) const;
    std::string GetSrcAddress(uint32_t flow) const;
    std::string GetDstAddress(uint32_t flow) const;
    uint16_t GetSrcPort(uint32_t flow) const;
    uint16_t GetDstPort(uint32_t flow) const;
    /** @return the flow's size in bytes, 0 if unlimited. */
    uint64_t GetSize(uint32_t flow) const;
    /** @return the application start time. */
    Time GetStartTime(uint32_t flow) const;
    /** @return the configured sending rate in bit/s of an OnOff flow, 0 for others. */
    double GetAppRate(uint32_t flow) const;
    /** @return the TypeId name of the flow's congestion control (TCP's, RDMA's; "" for UDP). */
    std::string GetCongestionOps(uint32_t flow) const;
    /** @return the TypeId name of the sender's RTT estimator (TCP, once it sends), "" if it has none. */
    std::string GetRttEstimator(uint32_t flow) const;
    /** @return the flow's attribution tag (see WormholeSimulatorImpl). */
    uint32_t GetTag(uint32_t flow) const;
    /**
     * @return what the flow is and where it goes in one call (GetKind ...
     * GetTag, the same values), for readers across the Python boundary.
     */
    FlowRecord GetFlowRecord(uint32_t flow) const;
    /** @return what the flow produced so far in one call (GetKind ... GetCredited, the same values). */
    FlowOutcome GetFlowOutcome(uint32_t flow) const;
    /**
     * @return how long the flow takes alone on its idle path, as HPCC's fct.txt
     * reports it: the path's base RTT (the data path's and the reverse path's
     * propagation delays, plus one MTU-sized packet's transmission at every hop of
     * the data path) plus its bytes at the path's slowest link; zero if its path
     * or a link's rate is unknown.
     */
    Time GetStandaloneTime(uint32_t flow) const;

    // Where it goes
    /**
     * @return the directed links (egress ports, node << 16 | device index) of
     * the flow's data path; empty if the route cannot be derived without side
     * effects (random ECMP, on-demand routing protocols).
     */
    std::vector<uint64_t> GetPath(uint32_t flow) const;
    /** @return the links of the reverse (ACK) path of a TCP or RDMA flow; empty for UDP. */
    std::vector<uint64_t> GetReversePath(uint32_t flow) const;
    /** @return true if the flow sends at a constant rate (TCP, RDMA, or OnOff that is never off). */
    bool IsConstantRate(uint32_t flow) const;
    /** @return true if a rate-based congestion control paces the flow (TrackedFlow::IsPaced: RDMA). */
    bool IsPaced(uint32_t flow) const;
    /** @return the rate in bit/s of a link id. */
    double GetLinkRate(uint64_t link) const;
    /**
     * @return the packets queued at a link's egress port: its root queue disc
     * (if traffic control is installed) plus the device's own queue.
     */
    uint32_t GetQueuedPackets(uint64_t link) const;
    /** @return the propagation delay of a link id. */
    Time GetLinkDelay(uint64_t link) const;

    // How far it is
    int GetState(uint32_t flow) const;
    /**
     * @return true if the flow's application has started but it has sent no
     * data yet, and no memo replay holds it: a TCP handshake whose packets are
     * on its links, queued among other flows' packets, before it is active.
     */
    bool IsConnecting(uint32_t flow) const;
    /** @return bytes the receiver has, received or credited (what GetTotalRx() says). */
    uint64_t GetDelivered(uint32_t flow) const;
    /**
     * @return PacketSink::GetTotalRx() of the flow's sink (0 if it has none);
     * for an RDMA flow, the bytes its receive queue pair holds.
     */
    uint64_t GetSinkTotalRx(uint32_t flow) const;
    /** @return bytes credited by fast-forwards. */
    uint64_t GetCredited(uint32_t flow) const;
    /**
     * @return bytes the sender could still give up to a credit: its socket's
     * never-sent bytes, and all but the last of the bytes its application has
     * yet to write (a credit never makes an application close its socket);
     * an RDMA flow's whole packets never sent but its last.
     */
    uint64_t GetSendable(uint32_t flow) const;
    /**
     * @return true if none of the flow's data or ACKs is in the network: every
     * byte sent was received, and every byte received was acknowledged or its
     * ACK is held back by the receiver's delayed-ACK timer. A quiet flow waits
     * on its own hosts' timers only. (Known for BulkSend TCP flows; false for
     * the others.)
     */
    bool IsQuiet(uint32_t flow) const;
    /** @return the time the last byte arrived, or -1 s while unfinished. */
    Time GetFinishTime(uint32_t flow) const;
    /**
     * @return why what drives the flow's sender forbids a skip, as far as it
     * has been seen (TrackedFlow::SkipBlocker: a script writing to its own
     * socket from a timer, say); SKIPPABLE (0) if nothing does.
     */
    int GetSkipBlocker(uint32_t flow) const;

    // Sampling (the RateSampler's: see it for what each sample holds)
    /** RateSampler::Configure: sample each `period`, call `onWindow` every `samplesPerWindow`. */
    void ConfigureSampling(Time period, uint32_t samplesPerWindow, Callback<void> onWindow);
    /** RateSampler::SetWindowsReported */
    void SetSamplesReported(bool reported);
    /** RateSampler::GetSampleCount */
    uint64_t GetSampleCount() const;
    /** RateSampler::SetSampled */
    void SetSampled(uint32_t flow, bool sampled);
    /** RateSampler::ClearSamples */
    void ClearSamples(const std::vector<uint32_t>& flows);
    /** RateSampler::GetSamples */
    std::vector<uint64_t> GetSamples(uint32_t flow) const;
    /** RateSampler::GetSentSamples */
    std::vector<uint64_t> GetSentSamples(uint32_t flow) const;
    /** RateSampler::GetSendingRateSamples */
    std::vector<double> GetSendingRateSamples(uint32_t flow) const;
    /** RateSampler::GetNotificationSamples */
    std::vector<uint64_t> GetNotificationSamples(uint32_t flow) const;
    /** RateSampler::GetWindowSamples */
    std::vector<uint64_t> GetWindowSamples(uint32_t flow) const;
    /** RateSampler::TakeProgressedFlows */
    std::vector<uint32_t> TakeProgressedFlows();

    /** Called (from a system event, right after the packet that caused it) on start and finish. */
    void SetFlowEventCallback(Callback<void, uint32_t, int> cb);

    /**
     * Credit a flow with bytes it would have delivered while fast-forwarded:
     * the sink's counter grows, and the sender gives up as many not-yet-sent
     * bytes: first the tail of its socket's never-sent buffer, then bytes its
     * application has yet to write, always leaving the application at least
     * one, so that it closes its socket only after a real write (a skip-back
     * can then hand the bytes back) and the flow ends with real packets. An
     * RDMA flow is credited whole packets never sent, on both ends, keeping
     * its last packet (RdmaQueuePair::Credit). A FlowMonitor is credited too.
     * @return the bytes credited (less than asked if the sender has too few).
     */
    uint64_t Credit(uint32_t flow, uint64_t bytes);

    /**
     * Take back bytes credited by a skip that is being cut short (skip-back):
     * the sink's counter shrinks and the sender has the bytes to send again
     * (its application writes them again, or, if it had closed its socket
     * before the skip, they go back into the socket's buffer; an RDMA queue
     * pair sends those packets again).
     * @return the bytes taken back.
     */
    uint64_t Uncredit(uint32_t flow, uint64_t bytes);

    /**
     * The flow's pending events were moved by @p delta (a skip, or a skip cut
     * short): move the absolute times its objects keep (an RDMA queue pair's
     * pacing clock and CNP times, HPCC's telemetry timestamps) and the delays
     * of its packets a FlowMonitor tracks in flight (ShiftMonitoredPackets).
     */
    void ShiftTimes(uint32_t flow, Time delta);

    // What a memo needs
    /**
     * @return every attribute that shapes how the flow behaves, as one
     * canonical string: its size, its application, the TCP stacks of both
     * hosts and the configured defaults of the sockets and congestion control
     * they create (so the string is the same before the flow starts as after).
     */
    std::string GetFlowFingerprint(uint32_t flow) const;
    /** @return the congestion control the flow's sender gets, known before it starts ("" if none). */
    std::string GetPlannedCongestionOps(uint32_t flow) const;
    /**
     * @return every attribute that shapes a link (egress port): device, its
     * transmit queue, channel and root queue disc, as one canonical string.
     */
    std::string GetLinkFingerprint(uint64_t link) const;
    /** @return true if nothing on the link drops packets at random (no receive error model). */
    bool IsLossless(uint64_t link) const;
    /**
     * @return why a packet crossing the link may make a model draw random
     * numbers (wormhole::DescribeRandomSources of its node's routing, its
     * queue discs, device, transmit queue and the devices it sends to); empty
     * if no model there is known to.
     */
    std::vector<RandomSource> GetLinkRandomSources(uint64_t link) const;
    /** @return the sender state of a TCP flow (cwnd 0 for UDP or before it connects). */
    TcpFlowState GetTcpState(uint32_t flow) const;
    /** Put a TCP flow's sender in a recorded state. @return false for a flow that is not TCP. */
    bool SetTcpState(uint32_t flow, const TcpFlowState& state);
    /**
     * @return the state of the flow's congestion control as numbers, in its
     * kind's order (TCP: TcpStateVector's; RDMA: RdmaCongestionControl::GetState's);
     * empty if it has none yet.
     */
    std::vector<double> GetCongestionState(uint32_t flow) const;
    /**
     * Keep (or stop keeping) a snapshot of the flow's progress and sender
     * state at each sampling instant; stopping drops the kept snapshots.
     * Snapshots survive skips (sampling just pauses), unlike rate samples.
     */
    void SetSnapshotting(uint32_t flow, bool on);
    /** @return the kept snapshots of a flow, oldest first. */
    std::vector<FlowSnapshot> GetSnapshots(uint32_t flow) const;

    // Deciding a flow's start (memo replay)
    /**
     * Gate a flow's pending start event (WormholeSimulatorImpl::Gate): it stays
     * where it is in the queue, and when its turn comes the gated-start callback
     * is told the flow, unless DecideStart was called for it already; the event
     * then runs as it is (the flow starts for real) or, if decided so, the flow
     * starts held in its place. A flow the memo never replays thus starts at its
     * own place among the events of its instant, as in plain ns-3.
     * @return the start time, or -1 s if no start was pending (or its node is
     * not initialized yet).
     */
    Time GateStart(uint32_t flow);
    /** Who decides a gated flow's start, when its start event is next: it calls DecideStart. */
    void SetGatedStartCallback(Callback<void, uint32_t> decide);
    /**
     * How a gated flow starts when its start event runs: held (see StartHeld's
     * description below) or for real.
     */
    void DecideStart(uint32_t flow, bool held);
    /**
     * @return the uid of a pending flow's start event (0 if none): flows starting at
     * the same time start in this order in a plain run, and so they must here.
     */
    uint32_t GetStartEventUid(uint32_t flow) const;
    /*
     * Held: a TCP flow connects (a real handshake) but its socket takes no data,
     * so it sends none, until ResumeHeld; an RDMA queue pair, connected since its
     * creation, does not start. What a replayed flow does, so that a replay that
     * must stop half-way resumes a connected flow rather than one that has to
     * connect first.
     */
    /**
     * Let a held TCP flow send: its socket takes data again, its sender gets
     * the given state, and its application writes (in an event attributed to the flow).
     */
    void ResumeHeld(uint32_t flow, const TcpFlowState& state);
    /**
     * Let a held flow of any kind send, its congestion control in the given
     * state (GetCongestionState's layout; empty: as it is), in an event
     * attributed to the flow: a TCP socket takes data again, an RDMA queue
     * pair starts.
     */
    void ResumeHeld(uint32_t flow, const std::vector<double>& state);
    /**
     * Complete a flow that never started, as a replay of a recorded episode
     * says it completes now: its sink's count reaches the flow's size, its
     * application has written everything, and the sink's Rx trace fires once
     * with a packet of the bytes it lacked, from the flow's source, so that
     * whatever waits for the flow (a FlowDag, a user's trace sink) sees it
     * end. An RDMA flow's queue pairs hold every byte, and the NIC's
     * FlowFinish trace and the flow's completion callback fire.
     */
    void CompleteVirtually(uint32_t flow);
    /**
     * Let the flow's next CompleteVirtually leave the end of its transfer (an
     * RDMA receiver's last ACK) off the wire, if the flow can and every link
     * of its reverse path is idle now (LinkIdle): sent then, it would cross
     * them alone. @return whether it is owed.
     */
    bool OweEndOfTransfer(uint32_t flow);
    /** Put on the wire the end of transfer a virtual completion owed (OweEndOfTransfer). */
    void SendOwedEndOfTransfer(uint32_t flow);

    /**
     * Keep a script's FlowMonitor consistent with skips: credited bytes are
     * counted as packets of the flow (and its ACK flow), and the packets it
     * tracks in flight have the skipped time removed from their delays.
     */
    void AddFlowMonitor(Ptr<FlowMonitor> monitor, Ptr<Ipv4FlowClassifier> classifier);
    /** Shift the in-flight packets FlowMonitors track for a flow (both directions) by delta. */
    void ShiftMonitoredPackets(uint32_t flow, Time delta);

    // For flow sources (FlowSource): how the flows they find join the tracker
    /**
     * Number a newly found flow, give it a tag, and tag its packets if their
     * ports are known. @return its number.
     */
    uint32_t AddFlow(Ptr<TrackedFlow> flow);
    /**
     * A flow sent its first data (from the event that sent it): its events
     * carry its tag from now on and, the first time, it becomes active.
     */
    void NotifyFlowStarted(uint32_t flow);
    /** An active flow's receiver holds every byte: it is finished. */
    void NotifyFlowFinished(uint32_t flow);

  private:
    /** Find the sending applications and sinks a node got since the last scan. */
    void DiscoverApplications(Ptr<Node> node);
    /** Find the flows a node got since it was last looked at (applications, then flow sources'). */
    void DiscoverNode(Ptr<Node> node);
    /** After nodes were looked at: sinks of sinkless flows, hooks on new nodes and workloads. */
    void FinishDiscovery();
    /** Look at the nodes entered since the last look (WormholeSimulatorImpl::TakeEnteredNodes). */
    void DiscoverEnteredNodes();
    /** A baseline run's event entered a node: look for new flows there. */
    void OnBaselineNodeEntered(uint32_t node);
    void AfterNodesEntered();
    void OnAppTx(uint32_t flow, Ptr<const Packet> packet);
    /** The flow sent its first data: learn its source, route and tags; it is active. */
    void OnFlowStarted(uint32_t flow);
    /** The flow's receiver holds every byte. */
    void OnFlowFinished(uint32_t flow);
    /** Remember which flow a packet between these endpoints belongs to (both directions). */
    void RegisterEndpoints(uint32_t flow);
    /** Put the flow tag on a tracked flow's packet leaving its host. */
    void OnSendOutgoing(const Ipv4Header& header, Ptr<const Packet> packet, uint32_t interface);
    /** Attribute the transmission that starts to the packet's flow. */
    void OnPhyTxBegin(Ptr<const Packet> packet);
    /** Hook the devices and IPv4 stacks of nodes not seen yet (accelerated runs only). */
    void HookNewNodes();
    /** Follow the releases of workloads not seen yet: each creates a flow's applications. */
    void HookNewWorkloads();
    void OnWorkloadRelease();
    void AfterUnattributedEvent();
    void OnSinkRx(Ptr<const Packet> packet, const Address& from, const Address& local);
    void NotifyFlowEvent(uint32_t flow, int state);
    Ptr<PacketSink> FindSink(Ipv4Address dst, uint16_t port) const;
    /** SampleDepth, kept by the RateSampler. */
    void SetSampleDepth(uint32_t depth);
    uint32_t GetSampleDepth() const;

    // the parts
    Ptr<FlowRegistry> m_registry;
    Ptr<RouteWalker> m_routes;
    Ptr<RateSampler> m_sampler;
    Ptr<ProgressCrediter> m_crediter;
    Ptr<StartGate> m_gate;
    Ptr<WorkloadForecast> m_forecast; //!< a lookup's questions to the workload oracles
    Ptr<CreatedFlows> m_created;      //!< the flows an event created, read in one crossing
    Ptr<LookupFacts> m_facts;         //!< a lookup's flows' routes and identities, read in one crossing

    // discovery
    std::unordered_map<uint32_t, uint32_t> m_appsSeen; //!< node id -> applications scanned
    uint32_t m_nodesHooked{0};                          //!< nodes whose devices are hooked
    std::vector<Ptr<FlowSource>> m_flowSources;         //!< one of each registered type
    std::vector<Ptr<WorkloadOracle>> m_workloadOracles; //!< one of each registered type
    std::vector<uint32_t> m_sinkless;          //!< flows whose sink is not found yet
    std::vector<uint32_t> m_startsToAttribute; //!< pending flows whose start is not attributed yet
    std::unordered_map<uint16_t, std::vector<Ptr<PacketSink>>> m_sinksByPort;

    // flows found while the simulation runs
    Callback<void, bool> m_onUnattributedChange;
    std::size_t m_flowsReported{0}; //!< flows m_onUnattributedChange has been told about
    uint32_t m_startsAttributedUnreported{0}; //!< starts attributed since it was last called
    bool m_unattributedWatched{true}; //!< report unattributed events that created nothing

    // packets and their flows
    //! (ip << 16 | port) of an application flow's source -> the flow and its number
    std::unordered_map<uint64_t, std::pair<uint32_t, Ptr<ApplicationFlow>>> m_flowBySource;
    /** Hash of a packet's (source ip << 16 | port, destination ip << 16 | port). */
    struct EndpointsHash
    {
        std::size_t operator()(const std::pair<uint64_t, uint64_t>& key) const
        {
            return std::hash<uint64_t>()(key.first * 0x9E3779B97F4A7C15ULL ^ key.second);
        }
    };

    //! endpoints of a tracked flow's data or ACK packets -> the flow's tag
    std::unordered_map<std::pair<uint64_t, uint64_t>, uint32_t, EndpointsHash> m_tagByEndpoints;

    // lifecycle
    Callback<void, uint32_t, int> m_onFlowEvent;
    TracedCallback<uint32_t> m_flowStartTrace;
    TracedCallback<uint32_t> m_flowFinishTrace;
};

} // namespace ns3

#endif /* WORMHOLE_FLOW_TRACKER_H */
