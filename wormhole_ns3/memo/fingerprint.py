"""Canonical key of a contention episode: equal keys exactly for episodes that are the same up to numbering.

Training repeats the same contention pattern on different flows and links (other
ranks, other nodes, other flow ids), so a memo key must not depend on any id. It
must, however, depend on everything that shapes the outcome: every attribute
string, start offset, queue occupancy, the order of each path's hops, which flows
meet on which link at which hop, and the versions and settings in the context.

The episode is encoded as a vertex-coloured graph and canonically labelled by
nauty (``pynauty``), which is exact: two episodes get the same key if and only if
they are isomorphic as labelled structures (up to a collision of SHA-256).
Colours are numbered by sorting their descriptions, never by first appearance, so
that colour numbers are themselves canonical.

The graph is kept small because nauty is slow on exactly what training produces
most: many interchangeable flows (an incast, the flows of a rack in a ring),
whose symmetry group it would otherwise explore one transposition at a time.
Four reductions, each exact (it drops nothing an isomorphism has to preserve):

* a *private* link (crossed by one hop of one flow in the whole episode) is no
  vertex: its attributes and queue become part of its flow's colour, with the
  direction and position of the hop;
* a *shared* link is a vertex, and each (link, direction, position) at which
  some flow crosses it is a *port* vertex, coloured by (direction, position),
  joined to the link and to the flows crossing it there. This carries the edge
  label "hop i of the data or ACK path", which nauty's plain graphs cannot;
* links no flow crosses are one vertex per kind, coloured by their count;
* *twins* (flows with equal attributes, offset, private hops and shared ports)
  are one vertex whose colour includes their count. Swapping twins, with their
  private links, maps the episode onto itself, so in ``order`` they may take
  each other's places; they are listed by id.
"""

from __future__ import annotations

import hashlib
import json
from array import array
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import pynauty

#: Changes whenever the encoding below changes, so old keys can never match new ones.
ENCODING = b"wormhole-ns3 episode fingerprint v1"

_FLOW, _LINK, _PORT, _IDLE_LINKS = 0, 1, 2, 3
_DIRECTIONS = ("data", "ack")


@dataclass(frozen=True)
class LinkDescriptor:
    """One directed link as it is when the episode starts.

    ``attributes`` is an opaque canonical string of everything about the link that
    shapes the outcome (rate, delay, queue and ECN configuration); the controller
    builds it, this module only compares it. ``queued`` is the number of packets
    waiting on the link at the start.
    """

    attributes: str
    queued: int


@dataclass(frozen=True)
class FlowDescriptor:
    """One flow of an episode.

    ``attributes`` is an opaque canonical string of its size, transport and
    congestion-control parameters; ``offset_ns`` its start relative to the
    episode's first flow; ``data_path`` and ``ack_path`` the ids of the links its
    packets and its ACKs cross, in order.
    """

    attributes: str
    offset_ns: int
    data_path: tuple[int, ...]
    ack_path: tuple[int, ...]


@dataclass(frozen=True)
class Episode:
    """The flows of one contention episode and the links they cross.

    Flow and link ids are arbitrary integers: only the structure they describe
    enters the key. ``context`` holds what is not in the graph but changes the
    outcome: ns-3, product and schema versions and the accelerator's settings.
    """

    flows: Mapping[int, FlowDescriptor]
    links: Mapping[int, LinkDescriptor]
    context: str


@dataclass(frozen=True)
class Fingerprint:
    """An episode's key and the canonical order of its flows.

    ``order[i]`` is the id of the flow at canonical position ``i``. For two
    episodes with the same key, mapping ``order[i]`` of one onto ``order[i]`` of
    the other is an isomorphism, so an outcome recorded per position replays
    onto the right flows.
    """

    key: bytes
    order: tuple[int, ...]

    @property
    def hex(self) -> str:
        return self.key.hex()


@dataclass(frozen=True)
class _ColouredGraph:
    """The reduced episode as nauty sees it."""

    colours: list[tuple]  #: sorted descriptions; a vertex's colour is an index into this
    colour_of: list[int]  #: per vertex
    edges: list[tuple[int, int]]
    twins: list[tuple[int, ...]]  #: vertex v < len(twins) stands for the flows twins[v]


def fingerprint(episode: Episode) -> Fingerprint:
    """The canonical key of ``episode`` and its flows in canonical order."""
    graph = _coloured_graph(episode)
    labelling = pynauty.canon_label(_nauty_graph(graph))
    position = [0] * len(labelling)
    for canonical, vertex in enumerate(labelling):
        position[vertex] = canonical
    canonical_edges = sorted(
        (min(position[u], position[v]), max(position[u], position[v])) for u, v in graph.edges
    )
    digest = hashlib.sha256()
    for part in (
        ENCODING,
        episode.context.encode(),
        json.dumps(graph.colours, separators=(",", ":")).encode(),
        array("I", (graph.colour_of[v] for v in labelling)).tobytes(),
        array("I", (end for edge in canonical_edges for end in edge)).tobytes(),
    ):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    order = tuple(flow for v in labelling if v < len(graph.twins) for flow in graph.twins[v])
    return Fingerprint(key=digest.digest(), order=order)


#: Episodes whose fingerprints ``Fingerprints`` keeps, the last used.
KEPT_FINGERPRINTS = 4096


class Fingerprints:
    """``fingerprint``, kept for episodes met again: the same flows' kinds on the same links, links alike.

    Training opens the same episode on the same links at every layer, other
    flows each time. The key is made of everything ``fingerprint`` reads but
    the flows' ids, which enter it only through their order (sorting, twins
    listed by id): flows are numbered by their rank among the episode's ids,
    so a kept answer is this episode's once its positions are mapped back to
    its flows. Links keep their ids and their order in ``episode.links``
    (a link's id and its queue are part of what is met again).
    """

    def __init__(self, size: int = KEPT_FINGERPRINTS) -> None:
        self.size = size
        self._kept: OrderedDict[tuple, Fingerprint] = OrderedDict()
        self.hits = 0

    def of(self, episode: Episode) -> Fingerprint:
        """``fingerprint(episode)``, from the last ones made where it was made already."""
        flows = sorted(episode.flows)
        described = tuple((f.attributes, f.offset_ns, f.data_path, f.ack_path)
                          for f in map(episode.flows.__getitem__, flows))
        links = tuple((link, d.attributes, d.queued) for link, d in episode.links.items())
        key = (episode.context, described, links)
        kept = self._kept.get(key)
        if kept is None:
            ranked = Episode(dict(enumerate(map(episode.flows.__getitem__, flows))), episode.links, episode.context)
            kept = self._kept[key] = fingerprint(ranked)
            if len(self._kept) > self.size:
                self._kept.popitem(last=False)
        else:
            self.hits += 1
            self._kept.move_to_end(key)
        return Fingerprint(kept.key, tuple(flows[rank] for rank in kept.order))


def _coloured_graph(episode: Episode) -> _ColouredGraph:
    """Twin classes, shared links, kinds of idle links and ports, as coloured vertices."""
    if not episode.flows:
        raise ValueError("an episode needs at least one flow")
    hops = {flow: list(_hops(flow, episode.flows[flow], episode.links)) for flow in sorted(episode.flows)}
    crossings = Counter(link for flow_hops in hops.values() for _, _, link in flow_hops)
    classes = list(_twin_classes(episode, hops, crossings).items())

    descriptions: list[tuple] = [
        (_FLOW, attributes, offset_ns, private, len(members))
        for (attributes, offset_ns, private, _), members in classes
    ]
    link_vertex: dict[int, int] = {}
    for link in sorted(episode.links):
        if crossings[link] > 1:
            link_vertex[link] = len(descriptions)
            descriptions.append((_LINK, episode.links[link].attributes, episode.links[link].queued))
    idle = Counter(
        (episode.links[link].attributes, episode.links[link].queued)
        for link in episode.links
        if crossings[link] == 0
    )
    descriptions += [(_IDLE_LINKS, *link, count) for link, count in idle.items()]
    port_vertex: dict[tuple[int, int, int], int] = {}
    edges: list[tuple[int, int]] = []
    for class_vertex, ((*_, ports), _) in enumerate(classes):
        for port in sorted(ports):
            if port not in port_vertex:
                link, direction, hop = port
                port_vertex[port] = len(descriptions)
                descriptions.append((_PORT, direction, hop))
                edges.append((port_vertex[port], link_vertex[link]))
            edges.append((class_vertex, port_vertex[port]))

    colours = sorted(set(descriptions))
    index = {colour: i for i, colour in enumerate(colours)}
    return _ColouredGraph(
        colours=colours,
        colour_of=[index[d] for d in descriptions],
        edges=edges,
        twins=[tuple(members) for _, members in classes],
    )


def _twin_classes(
    episode: Episode, hops: Mapping[int, list[tuple[int, int, int]]], crossings: Counter
) -> dict[tuple, list[int]]:
    """Flows grouped by (attributes, offset, private hops, shared ports), members by id.

    A private hop is (direction, position, link attributes, queue); a shared port
    is (link id, direction, position).
    """
    twins: dict[tuple, list[int]] = {}
    for flow, flow_hops in hops.items():
        private = tuple(sorted(
            (direction, hop, episode.links[link].attributes, episode.links[link].queued)
            for direction, hop, link in flow_hops
            if crossings[link] == 1
        ))
        ports = frozenset((link, direction, hop) for direction, hop, link in flow_hops if crossings[link] > 1)
        descriptor = episode.flows[flow]
        twins.setdefault((descriptor.attributes, descriptor.offset_ns, private, ports), []).append(flow)
    return twins


def _hops(
    flow: int, descriptor: FlowDescriptor, links: Mapping[int, LinkDescriptor]
) -> Iterable[tuple[int, int, int]]:
    """(direction, hop position, link id) of every element of the flow's two paths."""
    for direction, path in enumerate((descriptor.data_path, descriptor.ack_path)):
        for hop, link in enumerate(path):
            if link not in links:
                raise ValueError(
                    f"flow {flow}: hop {hop} of its {_DIRECTIONS[direction]} path is link {link},"
                    " which the episode does not describe"
                )
            yield direction, hop, link


def _nauty_graph(graph: _ColouredGraph) -> pynauty.Graph:
    cells: list[set[int]] = [set() for _ in graph.colours]
    for vertex, colour in enumerate(graph.colour_of):
        cells[colour].add(vertex)
    adjacency: dict[int, list[int]] = {}
    for u, v in graph.edges:
        adjacency.setdefault(u, []).append(v)
    return pynauty.Graph(len(graph.colour_of), adjacency_dict=adjacency, vertex_coloring=cells)
