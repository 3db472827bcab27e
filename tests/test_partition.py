import pytest

from wormhole_ns3.accel.partition import UNKNOWN_PATH, partition_flows


def test_flows_sharing_a_link_are_one_partition_and_disjoint_ones_are_not():
    parts = partition_flows({0: [1, 2], 1: [2, 3], 2: [7, 8], 3: [9]})
    assert [sorted(p.flows) for p in parts] == [[0, 1], [2], [3]]
    assert parts[0].links == frozenset({1, 2, 3})


def test_sharing_is_transitive_through_a_chain_of_links():
    parts = partition_flows({0: [1], 1: [1, 2], 2: [2, 3], 3: [3]})
    assert [sorted(p.flows) for p in parts] == [[0, 1, 2, 3]]


def test_unknown_routes_contend_with_each_other():
    parts = partition_flows({0: [], 1: [5], 2: []})
    assert [sorted(p.flows) for p in parts] == [[0, 2], [1]]
    assert UNKNOWN_PATH in parts[0].links


def test_result_does_not_depend_on_insertion_order():
    paths = {5: [1], 3: [2], 9: [1, 4], 1: [4]}
    reordered = dict(reversed(list(paths.items())))
    assert partition_flows(paths) == partition_flows(reordered)
    assert [sorted(p.flows) for p in partition_flows(paths)] == [[1, 5, 9], [3]]


def test_no_flows_no_partitions():
    assert partition_flows({}) == []


# ------------------------------------------------------------------ FlowGroups: incremental partitions

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from wormhole_ns3.accel.partition import FlowGroups  # noqa: E402

LINKS = st.frozensets(st.integers(0, 11), max_size=4)
#: A flow event: a flow (re)arrives on some links, or a flow leaves if it is there.
OPERATIONS = st.lists(
    st.one_of(st.tuples(st.just("add"), st.integers(0, 15), LINKS), st.tuples(st.just("remove"), st.integers(0, 15))),
    max_size=40,
)


def ordered(parts):
    """Partitions with their sets' iteration orders: what the controller's C++ calls follow."""
    return [(list(p.flows), list(p.links)) for p in parts]


@settings(max_examples=300, deadline=None)
@given(OPERATIONS)
def test_incremental_partitions_are_those_found_from_scratch_and_iterate_alike(operations):
    groups, paths = FlowGroups(), {}
    before = {}
    for operation in operations:
        if operation[0] == "add":
            _, flow, links = operation
            groups.add(flow, links)
            paths[flow] = links
        elif operation[1] in paths:
            groups.remove(operation[1])
            del paths[operation[1]]
        expected = partition_flows(paths)
        assert groups.partitions() == expected
        assert ordered(groups.partitions()) == ordered(expected)
        assert len(groups) == len(expected) and all((flow in groups) == (flow in paths) for flow in range(16))
        now = {min(p.flows): p for p in expected}
        stale = set(groups.take_stale())
        # a group not reported stale is the very partition it was
        assert all(now[g] == before[g] for g in now.keys() - stale)
        assert all(g in now for g in before.keys() - stale)
        before = now


def test_a_flow_joins_the_partition_it_touches_and_merges_the_ones_it_bridges():
    groups = FlowGroups()
    groups.add(4, [1])
    groups.add(7, [2])
    assert groups.take_stale() == [4, 7]
    groups.add(9, [1])
    assert [sorted(p.flows) for p in groups.partitions()] == [[4, 9], [7]]
    assert groups.take_stale() == [4]
    groups.add(2, [2, 1])
    assert [sorted(p.flows) for p in groups.partitions()] == [[2, 4, 7, 9]]
    assert groups.take_stale() == [2, 4, 7]
    assert groups.get(2) is not None and groups.get(4) is None


def test_a_departure_splits_only_its_own_partition():
    groups = FlowGroups()
    for flow, links in {0: [1], 1: [1, 2], 2: [2], 3: [5]}.items():
        groups.add(flow, links)
    groups.take_stale()
    groups.remove(1)  # the bridge between 0 and 2
    assert [sorted(p.flows) for p in groups.partitions()] == [[0], [2], [3]]
    assert groups.take_stale() == [0, 2]  # 3's partition untouched
    groups.touch(3)
    assert groups.take_stale() == [3]
    with pytest.raises(KeyError):
        groups.remove(1)


def test_unknown_routes_join_one_partition_incrementally():
    groups = FlowGroups()
    groups.add(3, [])
    groups.add(5, [8])
    groups.add(1, ())
    assert [sorted(p.flows) for p in groups.partitions()] == [[1, 3], [5]]
    assert UNKNOWN_PATH in groups.partitions()[0].links


# ------------------------------------------------------------------ Partitioner: tag classes

from types import SimpleNamespace  # noqa: E402

from wormhole_ns3.accel.partitioner import Partitioner  # noqa: E402


@settings(max_examples=300, deadline=None)
@given(OPERATIONS)
def test_tag_classes_are_each_groups_smallest_tag_as_a_pass_over_every_group_sets_them(operations):
    """What the simulator is told (``flush_classes``) equals setting every tag of each changed group
    to the group's smallest, a departed flow's tag keeping the class it had."""
    partitioner = Partitioner(network=SimpleNamespace(), skip_cubic=False)
    told: dict[int, int] = {}
    partitioner.network.simulator = SimpleNamespace(SetTagClass=told.__setitem__)
    expected: dict[int, int] = {}
    groups = FlowGroups()
    present: set[int] = set()
    for operation in operations:
        flow = operation[1]
        if operation[0] == "add":
            groups.add(flow, operation[2])
            present.add(flow)
        elif flow in present:
            groups.remove(flow)
            present.discard(flow)
        else:
            continue
        for group in groups.take_stale():
            members = groups.get(group)
            if members is None:
                continue
            tags = {100 + f for f in members.flows}
            partitioner._tag.update({f: 100 + f for f in members.flows})
            assert partitioner._assign_class(members.flows) == min(tags)
            expected.update(dict.fromkeys(tags, min(tags)))
        partitioner.flush_classes()
        assert all(told.get(t, t) == expected.get(t, t) for t in told.keys() | expected.keys())
