"""DCQCN's reaction point, step by step on ns-3's clock (paper defaults:
g = 1/256, K = T = 55 us, F = 5, R_AI = 40 Mb/s)."""

import pytest

from wormhole_ns3.runtime import native

GBPS = 1e9


@pytest.fixture
def ns3():
    ns3 = native.load().ns3
    ns3.Simulator.Destroy()
    yield ns3
    ns3.Simulator.Destroy()


def dcqcn(ns3, **attributes):
    cc = ns3.CreateObject[ns3.RdmaDcqcn]()
    for name, value in attributes.items():
        cc.SetAttribute(name, value)
    cc.Start(ns3.DataRate("100Gbps"))
    return cc


def advance(ns3, microseconds):
    """Run for that long, plus a nanosecond so timer events due at the end have fired."""
    ns3.Simulator.Stop(ns3.MicroSeconds(microseconds) + ns3.NanoSeconds(1))
    ns3.Simulator.Run()


def rates(cc):
    return cc.GetRate().GetBitRate() / GBPS, cc.GetTargetRate().GetBitRate() / GBPS


def test_cnps_cut_by_alpha_and_fast_recovery_halves_the_gap(ns3):
    cc = dcqcn(ns3)
    assert rates(cc) == (100, 100) and cc.GetAlpha() == 1
    cc.NotifyCnp()
    assert rates(cc) == (50, 100)  # Rc (1 - alpha / 2) with alpha = 1
    cc.NotifyCnp()  # no increase in between: the target rate stays (clamp off)
    assert rates(cc) == (25, 100)
    advance(ns3, 55)
    assert rates(cc) == (62.5, 100)  # first timer event: fast recovery
    advance(ns3, 4 * 55)
    assert rates(cc)[0] == pytest.approx(100 - 75 / 2**5)  # five fast-recovery steps
    advance(ns3, 55)  # sixth event: additive increase, Rt capped at line rate
    assert rates(cc)[0] == pytest.approx((100 + 100 - 75 / 2**5) / 2)
    assert cc.GetNDecreases() == 2 and cc.GetNIncreases() == 6


def test_clamping_sets_the_target_at_every_cnp(ns3):
    cc = dcqcn(ns3, ClampTargetRate=ns3.BooleanValue(True))
    cc.NotifyCnp()
    cc.NotifyCnp()
    assert rates(cc) == (25, 50)
    advance(ns3, 55)
    assert rates(cc) == (37.5, 50)


def test_alpha_decays_once_per_interval_without_cnp(ns3):
    cc = dcqcn(ns3, InitialAlpha=ns3.DoubleValue(0.5))
    cc.NotifyCnp()
    g = 1 / 256
    after_cnp = (1 - g) * 0.5 + g
    assert cc.GetAlpha() == pytest.approx(after_cnp)
    advance(ns3, 54)
    assert cc.GetAlpha() == pytest.approx(after_cnp)  # less than one interval
    advance(ns3, 2 * 55 - 54 - 0.001)
    assert cc.GetAlpha() == pytest.approx(after_cnp * (1 - g) ** 2)
    cc.ShiftTimes(ns3.MicroSeconds(110))  # a skip: the decay clock moves with it
    assert cc.GetAlpha() == pytest.approx(after_cnp)


def test_the_byte_counter_drives_increases_too(ns3):
    cc = dcqcn(ns3, ByteCounter=ns3.UintegerValue(1000))
    cc.NotifyCnp()
    cc.NotifySent(2500)  # two byte-counter events before any timer event
    assert rates(cc)[0] == pytest.approx(100 - 50 / 4)
    assert cc.GetNIncreases() == 2


def test_the_rate_timer_stops_back_at_line_rate(ns3):
    cc = dcqcn(ns3)
    cc.NotifyCnp()
    advance(ns3, 10_000)
    assert rates(cc) == (100, 100)
    increases = cc.GetNIncreases()
    advance(ns3, 1_000)
    assert cc.GetNIncreases() == increases  # no timer events once recovered
