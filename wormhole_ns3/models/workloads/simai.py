"""SimAI / AICB workload files: what a training iteration communicates, layer by layer.

Line 1 names the parallelization policy, then ``key: value`` pairs
(``model_parallel_NPU_group: 8 ep: 1 pp: 1 ... all_gpus: 64``; SimAI also
accepts a key without its colon, as in ``pp_comm 50331648``). Line 2 is the
number of layers. Then one line per layer with 12 fields: name, a dependency
field, and for each of the three passes (forward, input gradient, weight
gradient) its compute time, collective type and collective size in bytes,
and last the weight-update time.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from wormhole_ns3.models.workloads.collectives import all_to_all, ring_allgather, ring_allreduce, ring_reducescatter
from wormhole_ns3.models.workloads.dag import Workload, WorkloadBuilder
from wormhole_ns3.models.workloads.models import Parallelism
from wormhole_ns3.models.workloads.text import WorkloadFileError, numbered_fields, parse_count, parse_int, shown

#: Collective operations of the format; a suffix names the group ("_EP", "_DP_EP"), none the pass's default.
OPERATIONS = ("ALLREDUCE", "ALLGATHER", "REDUCESCATTER", "ALLTOALL", "ALLREDUCEALLTOALL")
GROUP_SUFFIXES = ("", "_EP", "_DP_EP")
#: Collective types the format uses ("NONE": the pass communicates nothing).
COLLECTIVES = frozenset(
    {"NONE", "BROADCAST"} | {operation + suffix for operation in OPERATIONS for suffix in GROUP_SUFFIXES}
)
PASSES = ("forward", "input_gradient", "weight_gradient")
#: The numeric fields of a layer line, by position, as error messages name them.
_LAYER_NUMBERS = {
    1: "the dependency", 2: "the forward compute time", 4: "the forward bytes",
    5: "the input-gradient compute time", 7: "the input-gradient bytes",
    8: "the weight-gradient compute time", 10: "the weight-gradient bytes", 11: "the update time",
}


@dataclass(frozen=True)
class Communication:
    collective: str  #: e.g. "ALLREDUCE"; "NONE" for no communication
    bytes: int
    compute_time: int  #: compute before it, in the file's time unit

    @property
    def communicates(self) -> bool:
        return self.collective != "NONE" and self.bytes > 0

    @property
    def operation(self) -> str:
        """The collective without its group suffix: "ALLTOALL" for "ALLTOALL_EP"."""
        for suffix in ("_DP_EP", "_EP"):
            if self.collective.endswith(suffix):
                return self.collective[: -len(suffix)]
        return self.collective

    @property
    def group_suffix(self) -> str:
        """"_EP", "_DP_EP" or "" (the pass's default group)."""
        return self.collective[len(self.operation):]


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
    source: str = ""  #: the file it was read from, as messages name it

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
    if len(pairs) % 2:
        raise WorkloadFileError(path, number, "the policy line continues with 'key: value' pairs")
    parallelism = {
        key.rstrip(":"): parse_int(path, number, value, key) for key, value in zip(pairs[::2], pairs[1::2])
    }
    number, count = lines[1]
    if len(count) != 1 or not count[0].isdigit():
        raise WorkloadFileError(path, number, "the second line is the number of layers")
    expected = parse_count(path, number, count[0], "the number of layers")  # isdigit() lets '²' through
    layers = tuple(_parse_layer(path, number, fields) for number, fields in lines[2:])
    if len(layers) != expected:
        raise WorkloadFileError(path, lines[-1][0], f"line 2 says {expected} layers, file has {len(layers)}")
    return SimaiWorkload(policy, parallelism, layers, str(path))


def _parse_layer(path: Path, number: int, fields: list[str]) -> SimaiLayer:
    """One layer line: name, dependency, then (compute time, collective, bytes) per pass, then the update time."""
    if len(fields) != 12:
        raise WorkloadFileError(path, number, f"a layer has 12 fields, this line has {len(fields)}")
    values = {i: parse_int(path, number, fields[i], what) for i, what in _LAYER_NUMBERS.items()}
    kinds = (fields[3], fields[6], fields[9])
    for kind in kinds:
        if kind not in COLLECTIVES:
            raise WorkloadFileError(path, number, f"unknown collective {shown(kind)}")
    return SimaiLayer(
        name=fields[0],
        dependency=values[1],
        forward=Communication(kinds[0], values[4], values[2]),
        input_gradient=Communication(kinds[1], values[7], values[5]),
        weight_gradient=Communication(kinds[2], values[10], values[8]),
        update_time=values[11],
    )


#: How a pass's collective is run, by the operation's name in the file.
_COLLECTIVE_FUNCTIONS = {
    "ALLREDUCE": ring_allreduce,
    "ALLGATHER": ring_allgather,
    "REDUCESCATTER": ring_reducescatter,
    "ALLTOALL": all_to_all,
}
_POLICIES = ("HYBRID_TRANSFORMER_FWD_IN_BCKWD", "HYBRID_TRANSFORMER")


def simai_to_workload(
    workload: SimaiWorkload,
    iterations: int = 1,
    gpus_per_server: int = 8,
    include_tp: bool = False,
    time_unit: float = 1e-9,
    name: str = "simai",
) -> Workload:
    """A SimAI workload as a task graph, every rank running the file's layers as SimAI's transformer loop does.

    Time unit: compute and update times are nanoseconds (AICB writes them
    so; SimAI's ns-3 backend ticks in ns); pass ``time_unit`` otherwise.

    Ranks and groups: TP = ``model_parallel_NPU_group``, PP = ``pp``, EP =
    ``ep``, DP = ``all_gpus`` / (TP*PP), laid out as in ``models``
    (``rank = tp + TP*(dp + DP*pp)``). As in SimAI, a forward or input-gradient
    collective without suffix runs over the TP group, a weight-gradient one
    over DP; ``_EP`` means the EP group, ``_DP_EP`` the ranks holding the
    same experts. TP collectives are skipped (TP is inside a server and not
    simulated; their count and bytes go to the metadata) unless
    ``include_tp``. A collective of 0 bytes or type NONE moves nothing.

    Per iteration, on every rank: forward over the layers in order (compute,
    then the forward collective, which the next compute waits for); then the
    layers in reverse: input-gradient compute and collective (waited for),
    weight-gradient compute and collective (not waited for: it overlaps the
    rest of the backward pass). Collectives on one communicator run in order.
    Then the sum of the layers' update times, once every weight-gradient
    collective of the rank is done, and the iteration ends when all ranks'
    updates are. Compute between two collectives is one task. SimAI starts a
    layer's next forward as soon as that layer's gradients are synced; here
    the next iteration waits for the whole previous one. ``pp_comm``
    (pipeline transfers) and activation recomputation (``checkpoints``) are
    not modelled: a file with checkpoints is rejected.
    """
    if workload.policy not in _POLICIES:
        raise ValueError(f"SimAI policy {workload.policy!r} is not supported (supported: {', '.join(_POLICIES)})")
    if workload.parallelism.get("checkpoints", 0) or workload.parallelism.get("checkpoint_initiates", 0):
        raise ValueError("SimAI workloads with activation checkpoints (recomputation) are not supported")
    header = workload.parallelism
    tp, pp, ep = header.get("model_parallel_NPU_group", 1), header.get("pp", 1), header.get("ep", 1)
    gpus = workload.gpus
    if gpus < 1 or gpus % (tp * pp):
        raise ValueError(f"SimAI workload: all_gpus={gpus} is not a multiple of TP*PP={tp}*{pp}")
    par = Parallelism(tp=tp, dp=gpus // (tp * pp), pp=pp, ep=ep, gpus_per_server=gpus_per_server)
    _check_fits(workload, par, include_tp, iterations)
    metadata = {
        "source": "simai",
        "policy": workload.policy,
        "header": header,
        "layers": len(workload.layers),
        "time_unit": time_unit,
        "include_tp": include_tp,
        "iterations": iterations,
    }
    builder = WorkloadBuilder(name, par.world, metadata)
    replay = _SimaiReplay(builder, par, _simai_groups(par), include_tp, time_unit)
    start: tuple[int, ...] = ()
    for _ in range(iterations):
        start = (replay.iteration(workload.layers, start),)
    builder.metadata["skipped_tp"] = {"collectives": replay.skipped, "bytes": replay.skipped_bytes}
    return builder.build()


#: Memory a task of a built graph takes at least: 2.80 GiB peak for the 12.1 M tasks of
#: AICB's 1,024-GPU GPT-175B with NVLink (experiments/scale/README.md; others took up to 446 B).
BYTES_PER_TASK = 240


def graph_size(workload: SimaiWorkload, par: Parallelism, include_tp: bool, iterations: int = 1) -> tuple[int, int]:
    """The flows and compute tasks ``simai_to_workload`` makes, counted from the file alone.

    Flows exactly (a ring all-reduce over N ranks is 2(N-1) steps of N flows, a
    ring all-gather or reduce-scatter N-1 steps, an all-to-all N(N-1) flows);
    compute tasks as at most one per rank before each network collective, per
    phase end and for the update.
    """
    groups = {kind: (len(members), len(members[0][1])) for kind, members in _simai_groups(par).items()}
    flows = collectives = 0
    for layer in workload.layers:
        for pass_, default in ((layer.forward, "tp"), (layer.input_gradient, "tp"), (layer.weight_gradient, "dp")):
            kind = _group_kind(pass_, default)
            if not pass_.communicates or (kind == "tp" and not include_tp):
                continue
            count, n = groups[kind]
            steps = {"ALLREDUCE": 2 * (n - 1), "ALLGATHER": n - 1, "REDUCESCATTER": n - 1, "ALLTOALL": n - 1}
            flows += count * n * steps.get(pass_.operation, 0)
            collectives += 1
    return flows * iterations, par.world * (collectives + 3) * iterations


def _check_fits(workload: SimaiWorkload, par: Parallelism, include_tp: bool, iterations: int) -> None:
    """ValueError, before anything is built, if the graph cannot fit in this machine's memory.

    A 9,216-GPU file (SimAI's ``workload_analytical.txt``) otherwise builds for
    minutes and is killed for memory, with no word of why.
    """
    flows, computes = graph_size(workload, par, include_tp, iterations)
    need = (flows + computes) * BYTES_PER_TASK
    have = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if need > have:
        where = f"{workload.source}:1: " if workload.source else "SimAI workload: "
        raise ValueError(
            f"{where}{workload.gpus:,} GPUs and {len(workload.layers):,} layers make {flows / 1e6:,.1f} M flows and "
            f"{computes / 1e6:,.1f} M compute tasks in {iterations} iteration{'s' * (iterations > 1)}, "
            f"about {need / 2**30:,.0f} GiB as a task graph ({BYTES_PER_TASK} B a task at least); "
            f"this machine has {have / 2**30:,.0f} GiB")


def _group_kind(pass_: Communication, default: str) -> str:
    """The kind of group a pass's collective runs over: its suffix's, or the pass's default."""
    return {"": default, "_EP": "ep", "_DP_EP": "edp"}[pass_.group_suffix]


def _simai_groups(par: Parallelism) -> dict[str, list[tuple[str, list[int]]]]:
    """The groups of each kind that partition the ranks, named as the graph labels them."""
    stages = range(par.pp)
    return {
        "tp": [(f"tp/pp{p}/dp{d}", [par.rank(t, d, p) for t in range(par.tp)]) for p in stages for d in range(par.dp)],
        "dp": [(f"dp/pp{p}/tp{t}", par.dp_group(p, t)) for p in stages for t in range(par.tp)],
        "ep": [group for p in stages for group in par.ep_groups(p)],
        "edp": [group for p in stages for group in par.expert_dp_groups(p)],
    }


class _SimaiReplay:
    """Replays the layer loop for all ranks at once: every rank runs the same file, so they move in step."""

    def __init__(self, builder: WorkloadBuilder, par: Parallelism, groups, include_tp: bool, time_unit: float):
        self.builder, self.par, self.groups = builder, par, groups
        self.include_tp, self.time_unit = include_tp, time_unit
        self.skipped = self.skipped_bytes = 0
        self.ready: dict[int, tuple[int, ...]] = {}  # per rank: what its next compute waits for
        self.stream: dict[tuple[str, int], tuple[int, ...]] = {}  # (communicator, rank) -> its last collective
        self.pending = 0.0  # compute not yet added, the same on every rank

    def iteration(self, layers: tuple[SimaiLayer, ...], start: tuple[int, ...]) -> int:
        ranks = range(self.par.world)
        self.ready, self.stream, self.pending = {r: start for r in ranks}, {}, 0.0
        unfinished: dict[int, list[int]] = {r: [] for r in ranks}  # appended to: a tuple per layer was quadratic
        for index, layer in enumerate(layers):
            self._pass(index, layer, layer.forward, "tp", "forward", blocking=True)
        self._flush("forward")
        for index in reversed(range(len(layers))):
            layer = layers[index]
            self._pass(index, layer, layer.input_gradient, "tp", "backward", blocking=True)
            done = self._pass(index, layer, layer.weight_gradient, "dp", "grad-sync", blocking=False)
            for r, ids in done.items():
                unfinished[r].extend(ids)
        self._flush("backward")
        update = sum(layer.update_time for layer in layers) * self.time_unit
        steps = [self.builder.add_compute(r, update, (*self.ready[r], *unfinished[r]), phase="optimizer")
                 for r in ranks]
        return self.builder.end_iteration(steps)

    def _pass(self, index: int, layer: SimaiLayer, pass_: Communication, default_group: str, phase: str,
              blocking: bool) -> dict[int, tuple[int, ...]]:
        """Accumulate the pass's compute and run its collective; returns each rank's done ids (empty if none)."""
        self.pending += pass_.compute_time * self.time_unit
        if not pass_.communicates:
            return {}
        kind = _group_kind(pass_, default_group)
        function = _COLLECTIVE_FUNCTIONS.get(pass_.operation)
        if function is None:
            raise ValueError(f"layer {index} ({layer.name}): collective {pass_.collective} is not supported")
        if kind == "tp" and not self.include_tp:
            self.skipped += 1
            self.skipped_bytes += pass_.bytes
            return {}
        self._flush("backward" if phase == "grad-sync" else phase)
        done: dict[int, tuple[int, ...]] = {}
        for group, ranks in self.groups[kind]:
            prereqs = {r: self.ready[r] + self.stream.get((group, r), ()) for r in ranks}
            done.update(function(self.builder, ranks, pass_.bytes, prereqs, group=group, phase=phase))
        for group, ranks in self.groups[kind]:
            self.stream.update({(group, r): done[r] for r in ranks})
        if blocking:
            self.ready.update(done)
        return done

    def _flush(self, phase: str) -> None:
        """Add the accumulated compute as one task per rank, after what each rank was waiting for."""
        if self.pending > 0:
            self.ready = {r: (self.builder.add_compute(r, self.pending, deps, phase=phase),)
                          for r, deps in self.ready.items()}
        self.pending = 0.0
