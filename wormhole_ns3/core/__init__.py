"""The shared vocabulary every layer speaks: flows, links, trace rows, random draws, kinds of shortcut.

And ``ports``: the typed Protocols of the C++ objects the Python calls, which the
real objects and the tests' fakes both implement. Nothing here decides anything
or touches ns-3: ``runtime``, ``memo``, ``accel`` and ``tools`` all import it,
and it imports none of them.
"""
