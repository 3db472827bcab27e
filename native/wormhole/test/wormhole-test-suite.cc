/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Invariants of the WormholeSimulatorImpl: a move shifts exactly the events of
 * one class (and walks only those), EventIds stay exact by uid after a move
 * (even when their old timestamp has passed, or a move back ran an event
 * earlier than its EventId says), a move back restores the times, and the
 * event count of a schedule is DefaultSimulatorImpl's; an event scheduled on a
 * node at the current instant enters the node. A TypeId's described defaults
 * follow Config::SetDefault. A skip moves Cubic's clocks, and only a Cubic's.
 * A link is idle only while nothing is queued or being sent on it.
 */
#include "ns3/attribute-fingerprint.h"
#include "ns3/config.h"
#include "ns3/global-value.h"
#include "ns3/link-properties.h"
#include "ns3/make-event.h"
#include "ns3/node-container.h"
#include "ns3/packet.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/private-access.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/uinteger.h"
#include "ns3/test.h"
#include "ns3/wormhole-simulator-impl.h"

#include <utility>
#include <vector>

using namespace ns3;

namespace
{

/** (mark, time in ns) of every Mark event that ran, in order. */
std::vector<std::pair<int, int64_t>> g_fired;

void
Mark(int id)
{
    g_fired.emplace_back(id, Simulator::Now().GetNanoSeconds());
}

EventId
ScheduleMark(double seconds, int id)
{
    return Simulator::Schedule(Seconds(seconds), &Mark, id);
}

/** Start a fresh simulator of the given implementation type. */
void
UseSimulator(const std::string& type)
{
    Simulator::Destroy();
    GlobalValue::Bind("SimulatorImplementationType", StringValue(type));
    g_fired.clear();
}

WormholeSimulatorImpl*
Impl()
{
    return dynamic_cast<WormholeSimulatorImpl*>(PeekPointer(Simulator::GetImplementation()));
}

/** Start a fresh wormhole simulator whose set-up events (those scheduled from now on) carry a new tag. */
uint32_t
UseTaggedSimulator()
{
    UseSimulator("ns3::WormholeSimulatorImpl");
    uint32_t tag = Impl()->NewTag();
    Impl()->AdoptTag(tag);
    return tag;
}

/** Base of the cases: every case leaves the default simulator selected. */
class SimulatorCase : public TestCase
{
  public:
    using TestCase::TestCase;

  protected:
    void DoTeardown() override
    {
        Simulator::Destroy();
        GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::DefaultSimulatorImpl"));
    }
};

/** Moving a class delays its events and leaves the others where they were. */
class MoveClassTestCase : public SimulatorCase
{
  public:
    MoveClassTestCase()
        : SimulatorCase("MoveClass shifts exactly the events of one class")
    {
    }

  private:
    void DoRun() override
    {
        UseSimulator("ns3::WormholeSimulatorImpl");
        WormholeSimulatorImpl* impl = Impl();
        NS_TEST_ASSERT_MSG_NE(impl, nullptr, "the wormhole simulator is selected");
        EventId untagged = ScheduleMark(1.5, 0);
        uint32_t tag = impl->NewTag();
        impl->AdoptTag(tag); // set-up code is unattributed: from now on, events carry the tag
        EventId a = ScheduleMark(1.0, 1);
        ScheduleMark(2.0, 2);
        uint64_t moved = 0;
        Time aLeft;
        Time untaggedLeft;
        bool aPending = false;
        impl->ScheduleSystem(Seconds(0.5), MakeEvent([&]() {
                                 moved = impl->MoveClass(impl->GetTagClass(tag), Seconds(1));
                                 aLeft = Simulator::GetDelayLeft(a);
                                 aPending = a.IsPending();
                                 untaggedLeft = Simulator::GetDelayLeft(untagged);
                             }));
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(moved, 2, "both tagged events moved");
        NS_TEST_EXPECT_MSG_EQ(aLeft, Seconds(1.5), "a moved event's delay left is its new one");
        NS_TEST_EXPECT_MSG_EQ(aPending, true, "a moved event is still pending by its uid");
        NS_TEST_EXPECT_MSG_EQ(untaggedLeft, Seconds(1), "an event of another class stays");
        std::vector<std::pair<int, int64_t>> expected{{0, 1500000000},
                                                      {1, 2000000000},
                                                      {2, 3000000000}};
        NS_TEST_EXPECT_MSG_EQ((g_fired == expected), true, "events ran at their moved times");
        NS_TEST_EXPECT_MSG_EQ(Simulator::GetEventCount(), 3, "system events are not counted");
        NS_TEST_EXPECT_MSG_EQ(impl->GetSystemEventCount(), 1, "one system event ran");
    }
};

/** Cancel, Remove, IsExpired and GetDelayLeft act on the moved events (by uid). */
class EventIdTestCase : public SimulatorCase
{
  public:
    EventIdTestCase()
        : SimulatorCase("EventIds stay exact after a move")
    {
    }

  private:
    void DoRun() override
    {
        uint32_t tag = UseTaggedSimulator();
        WormholeSimulatorImpl* impl = Impl();
        EventId cancelled = ScheduleMark(1.0, 1);
        EventId removed = ScheduleMark(1.2, 2);
        EventId kept = ScheduleMark(1.4, 3);
        bool cancelledExpired = false;
        bool removedExpired = false;
        bool keptPending = false;
        Time keptLeft;
        impl->ScheduleSystem(Seconds(0.5), MakeEvent([&]() {
                                 impl->MoveClass(tag, Seconds(2));
                                 // the EventIds still carry their old timestamps
                                 Simulator::Cancel(cancelled);
                                 Simulator::Remove(removed);
                                 cancelledExpired = cancelled.IsExpired();
                                 removedExpired = removed.IsExpired();
                                 keptPending = kept.IsPending();
                                 keptLeft = Simulator::GetDelayLeft(kept);
                             }));
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(cancelledExpired, true, "a cancelled moved event is expired");
        NS_TEST_EXPECT_MSG_EQ(removedExpired, true, "a removed moved event is expired");
        NS_TEST_EXPECT_MSG_EQ(keptPending, true, "an untouched moved event is pending");
        NS_TEST_EXPECT_MSG_EQ(keptLeft, Seconds(2.9), "its delay left counts from its new time");
        std::vector<std::pair<int, int64_t>> expected{{3, 3400000000}};
        NS_TEST_EXPECT_MSG_EQ((g_fired == expected), true, "only the kept event ran, moved");
    }
};

/** A move forward then back by the same amount leaves every time as it was. */
class MoveBackTestCase : public SimulatorCase
{
  public:
    MoveBackTestCase()
        : SimulatorCase("A move back restores the events' times")
    {
    }

  private:
    void DoRun() override
    {
        uint32_t tag = UseTaggedSimulator();
        WormholeSimulatorImpl* impl = Impl();
        EventId a = ScheduleMark(1.0, 1);
        ScheduleMark(2.0, 2);
        Time leftAfterForward;
        impl->ScheduleSystem(Seconds(0.5), MakeEvent([&]() {
                                 impl->MoveClass(tag, Seconds(3));
                                 leftAfterForward = Simulator::GetDelayLeft(a);
                             }));
        impl->ScheduleSystem(Seconds(0.6), MakeEvent([&]() {
                                 impl->MoveClass(tag, Seconds(-3));
                             }));
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(leftAfterForward, Seconds(3.5), "the forward move happened");
        std::vector<std::pair<int, int64_t>> expected{{1, 1000000000}, {2, 2000000000}};
        NS_TEST_EXPECT_MSG_EQ((g_fired == expected), true, "events ran at their original times");
    }
};

/** A move takes the events of the tags in its class, and only those, whatever their history. */
class MoveOnlyItsClassTestCase : public SimulatorCase
{
  public:
    MoveOnlyItsClassTestCase()
        : SimulatorCase("A move takes exactly the events of its class's tags")
    {
    }

  private:
    void DoRun() override
    {
        UseSimulator("ns3::WormholeSimulatorImpl");
        WormholeSimulatorImpl* impl = Impl();
        uint32_t t1 = impl->NewTag();
        uint32_t t2 = impl->NewTag();
        uint32_t t3 = impl->NewTag();
        impl->SetTagClass(t2, t1);
        auto at = [impl](double seconds, uint32_t tag, int id) {
            return impl->ScheduleWithTag(Seconds(seconds), 0, tag, MakeEvent(&Mark, id));
        };
        EventId e1 = at(1.0, t1, 1);
        at(1.1, t2, 2);
        EventId e3 = at(1.2, t3, 3);
        EventId untagged = ScheduleMark(1.3, 4);
        EventId workload = at(1.4, t1, 5);
        EventId cancelled = at(1.5, t2, 6);
        NS_TEST_ASSERT_MSG_EQ(impl->Retag(workload, WormholeSimulatorImpl::WORKLOAD),
                              true,
                              "a pending event can become a workload's");
        Simulator::Cancel(cancelled);
        uint64_t first = 0;
        uint64_t second = 0;
        uint64_t third = 0;
        Time nextUnattributed;
        impl->ScheduleSystem(Seconds(0.5), MakeEvent([&]() {
                                 first = impl->MoveClass(t1, Seconds(1));
                                 // e3 joins t1's list, e1 leaves it for the unattributed one
                                 impl->Retag(e3, t1);
                                 impl->Retag(e1, WormholeSimulatorImpl::UNATTRIBUTED);
                                 second = impl->MoveClass(t1, Seconds(1));
                                 third = impl->MoveClass(t3, Seconds(5));
                                 nextUnattributed = impl->NextUnattributedEventTime();
                             }));
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(first, 2, "both tags of the class moved, not the cancelled event");
        NS_TEST_EXPECT_MSG_EQ(second, 2, "a retagged event moves with its new tag only");
        NS_TEST_EXPECT_MSG_EQ(third, 0, "a tag whose events were all retagged moves nothing");
        NS_TEST_EXPECT_MSG_EQ(nextUnattributed, Seconds(1.3), "the earliest unattributed event");
        std::vector<std::pair<int, int64_t>> expected{{4, 1300000000},
                                                      {5, 1400000000},
                                                      {1, 2000000000},
                                                      {3, 2200000000},
                                                      {2, 3100000000}};
        NS_TEST_EXPECT_MSG_EQ((g_fired == expected), true, "each event ran at its class's time");
        NS_TEST_EXPECT_MSG_EQ(Simulator::GetEventCount(), 6, "the cancelled event still counts");
    }
};

/** EventIds of moved events, asked after their old time passed or after a move back. */
class StaleEventIdTestCase : public SimulatorCase
{
  public:
    StaleEventIdTestCase()
        : SimulatorCase("EventIds answer by uid after old times pass and after moves back")
    {
    }

  private:
    void DoRun() override
    {
        UseSimulator("ns3::WormholeSimulatorImpl");
        WormholeSimulatorImpl* impl = Impl();
        uint32_t late = impl->NewTag();
        uint32_t early = impl->NewTag();
        auto at = [impl](double seconds, uint32_t tag, int id) {
            return impl->ScheduleWithTag(Seconds(seconds), 0, tag, MakeEvent(&Mark, id));
        };
        EventId cancelledLate = at(1.0, late, 1);
        EventId keptLate = at(1.1, late, 2);
        EventId a = at(1.0, early, 3);
        EventId b = at(2.0, early, 4);
        // unattributed, at the time a will be moved back to, scheduled after it (a larger uid)
        EventId u = at(0.6, WormholeSimulatorImpl::UNATTRIBUTED, 5);
        bool lateCancelPending = true;
        bool keptLatePending = false;
        Time keptLateLeft;
        bool aExpired = false;
        bool uExpired = false;
        bool bPending = false;
        Time aLeft;
        Time bLeft;
        impl->ScheduleSystem(Seconds(0.5), MakeEvent([&]() {
                                 impl->MoveClass(late, Seconds(3));
                                 impl->MoveClass(early, Seconds(3));
                             }));
        impl->ScheduleSystem(Seconds(0.6), MakeEvent([&]() {
                                 // a skip cut short: a goes back to now, before its EventId's time
                                 impl->MoveClass(early, Seconds(-3.4));
                             }));
        impl->ScheduleSystem(Seconds(0.8), MakeEvent([&]() {
                                 aExpired = a.IsExpired();
                                 aLeft = Simulator::GetDelayLeft(a);
                                 uExpired = u.IsExpired();
                                 bPending = b.IsPending();
                                 bLeft = Simulator::GetDelayLeft(b);
                             }));
        impl->ScheduleSystem(Seconds(2.0), MakeEvent([&]() {
                                 // past the old times (1.0, 1.1 s), before the new ones (4.0, 4.1 s)
                                 Simulator::Cancel(cancelledLate);
                                 lateCancelPending = cancelledLate.IsPending();
                                 keptLatePending = keptLate.IsPending();
                                 keptLateLeft = Simulator::GetDelayLeft(keptLate);
                             }));
        Simulator::Run();
        NS_TEST_EXPECT_MSG_EQ(aExpired, true, "an event run earlier than its EventId says expired");
        NS_TEST_EXPECT_MSG_EQ(aLeft, Seconds(0), "and has no delay left");
        NS_TEST_EXPECT_MSG_EQ(uExpired, true, "an event run before a moved-back one stays expired");
        NS_TEST_EXPECT_MSG_EQ(bPending, true, "a moved-back event not run yet is pending");
        NS_TEST_EXPECT_MSG_EQ(bLeft, Seconds(0.8), "its delay counts from its time now");
        NS_TEST_EXPECT_MSG_EQ(lateCancelPending, false, "an old EventId cancels a moved event");
        NS_TEST_EXPECT_MSG_EQ(keptLatePending, true, "a moved event is pending past its old time");
        NS_TEST_EXPECT_MSG_EQ(keptLateLeft, Seconds(2.1), "its delay counts from its new time");
        NS_TEST_EXPECT_MSG_EQ(keptLate.IsExpired(), true, "it expired once it ran");
        std::vector<std::pair<int, int64_t>> expected{{5, 600000000},
                                                      {3, 600000000},
                                                      {4, 1600000000},
                                                      {2, 4100000000}};
        NS_TEST_EXPECT_MSG_EQ((g_fired == expected), true, "events ran at their moved times");
    }
};

/** A chain of events that schedules and cancels others. */
class Chain
{
  public:
    void Step(int left)
    {
        Mark(left);
        if (left == 0)
        {
            return;
        }
        EventId doomed = Simulator::Schedule(MicroSeconds(7), &Mark, -left);
        if (left % 3 == 0)
        {
            Simulator::Cancel(doomed);
        }
        Simulator::Schedule(MicroSeconds(5 + left % 4), &Chain::Step, this, left - 1);
        Simulator::ScheduleNow(&Mark, 1000 + left);
    }
};

/** The same schedule runs the same events, in the same order, as with DefaultSimulatorImpl. */
class EventCountTestCase : public SimulatorCase
{
  public:
    EventCountTestCase()
        : SimulatorCase("The event count equals DefaultSimulatorImpl's")
    {
    }

  private:
    std::pair<uint64_t, std::vector<std::pair<int, int64_t>>> RunChain(const std::string& type)
    {
        UseSimulator(type);
        Chain chain;
        Simulator::Schedule(MicroSeconds(1), &Chain::Step, &chain, 40);
        Simulator::Schedule(MicroSeconds(3), &Chain::Step, &chain, 25);
        Simulator::Run();
        return {Simulator::GetEventCount(), g_fired};
    }

    void DoRun() override
    {
        auto reference = RunChain("ns3::DefaultSimulatorImpl");
        auto ours = RunChain("ns3::WormholeSimulatorImpl");
        NS_TEST_ASSERT_MSG_GT(reference.first, 100, "the chain runs many events");
        NS_TEST_EXPECT_MSG_EQ(ours.first, reference.first, "same event count");
        NS_TEST_EXPECT_MSG_EQ((ours.second == reference.second), true, "same events, same order");
    }
};

/**
 * The event timeline marks, at each step of simulated time an event crosses,
 * exactly the events executed before it; a run much longer than the initial
 * step keeps at most MAX_MARKS marks (the step doubled), each still exact, and
 * a stretch a moved class skipped holds at most the one mark its first event
 * after the skip makes (no event ran there to make others).
 */
class EventTimelineTestCase : public SimulatorCase
{
  public:
    EventTimelineTestCase()
        : SimulatorCase("The event timeline counts exactly the events run before each mark")
    {
    }

  private:
    void DoRun() override
    {
        uint32_t tag = UseTaggedSimulator();
        WormholeSimulatorImpl* impl = Impl();
        const int64_t events = 5000;
        for (int64_t i = 0; i < events; ++i)
        {
            Simulator::Schedule(MicroSeconds(10 * i + 5), &Mark, 0); // one every 10 us, from 5 us
        }
        // at 20 ms, the tagged events still to come wait 30 ms more: nothing runs in between
        impl->ScheduleSystem(MilliSeconds(20) + NanoSeconds(1),
                             MakeEvent([&]() { impl->MoveClass(impl->GetTagClass(tag), MilliSeconds(30)); }));
        Simulator::Run();
        std::vector<Time> times = impl->GetEventTimeline().GetTimes();
        std::vector<uint64_t> counts = impl->GetEventTimeline().GetCounts();
        NS_TEST_ASSERT_MSG_EQ(times.size(), counts.size(), "a count for every mark");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(times.size(), EventTimeline::MAX_MARKS, "the marks stay within the bound");
        NS_TEST_EXPECT_MSG_GT(times.size(), EventTimeline::MAX_MARKS / 4, "a long run keeps many marks");
        bool exact = true;
        std::size_t inside = 0;
        for (std::size_t k = 0; k < times.size(); ++k)
        {
            // the events before t: one per 10 us from 5 us, those after 20 ms 30 ms later
            int64_t us = times[k].GetMicroSeconds();
            int64_t shifted = us > 20000 ? std::max<int64_t>(us - 30000, 20000) : us;
            int64_t before = std::min<int64_t>(events, std::max<int64_t>(0, (shifted - 5 + 9) / 10));
            exact = exact && counts[k] == static_cast<uint64_t>(before);
            inside += (us > 20000 && us < 50000) ? 1 : 0;
        }
        NS_TEST_EXPECT_MSG_EQ(exact, true, "every mark counts the events run before it");
        NS_TEST_EXPECT_MSG_LT_OR_EQ(inside, 1, "no event ran in the skipped stretch to mark it");
        NS_TEST_EXPECT_MSG_EQ(Simulator::GetEventCount(), static_cast<uint64_t>(events), "all ran");
    }
};

/** @brief The accelerator's simulator-implementation invariants. */
/**
 * An event scheduled on a node at the current instant enters the node: the
 * after-event hook learns which nodes were entered, by the event that
 * scheduled them and again once each entering event has run; a later event on
 * a node, or one in the running node's own context, enters nothing.
 */
class EnteredNodesTestCase : public SimulatorCase
{
  public:
    EnteredNodesTestCase()
        : SimulatorCase("Events scheduled on a node at the same instant enter it")
    {
    }

  private:
    void DoRun() override
    {
        UseSimulator("ns3::WormholeSimulatorImpl");
        WormholeSimulatorImpl* impl = Impl();
        std::vector<std::vector<uint32_t>> seen;
        impl->SetAfterNodesEnteredHook(Callback<void>([&]() { seen.push_back(impl->TakeEnteredNodes()); }));
        uint32_t tag = impl->NewTag();
        impl->AdoptTag(tag);
        Simulator::Schedule(Seconds(1), [&]() {
            Simulator::ScheduleWithContext(5, Seconds(0), &Mark, 5);
            Simulator::ScheduleWithContext(3, Seconds(0), &Mark, 3);
            Simulator::ScheduleWithContext(5, Seconds(0), &Mark, 50);
            Simulator::ScheduleWithContext(7, NanoSeconds(1), &Mark, 7);
            Simulator::Schedule(Seconds(0), &Mark, 0);
        });
        Simulator::Run();
        std::vector<std::vector<uint32_t>> expected{{3, 5}, {5}, {3}, {5}};
        NS_TEST_EXPECT_MSG_EQ((seen == expected), true, "entered nodes, sorted and once each");
        NS_TEST_EXPECT_MSG_EQ(g_fired.size(), 5, "every event ran");
    }
};

/** The defaults a flow's fingerprint holds are read afresh once Config::SetDefault changed one. */
class DescribedDefaultsTestCase : public TestCase
{
  public:
    DescribedDefaultsTestCase()
        : TestCase("a TypeId's described defaults follow Config::SetDefault")
    {
    }

  private:
    void DoRun() override
    {
        TypeId socket = TcpSocketBase::GetTypeId();
        std::string before = wormhole::DescribeDefaults(socket);
        NS_TEST_EXPECT_MSG_EQ(wormhole::DescribeDefaults(socket), before, "described alike twice");
        TypeId::AttributeInformation segment;
        NS_TEST_ASSERT_MSG_EQ(socket.LookupAttributeByName("SegmentSize", &segment), true, "an inherited attribute");
        Ptr<const AttributeValue> original = segment.initialValue;
        Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1234));
        std::string changed = wormhole::DescribeDefaults(socket);
        NS_TEST_EXPECT_MSG_NE(changed, before, "a changed default changes the description");
        NS_TEST_EXPECT_MSG_NE(changed.find("SegmentSize=1234;"), std::string::npos, "the new value shows");
        Config::SetDefault("ns3::TcpSocket::SegmentSize", *original);
        NS_TEST_EXPECT_MSG_EQ(wormhole::DescribeDefaults(socket), before, "the same default, the same description");
    }
};

/** Cubic's epoch moves with a skip, so that t since its last reduction is what it was; an unset one stays unset. */
class CubicClocksTestCase : public TestCase
{
  public:
    CubicClocksTestCase()
        : TestCase("a skip moves Cubic's epoch by its length, and no other control's clocks")
    {
    }

  private:
    void DoRun() override
    {
        Ptr<TcpCubic> cubic = CreateObject<TcpCubic>();
        NS_TEST_ASSERT_MSG_EQ(wormhole::CubicShiftClocks(cubic, Seconds(1)), true, "Cubic has clocks");
        NS_TEST_EXPECT_MSG_EQ(wormhole::CubicEpochStart(cubic), Time::Min(), "no epoch yet: none made up");

        // an ACK in congestion avoidance opens an epoch at the present
        Ptr<TcpSocketState> tcb = CreateObject<TcpSocketState>();
        tcb->m_segmentSize = 1448;
        tcb->m_ssThresh = 5 * tcb->m_segmentSize;
        tcb->m_cWnd = 10 * tcb->m_segmentSize;
        tcb->m_isCwndLimited = true;
        cubic->PktsAcked(tcb, 1, MilliSeconds(1));
        cubic->IncreaseWindow(tcb, 1);
        Time epoch = wormhole::CubicEpochStart(cubic);
        NS_TEST_ASSERT_MSG_EQ(epoch, Simulator::Now(), "the epoch opened at the ACK");
        wormhole::CubicShiftClocks(cubic, MilliSeconds(250));
        NS_TEST_EXPECT_MSG_EQ(wormhole::CubicEpochStart(cubic), epoch + MilliSeconds(250), "moved by the skip");
        wormhole::CubicShiftClocks(cubic, MilliSeconds(-100));
        NS_TEST_EXPECT_MSG_EQ(wormhole::CubicEpochStart(cubic),
                              epoch + MilliSeconds(150),
                              "a skip cut short moves it back");

        NS_TEST_EXPECT_MSG_EQ(wormhole::CubicShiftClocks(CreateObject<TcpNewReno>(), Seconds(1)),
                              false,
                              "NewReno keeps no clock");
    }
};

/** A link is idle while its device neither transmits nor queues a packet (LinkIdle, PointToPointTransmitting). */
class LinkIdleTestCase : public TestCase
{
  public:
    LinkIdleTestCase()
        : TestCase("a link is idle only while nothing is queued or being sent on it")
    {
    }

  private:
    void DoRun() override
    {
        NodeContainer nodes;
        nodes.Create(2);
        PointToPointHelper p2p;
        p2p.SetDeviceAttribute("DataRate", StringValue("8Mbps")); // 1 us a byte
        p2p.SetChannelAttribute("Delay", StringValue("1us"));
        NetDeviceContainer devices = p2p.Install(nodes);
        uint64_t link = (uint64_t{nodes.Get(0)->GetId()} << 16) | devices.Get(0)->GetIfIndex();
        std::vector<bool> idle;
        auto look = [&idle, link]() { idle.push_back(wormhole::LinkIdle(link)); };
        Simulator::Schedule(MicroSeconds(1), look);
        Simulator::Schedule(MicroSeconds(2), [&devices]() {
            for (int i = 0; i < 2; ++i)
            {
                devices.Get(0)->Send(Create<Packet>(98), devices.Get(1)->GetAddress(), 0x0800);
            }
        });
        // 100 bytes on the wire each (a PPP header of 2): sent from 2 to 102 us, then 102 to 202 us
        Simulator::Schedule(MicroSeconds(50), look);  // one sent, one queued
        Simulator::Schedule(MicroSeconds(150), look); // the second sent
        Simulator::Schedule(MicroSeconds(250), look); // both gone (one on the wire: not the link's egress)
        Simulator::Run();
        Simulator::Destroy();
        NS_TEST_ASSERT_MSG_EQ(idle.size(), 4, "every look ran");
        NS_TEST_EXPECT_MSG_EQ(idle[0], true, "nothing sent yet");
        NS_TEST_EXPECT_MSG_EQ(idle[1], false, "one packet queued behind one being sent");
        NS_TEST_EXPECT_MSG_EQ(idle[2], false, "nothing queued, one being sent");
        NS_TEST_EXPECT_MSG_EQ(idle[3], true, "both sent");
    }
};

class WormholeTestSuite : public TestSuite
{
  public:
    WormholeTestSuite()
        : TestSuite("wormhole", Type::UNIT)
    {
        AddTestCase(new MoveClassTestCase, TestCase::Duration::QUICK);
        AddTestCase(new EventIdTestCase, TestCase::Duration::QUICK);
        AddTestCase(new MoveBackTestCase, TestCase::Duration::QUICK);
        AddTestCase(new EventCountTestCase, TestCase::Duration::QUICK);
        AddTestCase(new EventTimelineTestCase, TestCase::Duration::QUICK);
        AddTestCase(new MoveOnlyItsClassTestCase, TestCase::Duration::QUICK);
        AddTestCase(new StaleEventIdTestCase, TestCase::Duration::QUICK);
        AddTestCase(new EnteredNodesTestCase, TestCase::Duration::QUICK);
        AddTestCase(new DescribedDefaultsTestCase, TestCase::Duration::QUICK);
        AddTestCase(new CubicClocksTestCase, TestCase::Duration::QUICK);
        AddTestCase(new LinkIdleTestCase, TestCase::Duration::QUICK);
    }
};

WormholeTestSuite g_wormholeTestSuite;

} // namespace
