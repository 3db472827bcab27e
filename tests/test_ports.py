"""Both sides of every port: each method a Protocol of core/ports.py lists exists where it is implemented.

mypy checks the fakes and the boundary against the Protocols, but cppyy's
proxies carry no types: this is what keeps the native classes from drifting
away from what the Python calls (one load of the native modules, then lookups).
``MemoHost``, the port the Python implements itself, is declared by its
implementations, so a method one of them lacks would be the Protocol's empty
stub: each must define every method itself.
"""

from __future__ import annotations

import inspect
from typing import Protocol

import pytest

from wormhole_ns3.core import ports
from wormhole_ns3.memo.driver import MemoDriver

from fakes import FakeMemoHost

#: Each port, and the C++ class (in namespace ns3) that implements it.
PORTS = {
    ports.Time: "Time",
    ports.RandomSourceRecord: "RandomSource",
    ports.TrackerPort: "FlowTracker",
    ports.MemoTrackerPort: "FlowTracker",
    ports.SimulatorPort: "WormholeSimulatorImpl",
    ports.MemoSimulatorPort: "WormholeSimulatorImpl",
    ports.QueueMonitorPort: "PortQueueMonitor",
    ports.RttMonitorPort: "FlowRttMonitor",
}


def members(port: type) -> set[str]:
    """The methods and properties a port lists, its base ports' included."""
    found = set()
    for cls in port.__mro__:
        if cls in (Protocol, object) or not getattr(cls, "_is_protocol", False):
            continue
        found |= {name for name, value in vars(cls).items()
                  if not name.startswith("_") and (inspect.isfunction(value) or isinstance(value, property))}
    return found


def test_every_c_plus_plus_port_is_checked_here():
    cxx_ports = {value for value in vars(ports).values()
                 if isinstance(value, type) and getattr(value, "_is_protocol", False)
                 and value.__module__ == ports.__name__} - {ports.BoundaryPort, ports.MemoHost}
    assert cxx_ports == set(PORTS)


@pytest.mark.parametrize("host", [MemoDriver, FakeMemoHost], ids=lambda host: host.__name__)
def test_every_memo_host_defines_every_method_of_the_port(host):
    assert ports.MemoHost in host.__mro__
    inherited = sorted(name for name in members(ports.MemoHost)
                       if getattr(host, name) is getattr(ports.MemoHost, name))
    assert inherited == []


def test_members_reads_a_port_and_its_bases():
    assert {"GetNFlows", "GateStart"} <= members(ports.MemoTrackerPort)
    assert "GateStart" not in members(ports.TrackerPort)
    assert members(ports.Time) == {"GetSeconds", "GetTimeStep", "IsNegative"}


@pytest.fixture(scope="module")
def ns3():
    from wormhole_ns3.runtime import native

    return native.load().ns3


@pytest.mark.parametrize("port", list(PORTS), ids=lambda port: port.__name__)
def test_the_c_plus_plus_class_has_every_method_of_its_port(ns3, port):
    cxx = getattr(ns3, PORTS[port])
    # cppyy shows a struct's fields on its instances, not on its class
    record = any(isinstance(getattr(port, name), property) for name in members(port))
    target = cxx() if record else cxx
    assert sorted(name for name in members(port) if not hasattr(target, name)) == []
