"""``wormhole-ns3 experiment export-chakra``: a workload preset as MLCommons Chakra traces.

The traces are what ``--chakra`` reads back into the same task graph, and
what ASTRA-sim users can run (``chakra_export`` says how tasks become nodes).
"""

from __future__ import annotations

from pathlib import Path

from wormhole_ns3.models.workloads import preset_workload, write_chakra_trace
from wormhole_ns3.models.workloads.chakra import SUFFIX
from wormhole_ns3.tools.experiment.registry import ExperimentError
from wormhole_ns3.tools.experiment.results import counted


def export_chakra(preset: str, out: Path, iterations: int | None, dp_buckets: int | None, force: bool) -> str:
    """Write ``preset``'s workload as ``out/<preset>.<rank>.et``; returns the line that says what was written."""
    try:
        workload = preset_workload(preset, iterations=iterations, dp_buckets=dp_buckets)
    except ValueError as error:
        raise ExperimentError(str(error)) from None
    old = sorted(out.glob(f"{preset}.*{SUFFIX}")) if out.is_dir() else []
    if old and not force:
        raise ExperimentError(f"{out} already holds traces of {preset} ({old[0].name}, ...): --force replaces them")
    per_server = workload.metadata["parallelism"]["gpus_per_server"]
    try:
        for path in old:
            path.unlink()
        paths = write_chakra_trace(workload, out / preset, per_server, source=f"wormhole-ns3 preset {preset}")
    except OSError as error:
        raise ExperimentError(f"{error.filename or out}: {error.strerror or error}") from None
    return (f"wrote {len(paths)} traces {out / preset}.<rank>{SUFFIX}: {len(workload.flows):,} flows, "
            f"{workload.total_bytes / 1e9:.3f} GB, {counted(workload.iterations, 'iteration')}; run them with "
            f"--chakra {out / preset}")
