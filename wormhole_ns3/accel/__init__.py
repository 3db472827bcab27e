"""The accelerator's decisions, per episode: partitions, steady state, skip plans, the controller.

Where a skip is decided: ``steady.py`` judges whether a partition's flows hold
stable rates, ``fastforward.py`` plans how far it may jump, and
``controller.py`` applies the plan through the C++ flow tracker and reverts it
when something unforeseen arrives; ``verify.py`` (``--verify``) checks a
fraction of the skips and replays against a packet-level re-simulation in a
forked copy of the run. Nothing here runs per packet.
"""
