"""``wormhole-ns3`` with the tests' ring experiment registered next to the product's experiments.

The ring experiment (``flow_dag_ring.py``) exists for the tests only, so it
is registered here, in the process that runs the command, and never in
``wormhole_ns3.tools.experiment.registry`` itself.
"""

import sys
from pathlib import Path

from wormhole_ns3.tools.experiment.registry import Experiment

RING = Experiment(
    name="ring",
    script=Path(__file__).resolve().with_name("flow_dag_ring.py"),
    description="tests: ring all-reduces of 2 hosts on a star",
    presets={
        "tiny": ["--hosts", "2", "--mb", "8", "--iterations", "1", "--compute-ms", "1"],
        "small": ["--hosts", "2", "--mb", "24", "--iterations", "2", "--compute-ms", "1"],
        "long": ["--hosts", "2", "--mb", "24", "--iterations", "8", "--compute-ms", "1"],
        "crash": ["--hosts", "2", "--mb", "8", "--iterations", "2", "--compute-ms", "1", "--crash-after-flows", "3"],
    },
    default_preset="tiny",
)


def main() -> int:
    from wormhole_ns3.tools import cli
    from wormhole_ns3.tools.experiment import registry

    product = registry.experiments
    registry.experiments = lambda: {**product(), RING.name: RING}
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
