"""wormhole-ns3: fast-forward the steady states of packet-level ns-3 simulations.

Run an unmodified ns-3 script accelerated with ``wormhole-ns3 run script.py``,
or from inside a script::

    import wormhole_ns3
    wormhole_ns3.enable()          # before the script creates its simulation
    from ns import ns
"""

__version__ = "0.1.0"

from wormhole_ns3.api import enable, last_controller  # noqa: E402
from wormhole_ns3.config import AcceleratorConfig  # noqa: E402

__all__ = ["AcceleratorConfig", "enable", "last_controller", "__version__"]
