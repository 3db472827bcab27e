import pytest

from wormhole_ns3.core.links import describe_link, link_id, link_ifindex, link_node


def test_a_link_id_is_its_node_and_device_index():
    link = link_id(300, 2)
    assert link == (300 << 16) | 2 == 19_660_802
    assert (link_node(link), link_ifindex(link)) == (300, 2)
    assert describe_link(link) == "300:2"


def test_a_device_index_must_fit_its_sixteen_bits():
    assert link_ifindex(link_id(1, 0xFFFF)) == 0xFFFF and link_node(link_id(1, 0xFFFF)) == 1
    with pytest.raises(ValueError):
        link_id(1, 1 << 16)
