"""SimAI / AICB workload files: what a training iteration communicates, layer by layer.

Line 1 names the parallelization policy, then ``key: value`` pairs
(``model_parallel_NPU_group: 8 ep: 1 pp: 1 ... all_gpus: 64``). Line 2 is the
number of layers. Then one line per layer with 12 fields: name, a dependency
field, and for each of the three passes (forward, input gradient, weight
gradient) its compute time, collective type and collective size in bytes,
and last the weight-update time.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .text import WorkloadFileError, numbered_fields, parse_int

#: Collective types the format uses ("NONE": the pass communicates nothing).
COLLECTIVES = frozenset(
    {
        "NONE", "ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL", "BROADCAST",
        "ALLREDUCE_DP_EP", "ALLGATHER_DP_EP", "REDUCESCATTER_DP_EP", "ALLTOALL_EP",
    }
)
PASSES = ("forward", "input_gradient", "weight_gradient")


@dataclass(frozen=True)
class Communication:
    collective: str  #: e.g. "ALLREDUCE"; "NONE" for no communication
    bytes: int
    compute_time: int  #: compute before it, in the file's time unit

    @property
    def communicates(self) -> bool:
        return self.collective != "NONE" and self.bytes > 0


@dataclass(frozen=True)
class SimaiLayer:
    name: str
    dependency: int
    forward: Communication
    input_gradient: Communication
    weight_gradient: Communication
    update_time: int


@dataclass(frozen=True)
class SimaiWorkload:
    policy: str
    parallelism: dict[str, int]
    layers: tuple[SimaiLayer, ...]

    @property
    def gpus(self) -> int:
        return self.parallelism.get("all_gpus", 0)

    @property
    def tensor_parallel(self) -> int:
        return self.parallelism.get("model_parallel_NPU_group", 1)


def read_simai_workload(path: str | Path) -> SimaiWorkload:
    """Read a SimAI workload file; a malformed one raises WorkloadFileError with file:line."""
    path = Path(path)
    lines = list(numbered_fields(path))
    if len(lines) < 2:
        raise WorkloadFileError(path, len(lines) + 1, "expected a policy line and a layer count")
    number, header = lines[0]
    policy, pairs = header[0], header[1:]
    if len(pairs) % 2 or not all(key.endswith(":") for key in pairs[::2]):
        raise WorkloadFileError(path, number, "the policy line continues with 'key: value' pairs")
    parallelism = {
        key[:-1]: parse_int(path, number, value, key) for key, value in zip(pairs[::2], pairs[1::2])
    }
    number, count = lines[1]
    if len(count) != 1 or not count[0].isdigit():
        raise WorkloadFileError(path, number, "the second line is the number of layers")
    layers = []
    for number, fields in lines[2:]:
        if len(fields) != 12:
            raise WorkloadFileError(path, number, f"a layer has 12 fields, this line has {len(fields)}")
        try:
            values = [int(f) for f in fields[1:3] + fields[4:6] + fields[7:9] + fields[10:12]]
        except ValueError as problem:
            raise WorkloadFileError(path, number, f"a number was expected: {problem}") from None
        dependency, fwd_time, fwd_bytes, ig_time, ig_bytes, wg_time, wg_bytes, update = values
        kinds = (fields[3], fields[6], fields[9])
        for kind in kinds:
            if kind not in COLLECTIVES:
                raise WorkloadFileError(path, number, f"unknown collective {kind!r}")
        layers.append(
            SimaiLayer(
                name=fields[0],
                dependency=dependency,
                forward=Communication(kinds[0], fwd_bytes, fwd_time),
                input_gradient=Communication(kinds[1], ig_bytes, ig_time),
                weight_gradient=Communication(kinds[2], wg_bytes, wg_time),
                update_time=update,
            )
        )
    if len(layers) != int(count[0]):
        raise WorkloadFileError(path, lines[-1][0], f"line 2 says {count[0]} layers, file has {len(layers)}")
    return SimaiWorkload(policy, parallelism, tuple(layers))
