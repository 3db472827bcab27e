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
