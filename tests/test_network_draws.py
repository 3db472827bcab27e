"""Network.queue_draws against port_loads worked out afresh: the same words for any flows."""

import random

from wormhole_ns3.accel.network import Network
from wormhole_ns3.core.draws import Fidelity, RandomSource, port_loads
from wormhole_ns3.core.flows import FlowInfo

from fakes import FakeTracker

RED = RandomSource("ns3::RedQueueDisc marks or drops at random between MinTh and MaxTh", True)
LOSS = RandomSource("ns3::RateErrorModel drops at random", False)


def direct(network, flows):
    """What queue_draws said before it kept each flow's terms: port_loads over every link of the paths."""
    loads = port_loads([network.flows[f].path for f in sorted(flows)], network.link_rate)
    drawing = sorted({f"{s.what} (link {link})" for link, load in loads.items() if load > network.link_rate(link)
                      for s in network.tracker.random_sources.get(link, ()) if s.needs_queue})
    return "; ".join(drawing) or None


def test_queue_draws_keeps_each_flows_terms_and_says_what_port_loads_says():
    rng = random.Random(7)
    links = list(range(1, 13))
    tracker = FakeTracker({link: rng.choice((1e9, 1e10, 4e10)) for link in links})
    tracker.random_sources = {link: rng.choice(((RED,), (LOSS,), (RED, LOSS), ())) for link in links}
    network = Network(ns3=None, tracker=tracker, fidelity=Fidelity.SAME_SEED)
    for f in range(40):
        path = tuple(rng.sample(links, rng.randint(1, 5)))
        network.started(f, FlowInfo(id=f, kind="bulk-tcp", src_node=0, dst_node=1, src="", dst="", sport=0, dport=0,
                                    size=0, start=0.0, path=path, reverse_path=(), congestion_control="",
                                    rtt_estimator="", constant_rate=False, paced=False, app_rate=0.0, tag=f))
    said = set()
    for _ in range(300):
        flows = frozenset(rng.sample(range(40), rng.randint(1, 12)))
        said.add(network.queue_draws(flows))
        assert network.queue_draws(flows) == direct(network, flows)
    assert None in said and len(said) > 10  # some draw, some do not
