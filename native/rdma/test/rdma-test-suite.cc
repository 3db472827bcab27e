/*
 * SPDX-License-Identifier: GPL-2.0-only
 *
 * RoCEv2 headers on real ns-3 packets: wire sizes, round trips, 24-bit PSNs.
 */
#include "ns3/data-rate.h"
#include "ns3/nstime.h"
#include "ns3/packet.h"
#include "ns3/rdma-aeth-header.h"
#include "ns3/rdma-bth-header.h"
#include "ns3/rdma-int-header.h"
#include "ns3/test.h"

using namespace ns3;

namespace
{

/** A BTH survives a packet round trip and keeps 24 bits of PSN and QPN. */
class BthRoundTripTestCase : public TestCase
{
  public:
    BthRoundTripTestCase()
        : TestCase("BTH round trip")
    {
    }

  private:
    void DoRun() override
    {
        RdmaBthHeader bth;
        bth.SetOpcode(RdmaBthHeader::RC_WRITE_LAST);
        bth.SetDestQp(0x123456);
        bth.SetPsn(0xABCDEF);
        bth.SetAckRequest(true);
        Ptr<Packet> packet = Create<Packet>(100);
        packet->AddHeader(bth);
        NS_TEST_EXPECT_MSG_EQ(packet->GetSize(), 112, "the BTH is 12 bytes");
        RdmaBthHeader read;
        packet->RemoveHeader(read);
        NS_TEST_EXPECT_MSG_EQ(read.GetOpcode(), RdmaBthHeader::RC_WRITE_LAST, "opcode");
        NS_TEST_EXPECT_MSG_EQ(read.IsData(), true, "a WRITE carries data");
        NS_TEST_EXPECT_MSG_EQ(read.IsLastOfMessage(), true, "WRITE_LAST ends the message");
        NS_TEST_EXPECT_MSG_EQ(read.GetDestQp(), 0x123456, "destination QP");
        NS_TEST_EXPECT_MSG_EQ(read.GetWirePsn(), 0xABCDEF, "PSN");
        NS_TEST_EXPECT_MSG_EQ(read.GetAckRequest(), true, "ACK request");

        RdmaBthHeader wide;
        wide.SetPsn(0x01000007);
        wide.SetDestQp(0x7000001);
        NS_TEST_EXPECT_MSG_EQ(wide.GetWirePsn(), 7, "24 bits of PSN on the wire");
        NS_TEST_EXPECT_MSG_EQ(wide.GetDestQp(), 1, "24 bits of QPN");
    }
};

/** Unwrap picks the full PSN nearest the reference, across the 24-bit wrap. */
class UnwrapTestCase : public TestCase
{
  public:
    UnwrapTestCase()
        : TestCase("PSN unwrapping")
    {
    }

  private:
    void DoRun() override
    {
        NS_TEST_EXPECT_MSG_EQ(RdmaBthHeader::Unwrap(5, 3), 5, "no wrap");
        NS_TEST_EXPECT_MSG_EQ(RdmaBthHeader::Unwrap(0x000005, 0x00FFFFF0), 0x01000005, "forward");
        NS_TEST_EXPECT_MSG_EQ(RdmaBthHeader::Unwrap(0xFFFFF0, 0x01000005), 0x00FFFFF0, "backward");
    }
};

/** An AETH carries an ACK or a NAK and its MSN. */
class AethTestCase : public TestCase
{
  public:
    AethTestCase()
        : TestCase("AETH round trip")
    {
    }

  private:
    void DoRun() override
    {
        for (bool nak : {false, true})
        {
            RdmaAethHeader aeth;
            aeth.SetNak(nak);
            aeth.SetMsn(3);
            Ptr<Packet> packet = Create<Packet>(4);
            packet->AddHeader(aeth);
            NS_TEST_EXPECT_MSG_EQ(packet->GetSize(), 8, "the AETH is 4 bytes");
            RdmaAethHeader read;
            packet->RemoveHeader(read);
            NS_TEST_EXPECT_MSG_EQ(read.IsNak(), nak, "ACK or NAK");
            NS_TEST_EXPECT_MSG_EQ(read.GetMsn(), 3, "MSN");
        }
    }
};

/** INT telemetry keeps a fixed size and at most five hops. */
class IntHeaderTestCase : public TestCase
{
  public:
    IntHeaderTestCase()
        : TestCase("INT header")
    {
    }

  private:
    void DoRun() override
    {
        RdmaIntHeader telemetry;
        telemetry.PushHop(MicroSeconds(7), 10, 1000000000, DataRate("400Gbps"));
        Ptr<Packet> packet = Create<Packet>(0);
        packet->AddHeader(telemetry);
        NS_TEST_EXPECT_MSG_EQ(packet->GetSize(), 2 + 5 * 12, "stamping never resizes a packet");
        RdmaIntHeader read;
        packet->RemoveHeader(read);
        NS_TEST_EXPECT_MSG_EQ(read.GetNHops(), 1, "one hop read back");
        for (int hop = 0; hop < 7; ++hop)
        {
            read.PushHop(NanoSeconds(hop), hop, 0, DataRate("100Gbps"));
        }
        NS_TEST_EXPECT_MSG_EQ(read.GetNHops(), 5, "at most five hops");
    }
};

/** @brief The RoCEv2 headers of the rdma module. */
class RdmaTestSuite : public TestSuite
{
  public:
    RdmaTestSuite()
        : TestSuite("rdma", Type::UNIT)
    {
        AddTestCase(new BthRoundTripTestCase, TestCase::Duration::QUICK);
        AddTestCase(new UnwrapTestCase, TestCase::Duration::QUICK);
        AddTestCase(new AethTestCase, TestCase::Duration::QUICK);
        AddTestCase(new IntHeaderTestCase, TestCase::Duration::QUICK);
    }
};

RdmaTestSuite g_rdmaTestSuite;

} // namespace
