"""Named experiments: run them into result folders, compare baseline and accelerated runs, sweep presets.

Experiment scripts write their results with ``results.ResultWriter``; the
``wormhole-ns3 experiment`` commands (``cli``) run them through the same
harness as ``wormhole-ns3 run`` and turn the results into tables, summaries
and plots.
"""

from wormhole_ns3.tools.experiment.registry import Experiment, ExperimentError, experiments, get_experiment
from wormhole_ns3.tools.experiment.results import ResultWriter, write_hpcc_fct

__all__ = ["Experiment", "ExperimentError", "ResultWriter", "experiments", "get_experiment", "write_hpcc_fct"]
