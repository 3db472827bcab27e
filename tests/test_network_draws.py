"""Network.queue_draws_on against port_loads worked out afresh: the same words for any partition."""

import random

from wormhole_ns3.accel.network import Network
from wormhole_ns3.accel.partition import partition_flows
from wormhole_ns3.core.draws import Fidelity, RandomSource, port_loads
from wormhole_ns3.core.flows import FlowInfo

from fakes import FakeTracker

RED = RandomSource("ns3::RedQueueDisc marks or drops at random between MinTh and MaxTh", True)
LOSS = RandomSource("ns3::RateErrorModel drops at random", False)


def direct(network, flows):
    """What queue_draws said before it kept the ports' loads: port_loads over every link of the flows' paths."""
    loads = port_loads([network.flows[f].path for f in sorted(flows)], network.link_rate)
    drawing = sorted({f"{s.what} (link {link})" for link, load in loads.items() if load > network.link_rate(link)
                      for s in network.tracker.random_sources.get(link, ()) if s.needs_queue})
    return "; ".join(drawing) or None


def flow(f, path):
    return FlowInfo(id=f, kind="bulk-tcp", src_node=0, dst_node=1, src="", dst="", sport=0, dport=0,
                    size=0, start=0.0, path=path, reverse_path=(), congestion_control="",
                    rtt_estimator="", constant_rate=False, paced=False, app_rate=0.0, tag=f)


def test_queue_draws_on_a_partitions_links_says_what_port_loads_says_of_its_sending_flows():
    rng = random.Random(7)
    links = list(range(1, 25))
    tracker = FakeTracker({link: rng.choice((1e9, 1e10, 4e10)) for link in links})
    tracker.random_sources = {link: rng.choice(((RED,), (LOSS,), (RED, LOSS), ())) for link in links}
    network = Network(ns3=None, tracker=tracker, fidelity=Fidelity.SAME_SEED)
    said = set()
    for step in range(400):
        f = rng.randrange(60)
        if f in network.active and rng.random() < 0.6:
            network.ended(f)
        else:  # a start, or a flow started again on another path
            network.started(f, flow(f, tuple(rng.sample(links, rng.randint(1, 4)))))
        for part in partition_flows({g: network.flows[g].path for g in network.active}):
            said.add(network.queue_draws_on(part.links))
            assert network.queue_draws_on(part.links) == direct(network, part.flows), step
    assert None in said and len(said) > 10  # some draw, some do not
    for f in list(network.active):
        network.ended(f)
    assert not network._port_load and not network._overloaded  # every term taken back exactly


def test_no_loads_are_kept_unless_same_seed():
    tracker = FakeTracker({1: 1e9})
    tracker.random_sources = {1: (RED,)}
    network = Network(ns3=None, tracker=tracker, fidelity=Fidelity.STATISTICAL)
    network.started(0, flow(0, (1,)))
    network.started(1, flow(1, (1,)))
    assert network.queue_draws_on(frozenset({1})) is None and not network._port_load
