"""What a user runs: the ``wormhole-ns3`` command line, comparisons, reports and experiments."""
