/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * Invariants of the WormholeSimulatorImpl: a move shifts exactly the events of
 * one class, EventIds stay exact by uid after a move, a move back restores the
 * times, and the event count of a schedule is DefaultSimulatorImpl's.
 */
#include "ns3/global-value.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
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
        UseSimulator("ns3::WormholeSimulatorImpl");
        WormholeSimulatorImpl* impl = Impl();
        uint32_t tag = impl->NewTag();
        impl->AdoptTag(tag);
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
        UseSimulator("ns3::WormholeSimulatorImpl");
        WormholeSimulatorImpl* impl = Impl();
        uint32_t tag = impl->NewTag();
        impl->AdoptTag(tag);
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

/** @brief The accelerator's simulator-implementation invariants. */
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
    }
};

WormholeTestSuite g_wormholeTestSuite;

} // namespace
