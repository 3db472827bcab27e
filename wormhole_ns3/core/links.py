"""Link ids: a directed link is its egress port, ``node << 16 | ifindex`` (as the shim numbers it)."""

from __future__ import annotations

#: Bits of a link id holding the device (interface) index.
IFINDEX_BITS = 16
IFINDEX_MASK = (1 << IFINDEX_BITS) - 1


def link_id(node: int, ifindex: int) -> int:
    """The id of the link leaving ``node`` through its device ``ifindex``."""
    if not 0 <= ifindex <= IFINDEX_MASK:
        raise ValueError(f"device index {ifindex} does not fit a link id")
    return (node << IFINDEX_BITS) | ifindex


def link_node(link: int) -> int:
    """The node a link leaves from."""
    return link >> IFINDEX_BITS


def link_ifindex(link: int) -> int:
    """The device index (on its node) of the port a link leaves through."""
    return link & IFINDEX_MASK


def describe_link(link: int) -> str:
    """``node:ifindex``, for messages."""
    return f"{link_node(link)}:{link_ifindex(link)}"
