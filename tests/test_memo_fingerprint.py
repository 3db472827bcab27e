"""Episode fingerprints: invariant to numbering, exact (checked against networkx), fast."""

from __future__ import annotations

import dataclasses
import random
from collections import Counter

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from networkx.algorithms.isomorphism import categorical_multiedge_match

from wormhole_ns3.memo.fingerprint import (
    Episode,
    Fingerprints,
    FlowDescriptor,
    LinkDescriptor,
    fingerprint,
)

LINK_KINDS = [
    LinkDescriptor("rate=100Gbps delay=1us red=on", 0),
    LinkDescriptor("rate=100Gbps delay=1us red=on", 3),
    LinkDescriptor("rate=25Gbps delay=2us red=on", 0),
]
FLOW_KINDS = ["size=1MB cc=dctcp", "size=2MB cc=dctcp"]
OFFSETS = [0, 1000]


@st.composite
def episodes(draw, max_flows: int = 5, max_links: int = 6) -> Episode:
    """Small episodes over tiny alphabets, so that private, shared and idle links,
    twins and isomorphic-but-different pairs all occur often."""
    link_count = draw(st.integers(1, max_links))
    path = st.lists(st.integers(0, link_count - 1), max_size=3).map(tuple)
    flows = {
        flow: FlowDescriptor(
            draw(st.sampled_from(FLOW_KINDS)), draw(st.sampled_from(OFFSETS)), draw(path), draw(path)
        )
        for flow in range(draw(st.integers(1, max_flows)))
    }
    links = {link: draw(st.sampled_from(LINK_KINDS)) for link in range(link_count)}
    return Episode(flows, links, "ns-3.44 wormhole-ns3 0.1.0 schema 1")


def renumbered(episode: Episode, rng: random.Random) -> Episode:
    """The same episode with new, shuffled flow and link ids (and dict order)."""
    flow_ids = rng.sample(range(-500, 500), len(episode.flows))
    link_ids = rng.sample(range(10_000, 11_000), len(episode.links))
    new_flow = dict(zip(episode.flows, flow_ids))
    new_link = dict(zip(episode.links, link_ids))
    flows = [
        (new_flow[f], dataclasses.replace(
            d,
            data_path=tuple(new_link[link] for link in d.data_path),
            ack_path=tuple(new_link[link] for link in d.ack_path),
        ))
        for f, d in episode.flows.items()
    ]
    links = [(new_link[link], d) for link, d in episode.links.items()]
    rng.shuffle(flows)
    rng.shuffle(links)
    return Episode(dict(flows), dict(links), episode.context)


def as_networkx(episode: Episode) -> nx.MultiDiGraph:
    """An independent encoding: flow -> link edges labelled (direction, hop)."""
    graph = nx.MultiDiGraph()
    for flow, d in episode.flows.items():
        graph.add_node(("flow", flow), label=("flow", d.attributes, d.offset_ns))
    for link, d in episode.links.items():
        graph.add_node(("link", link), label=("link", d.attributes, d.queued))
    for flow, d in episode.flows.items():
        for direction, path in (("data", d.data_path), ("ack", d.ack_path)):
            for hop, link in enumerate(path):
                graph.add_edge(("flow", flow), ("link", link), label=(direction, hop))
    return graph


def networkx_isomorphic(a: Episode, b: Episode) -> bool:
    return a.context == b.context and nx.is_isomorphic(
        as_networkx(a),
        as_networkx(b),
        node_match=lambda x, y: x["label"] == y["label"],
        edge_match=categorical_multiedge_match("label", None),
    )


def is_isomorphism(a: Episode, b: Episode, flow_map: dict[int, int]) -> bool:
    """Does mapping a's flows onto b's by ``flow_map`` extend to an isomorphism of the episodes?"""
    if sorted(flow_map) != sorted(a.flows) or sorted(flow_map.values()) != sorted(b.flows):
        return False
    link_map: dict[int, int] = {}
    for fa, fb in flow_map.items():
        da, db = a.flows[fa], b.flows[fb]
        if (da.attributes, da.offset_ns) != (db.attributes, db.offset_ns):
            return False
        for pa, pb in ((da.data_path, db.data_path), (da.ack_path, db.ack_path)):
            if len(pa) != len(pb):
                return False
            for la, lb in zip(pa, pb):
                if link_map.setdefault(la, lb) != lb or a.links[la] != b.links[lb]:
                    return False
    if len(set(link_map.values())) != len(link_map):
        return False
    mapped_b = set(link_map.values())
    return Counter(d for link, d in a.links.items() if link not in link_map) == Counter(
        d for link, d in b.links.items() if link not in mapped_b
    )


def positional_map(a: Episode, b: Episode) -> dict[int, int]:
    return dict(zip(fingerprint(a).order, fingerprint(b).order))


@settings(max_examples=300, deadline=None)
@given(episodes(), st.randoms(use_true_random=False))
def test_renumbering_keeps_the_key_and_the_order_maps_flows_onto_their_counterparts(episode, rng):
    other = renumbered(episode, rng)
    assert fingerprint(other).key == fingerprint(episode).key
    assert sorted(fingerprint(episode).order) == sorted(episode.flows)
    assert is_isomorphism(episode, other, positional_map(episode, other))


@settings(max_examples=400, deadline=None)
@given(episodes(max_flows=4, max_links=4), episodes(max_flows=4, max_links=4))
def test_keys_are_equal_exactly_when_networkx_finds_the_episodes_isomorphic(a, b):
    same_key = fingerprint(a).key == fingerprint(b).key
    assert same_key == networkx_isomorphic(a, b)
    if same_key:
        assert is_isomorphism(a, b, positional_map(a, b))


def _change_flow(episode: Episode, flow: int, **changes) -> Episode:
    flows = dict(episode.flows)
    flows[flow] = dataclasses.replace(flows[flow], **changes)
    return Episode(flows, episode.links, episode.context)


def _change_link(episode: Episode, link: int, **changes) -> Episode:
    links = dict(episode.links)
    links[link] = dataclasses.replace(links[link], **changes)
    return Episode(episode.flows, links, episode.context)


@settings(max_examples=200, deadline=None)
@given(episodes(), st.data())
def test_any_change_of_an_attribute_offset_queue_or_context_changes_the_key(episode, data):
    flow = data.draw(st.sampled_from(sorted(episode.flows)))
    link = data.draw(st.sampled_from(sorted(episode.links)))
    flow_d, link_d = episode.flows[flow], episode.links[link]
    changed = [
        _change_flow(episode, flow, attributes=flow_d.attributes + " mss=9000"),
        _change_flow(episode, flow, offset_ns=flow_d.offset_ns + 1),
        _change_link(episode, link, attributes=link_d.attributes.replace("100Gbps", "40Gbps") + "!"),
        _change_link(episode, link, queued=link_d.queued + 1),
        Episode(episode.flows, episode.links, episode.context.replace("ns-3.44", "ns-3.45")),
    ]
    key = fingerprint(episode).key
    assert all(fingerprint(c).key != key for c in changed)


@settings(max_examples=300, deadline=None)
@given(episodes(), st.data())
def test_a_changed_path_changes_the_key_unless_the_result_is_isomorphic(episode, data):
    flow = data.draw(st.sampled_from(sorted(episode.flows)))
    direction = data.draw(st.sampled_from(["data_path", "ack_path"]))
    path = list(getattr(episode.flows[flow], direction))
    action = data.draw(st.sampled_from(["swap", "reroute", "extend"]))
    if action == "swap" and len(path) >= 2:
        i, j = data.draw(st.permutations(range(len(path))))[:2]
        path[i], path[j] = path[j], path[i]
    elif action == "reroute" and path:
        path[data.draw(st.integers(0, len(path) - 1))] = data.draw(st.sampled_from(sorted(episode.links)))
    else:
        path.append(data.draw(st.sampled_from(sorted(episode.links))))
    changed = _change_flow(episode, flow, **{direction: tuple(path)})
    assert (fingerprint(changed).key == fingerprint(episode).key) == networkx_isomorphic(episode, changed)


def _dumbbell() -> Episode:
    """Two flows from different hosts through one bottleneck, ACKs back."""
    links = {
        1: LinkDescriptor("rate=100Gbps delay=1us", 0),  # host a up
        9: LinkDescriptor("rate=40Gbps delay=1us", 0),  # host a's access switch up
        2: LinkDescriptor("rate=100Gbps delay=1us", 0),  # host b up
        3: LinkDescriptor("rate=10Gbps delay=10us red=on", 5),  # bottleneck
        4: LinkDescriptor("rate=100Gbps delay=1us", 0),  # receiver down
        5: LinkDescriptor("rate=100Gbps delay=1us", 0),  # receiver up
        6: LinkDescriptor("rate=10Gbps delay=10us red=on", 0),  # bottleneck back
        7: LinkDescriptor("rate=100Gbps delay=1us", 0),  # host a down
        8: LinkDescriptor("rate=100Gbps delay=1us", 0),  # host b down
    }
    flows = {
        10: FlowDescriptor("size=1MB cc=dctcp", 0, (1, 9, 3, 4), (5, 6, 7)),
        11: FlowDescriptor("size=2MB cc=dctcp", 0, (2, 3, 4), (5, 6, 8)),
    }
    return Episode(flows, links, "ns-3.44")


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda e: _change_flow(e, 10, data_path=(1, 3, 9, 4)), id="hop order"),
        pytest.param(lambda e: _change_flow(e, 10, data_path=(9, 1, 3, 4)), id="order of private hops"),
        pytest.param(lambda e: _change_flow(e, 11, data_path=(2, 6, 4)), id="leaves the bottleneck"),
        pytest.param(lambda e: _change_flow(e, 11, ack_path=(5, 6, 7)), id="shares the ACK downlink"),
        pytest.param(
            lambda e: _change_flow(e, 10, data_path=(5, 6, 7), ack_path=(1, 9, 3, 4)), id="data and ack swapped"
        ),
        pytest.param(lambda e: _change_flow(e, 11, offset_ns=1), id="offset"),
        pytest.param(lambda e: _change_link(e, 3, queued=4), id="bottleneck queue"),
        pytest.param(
            lambda e: _change_link(e, 3, attributes="rate=25Gbps delay=10us red=on"), id="link rate"
        ),
        pytest.param(lambda e: Episode(e.flows, e.links, "ns-3.45"), id="ns-3 version"),
    ],
)
def test_every_single_change_of_a_dumbbell_gives_a_new_key(change):
    base = _dumbbell()
    assert fingerprint(change(base)).key != fingerprint(base).key


def test_the_order_follows_the_flows_not_their_ids():
    base = _dumbbell()
    swapped_ids = Episode({10: base.flows[11], 11: base.flows[10]}, base.links, base.context)
    assert fingerprint(swapped_ids).key == fingerprint(base).key
    # the 1 MB flow holds the same canonical position in both
    position = fingerprint(base).order.index(10)
    assert fingerprint(swapped_ids).order[position] == 11


def test_equal_degree_sequences_do_not_make_equal_keys():
    """Four flows on four links, every link crossed once at hop 0 and once at hop 1:
    one ring of eight vs two rings of four. Colour refinement (the Weisfeiler-Lehman
    hash) cannot tell them apart; the canonical form can."""
    link = LinkDescriptor("rate=100Gbps delay=1us", 0)
    links = {i: link for i in range(4)}
    flow = lambda path: FlowDescriptor("size=1MB cc=dctcp", 0, path, ())  # noqa: E731
    one_ring = Episode({0: flow((0, 1)), 1: flow((1, 2)), 2: flow((2, 3)), 3: flow((3, 0))}, links, "")
    two_rings = Episode({0: flow((0, 1)), 1: flow((1, 0)), 2: flow((2, 3)), 3: flow((3, 2))}, links, "")

    def wl_hash(episode: Episode) -> str:
        graph = nx.Graph(as_networkx(episode))
        for u, v, label in as_networkx(episode).edges(data="label"):
            graph.edges[u, v]["label"] = str(label)
        for node, label in as_networkx(episode).nodes(data="label"):
            graph.nodes[node]["label"] = str(label)
        return nx.weisfeiler_lehman_graph_hash(graph, node_attr="label", edge_attr="label")

    assert wl_hash(one_ring) == wl_hash(two_rings)
    assert not networkx_isomorphic(one_ring, two_rings)
    assert fingerprint(one_ring).key != fingerprint(two_rings).key


def _incast(flows: int) -> Episode:
    """Identical senders, each with its own host links, into one receiver."""
    links = {
        0: LinkDescriptor("rate=100Gbps delay=1us red=on", 12),
        1: LinkDescriptor("rate=100Gbps delay=1us", 0),
    }
    descriptors = {}
    for f in range(flows):
        links[100 + f] = LinkDescriptor("rate=100Gbps delay=1us", 0)
        links[200 + f] = LinkDescriptor("rate=100Gbps delay=1us", 0)
        descriptors[f] = FlowDescriptor("size=1MB cc=dctcp", 0, (100 + f, 0), (1, 200 + f))
    return Episode(descriptors, links, "")


def _random_fabric(flows: int, hops: int, seed: int) -> Episode:
    rng = random.Random(seed)
    links = {i: LINK_KINDS[i % 3] for i in range(400)}
    descriptors = {}
    for f in range(flows):
        data = tuple(rng.sample(range(200), hops))
        ack = tuple(200 + x for x in reversed(data))
        descriptors[f] = FlowDescriptor(rng.choice(FLOW_KINDS), rng.choice(OFFSETS), data, ack)
    return Episode(descriptors, links, "")


def _rack_ring(flows: int) -> Episode:
    """A ring all-reduce over racks of 8 hosts: host i sends to host i+1 through its ToR and a spine."""
    links = {}
    descriptors = {}
    for h in range(flows):
        for base in (100, 200):
            links[base + h] = LinkDescriptor("rate=100Gbps delay=1us", 0)
    for r in range(flows // 8):
        for base in (300, 400, 500, 600):
            links[base + r] = LinkDescriptor("rate=400Gbps delay=2us", 0)
    for h in range(flows):
        g = (h + 1) % flows
        data = (100 + h, 300 + h // 8, 400 + g // 8, 200 + g)
        ack = (100 + g, 500 + g // 8, 600 + h // 8, 200 + h)
        descriptors[h] = FlowDescriptor("size=1MB cc=dctcp", 0, data, ack)
    return Episode(descriptors, links, "")


@pytest.mark.parametrize(
    "episode",
    [
        pytest.param(_random_fabric(64, 6, seed=1), id="random fabric, 64 flows x 6 hops"),
        pytest.param(_incast(64), id="64-flow incast"),
        pytest.param(_rack_ring(64), id="64-host ring over 8 racks"),
    ],
)
def test_a_64_flow_episode_gets_one_key_that_orders_every_flow(episode):
    """Paper-scale episodes are keyed (their speed is profiled, not asserted: wall time is not a test)."""
    first = fingerprint(episode)
    assert sorted(first.order) == sorted(episode.flows) and len(first.order) == 64
    assert fingerprint(episode).key == first.key


def test_twins_are_listed_once_each_and_by_id():
    order = fingerprint(_incast(5)).order
    assert order == (0, 1, 2, 3, 4)


def test_a_path_through_an_undescribed_link_is_refused():
    episode = _change_flow(_dumbbell(), 10, ack_path=(5, 99, 7))
    message = "flow 10: hop 1 of its ack path is link 99, which the episode does not describe"
    with pytest.raises(ValueError, match=message):
        fingerprint(episode)


def test_an_episode_without_flows_is_refused():
    with pytest.raises(ValueError, match="at least one flow"):
        fingerprint(Episode({}, {1: LINK_KINDS[0]}, ""))


def flows_renumbered_in_order(episode: Episode, rng: random.Random) -> Episode:
    """The same episode on the same links, its flows given other ids in the same order (as the next layer's)."""
    ids = sorted(rng.sample(range(-10_000, 10_000), len(episode.flows)))
    flows = dict(zip(ids, (episode.flows[f] for f in sorted(episode.flows))))
    return Episode(flows, episode.links, episode.context)


@settings(max_examples=300, deadline=None)
@given(episodes(), st.randoms(use_true_random=False))
def test_a_kept_fingerprint_is_the_one_made_afresh_for_other_flows_on_the_same_links(episode, rng):
    kept = Fingerprints()
    assert kept.of(episode) == fingerprint(episode)
    assert kept.hits == 0
    again = flows_renumbered_in_order(episode, rng)
    assert kept.of(again) == fingerprint(again)
    assert kept.hits == 1


@settings(max_examples=200, deadline=None)
@given(episodes(), st.data())
def test_a_changed_episode_never_gets_a_kept_fingerprint(episode, data):
    """Any change of what the key is made of (a flow's attributes, offset or path, a link's
    description, queue, id or place in the episode, the context) is made afresh."""
    kept = Fingerprints()
    kept.of(episode)
    flows, links = dict(episode.flows), dict(episode.links)
    flow = data.draw(st.sampled_from(sorted(flows)))
    link = data.draw(st.sampled_from(sorted(links)))
    changes = [
        Episode({**flows, flow: dataclasses.replace(flows[flow], attributes=flows[flow].attributes + "!")},
                links, episode.context),
        Episode({**flows, flow: dataclasses.replace(flows[flow], offset_ns=flows[flow].offset_ns + 1)},
                links, episode.context),
        Episode({**flows, flow: dataclasses.replace(flows[flow], data_path=flows[flow].data_path + (link,))},
                links, episode.context),
        Episode(flows, {**links, link: dataclasses.replace(links[link], queued=links[link].queued + 1)},
                episode.context),
        Episode(flows, {**links, link: dataclasses.replace(links[link], attributes="other")}, episode.context),
        Episode(flows, dict(reversed(links.items())), episode.context) if len(links) > 1 else None,
        Episode(flows, links, episode.context + " other"),
    ]
    for changed in filter(None, changes):
        assert kept.of(changed) == fingerprint(changed)
    assert kept.hits == 0


def test_fingerprints_keep_the_last_ones_used():
    a = Episode({1: FlowDescriptor("a", 0, (0,), (1,))}, dict(enumerate(LINK_KINDS[:2])), "c")
    b = Episode({1: FlowDescriptor("b", 0, (0,), (1,))}, dict(enumerate(LINK_KINDS[:2])), "c")
    kept = Fingerprints(size=1)
    kept.of(a)
    kept.of(b)
    kept.of(a)
    assert kept.hits == 0
    assert kept.of(a) == fingerprint(a) and kept.hits == 1
