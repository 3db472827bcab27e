"""The accelerator's decisions, per episode: partitions, steady state, skip plans, the controller.

Where a skip is decided: ``skip_engine.py``, at each rate sample. It asks
``steady.py`` whether a partition's flows hold stable rates and
``fastforward.py`` how far it may jump; ``skipper.py`` applies the plan through
the C++ flow tracker and reverts it when something unforeseen arrives.
``partitioner.py`` keeps the partitions as flows come and go, ``arrivals.py``
the flows still to come, ``network.py`` what the run's flows and links are;
``verify.py`` (``--verify``) checks a fraction of the skips and replays against
a packet-level re-simulation in a forked copy of the run. ``controller.py``
receives the callbacks C++ makes and hands each to its part. Nothing here runs
per packet.
"""
