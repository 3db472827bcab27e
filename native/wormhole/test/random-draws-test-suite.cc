/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * ns-3's random draws as the accelerator sees them: RandomDrawMonitor counts
 * every draw without changing a value, the simulator attributes each to the
 * running event's tag and node, and DescribeRandomSources names the models
 * that may draw before they do.
 */
#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/error-model.h"
#include "ns3/fifo-queue-disc.h"
#include "ns3/global-value.h"
#include "ns3/onoff-application.h"
#include "ns3/pie-queue-disc.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/pointer.h"
#include "ns3/random-draw-monitor.h"
#include "ns3/random-sources.h"
#include "ns3/random-variable-stream.h"
#include "ns3/red-queue-disc.h"
#include "ns3/simulator.h"
#include "ns3/string.h"
#include "ns3/test.h"
#include "ns3/wormhole-simulator-impl.h"

#include <vector>

using namespace ns3;

namespace
{

/** Draws on a tagged node's event are counted, attributed and unchanged; others are counted apart. */
class DrawAttributionTestCase : public TestCase
{
  public:
    DrawAttributionTestCase()
        : TestCase("every draw is seen, attributed to its event's tag and node, and unchanged")
    {
    }

  private:
    void DoTeardown() override
    {
        Simulator::Destroy();
        GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::DefaultSimulatorImpl"));
    }

    static std::vector<double> Draw(Ptr<UniformRandomVariable> variable, int n)
    {
        std::vector<double> values;
        for (int i = 0; i < n; ++i)
        {
            values.push_back(variable->GetValue());
        }
        return values;
    }

    void DoRun() override
    {
        // the same stream twice: one drawn before the monitor exists, one under it
        Ptr<UniformRandomVariable> reference = CreateObject<UniformRandomVariable>();
        reference->SetStream(4242);
        std::vector<double> expected = Draw(reference, 5);

        Simulator::Destroy();
        GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::WormholeSimulatorImpl"));
        auto* impl = dynamic_cast<WormholeSimulatorImpl*>(PeekPointer(Simulator::GetImplementation()));
        NS_TEST_ASSERT_MSG_NE(impl, nullptr, "the wormhole simulator is selected");
        NS_TEST_ASSERT_MSG_EQ(impl->SeesDraws(), true, "the monitor interposed on RngStream::RandU01");
        Ptr<RandomDrawMonitor> monitor = RandomDrawMonitor::Get();
        uint64_t before = monitor->GetDrawCount();

        Ptr<UniformRandomVariable> variable = CreateObject<UniformRandomVariable>();
        variable->SetStream(4242);
        uint32_t tag = impl->NewTag();
        uint32_t quiet = impl->NewTag();
        std::vector<double> drawn;
        impl->ScheduleCallbackWithTag(Seconds(1), 7, tag, Callback<void>([&]() { drawn = Draw(variable, 5); }));
        impl->ScheduleCallbackWithTag(Seconds(2), 8, quiet, Callback<void>([]() {}));
        Simulator::Schedule(Seconds(3), [&]() { variable->GetValue(); }); // an unattributed draw
        Simulator::Run();

        NS_TEST_EXPECT_MSG_EQ((drawn == expected), true, "the monitor changes no value drawn");
        NS_TEST_EXPECT_MSG_EQ(monitor->GetDrawCount() - before, 6, "every draw is counted");
        NS_TEST_EXPECT_MSG_EQ(impl->GetTagsDrawCount({tag}), 5, "draws are attributed to their event's tag");
        NS_TEST_EXPECT_MSG_EQ(impl->GetTagsDrawCount({quiet}), 0, "a tag that drew nothing has none");
        NS_TEST_EXPECT_MSG_EQ(impl->GetOtherDrawCount(), 1, "an unattributed event's draw is counted apart");
        std::vector<uint32_t> at{7};
        NS_TEST_EXPECT_MSG_EQ((impl->GetTagsDrawNodes({tag, quiet}) == at), true, "drawn at the event's node");
        NS_TEST_EXPECT_MSG_EQ((impl->GetDrawNodes() == at), true, "the run's drawing nodes");
        NS_TEST_EXPECT_MSG_NE(impl->GetTagsDrawDigest({tag}), impl->GetTagsDrawDigest({quiet}),
                              "draws have a digest of their own");
    }
};

/** The models named as random sources are those whose parameters let them draw. */
class RandomSourcesTestCase : public TestCase
{
  public:
    RandomSourcesTestCase()
        : TestCase("DescribeRandomSources names the models that may draw")
    {
    }

  private:
    static Ptr<RedQueueDisc> Red(bool gentle, double minTh, double maxTh)
    {
        Ptr<RedQueueDisc> red = CreateObject<RedQueueDisc>();
        red->SetAttribute("Gentle", BooleanValue(gentle));
        red->SetAttribute("MinTh", DoubleValue(minTh));
        red->SetAttribute("MaxTh", DoubleValue(maxTh));
        return red;
    }

    void DoRun() override
    {
        using wormhole::DescribeRandomSources;
        NS_TEST_EXPECT_MSG_EQ(DescribeRandomSources(Red(false, 65, 65)).size(), 0,
                              "RED as a step marker never draws");
        std::vector<RandomSource> gentle = DescribeRandomSources(Red(true, 65, 65));
        NS_TEST_ASSERT_MSG_EQ(gentle.size(), 1, "Gentle RED draws above MaxTh");
        NS_TEST_EXPECT_MSG_EQ(gentle[0].needsQueue, true, "RED draws once its queue stands");
        NS_TEST_EXPECT_MSG_EQ(DescribeRandomSources(Red(false, 5, 15)).size(), 1,
                              "RED draws between its thresholds");
        NS_TEST_EXPECT_MSG_EQ(DescribeRandomSources(CreateObject<PieQueueDisc>()).size(), 1, "PIE draws");
        NS_TEST_EXPECT_MSG_EQ(DescribeRandomSources(CreateObject<FifoQueueDisc>()).size(), 0, "FIFO never draws");

        Ptr<OnOffApplication> constant = CreateObject<OnOffApplication>();
        NS_TEST_EXPECT_MSG_EQ(DescribeRandomSources(constant).size(), 0, "constant on and off times draw nothing");
        Ptr<OnOffApplication> jittered = CreateObject<OnOffApplication>();
        jittered->SetAttribute("OffTime", StringValue("ns3::UniformRandomVariable[Min=0|Max=0.001]"));
        std::vector<RandomSource> sources = DescribeRandomSources(jittered);
        NS_TEST_ASSERT_MSG_EQ(sources.size(), 1, "a random off time draws");
        NS_TEST_EXPECT_MSG_NE(sources[0].what.find("OffTime"), std::string::npos, "the attribute is named");
        NS_TEST_EXPECT_MSG_EQ(sources[0].needsQueue, false, "an application's jitter needs no queue");

        Ptr<PointToPointNetDevice> device = CreateObject<PointToPointNetDevice>();
        NS_TEST_EXPECT_MSG_EQ(DescribeRandomSources(device).size(), 0, "a device without an error model");
        device->SetAttribute("ReceiveErrorModel", PointerValue(CreateObject<RateErrorModel>()));
        NS_TEST_EXPECT_MSG_EQ(DescribeRandomSources(device).size(), 1, "an error model's variable, two levels down");
    }
};

class RandomDrawsTestSuite : public TestSuite
{
  public:
    RandomDrawsTestSuite()
        : TestSuite("wormhole-random-draws", Type::UNIT)
    {
        AddTestCase(new DrawAttributionTestCase, TestCase::Duration::QUICK);
        AddTestCase(new RandomSourcesTestCase, TestCase::Duration::QUICK);
    }
};

RandomDrawsTestSuite g_randomDrawsTestSuite;

} // namespace
