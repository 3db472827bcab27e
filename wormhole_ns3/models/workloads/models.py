"""Training iterations of dense GPT and MoE models as task graphs, sized from the model's shape.

Rank layout (Megatron order, TP fastest): ``rank = tp + TP * (dp + DP * pp)``.
With TP equal to the GPUs of a server, a TP group is one server and its
traffic (NVLink) is not simulated, as in the Wormhole paper; a DP or PP group
is "GPU i of several servers", i.e. one rail. EP groups are formed inside DP
groups (EP consecutive DP ranks with the same TP and PP index), so expert
all-to-all also stays on one rail; the ranks holding the same experts
(DP ranks equal modulo EP) all-reduce the expert gradients.

One iteration, per pipeline (one per DP and TP index):

* **1F1B schedule** (PipeDream-flush, Megatron's default): stage p runs
  min(PP-p-1, M) warm-up forwards, then alternates forward/backward, then the
  cool-down backwards, for M micro-batches. Each (stage, micro-batch, pass)
  is a compute task on every GPU of the stage; a forward sends its
  activations (b*s*h*dtype/TP bytes per GPU) to the next stage, a backward
  sends the same size of gradients back. Sends are asynchronous: the next
  compute on the sender does not wait for them, the receiver's does.
* **MoE layers**: each layer's pass is attention compute, dispatch
  all-to-all over the EP group, expert compute, combine all-to-all (the
  backward pass mirrors it). A rank's all-to-all buffer is its tokens
  (b*s/TP, sequence parallel) x top_k x h x dtype, routing assumed balanced.
* **Gradient sync** per stage after its last backward: ring all-reduce of
  the dense gradients (params per GPU x dtype) over the DP group, in
  ``dp_buckets`` buckets; with several buckets the last backward is split
  into as many pieces and bucket j starts when piece j is done (overlap, as
  Megatron's bucketed DDP does), each bucket after the previous one on the
  same communicator. Expert gradients all-reduce over the expert-DP group.
* **Optimizer** step on each GPU once its gradients are synchronized, then
  the iteration ends when every GPU's optimizer step is done; the next
  iteration starts from that end.

Compute times: forward FLOPs per layer per micro-batch 2*b*s*P_layer +
4*b*s^2*h (P_layer = 4h^2 + m*h*ffn, i.e. 24bsh^2 + 4bs^2h for a GPT MLP of
m=2 matrices and ffn=4h), the logits 2*b*s*h*vocab on the last stage,
backward twice the forward, all divided by TP and by the achieved FLOP rate
(peak x efficiency). The optimizer step is memory bound: params per GPU x
``optimizer_bytes_per_param`` / memory bandwidth. Embedding gradients live
on the first stage only (the tied copy on the last stage is not synced).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from wormhole_ns3.models.workloads.collectives import all_to_all, ring_allreduce, send_recv, split_evenly
from wormhole_ns3.models.workloads.dag import Workload, WorkloadBuilder

Ids = tuple[int, ...]


@dataclass(frozen=True)
class Parallelism:
    """How ranks are split: tensor (inside a server), data, pipeline and expert parallel sizes."""

    tp: int = 1
    dp: int = 1
    pp: int = 1
    ep: int = 1
    gpus_per_server: int = 8

    def __post_init__(self) -> None:
        for name in ("tp", "dp", "pp", "ep", "gpus_per_server"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"parallelism: {name} must be a positive integer, got {value!r}")
        if self.gpus_per_server % self.tp:
            raise ValueError(
                f"parallelism: TP={self.tp} must divide the {self.gpus_per_server} GPUs of a server "
                "(TP traffic is kept inside a server and not simulated)"
            )
        if self.dp % self.ep:
            raise ValueError(f"parallelism: EP={self.ep} must divide DP={self.dp} (EP groups are formed inside DP)")

    @property
    def world(self) -> int:
        return self.tp * self.dp * self.pp

    @property
    def label(self) -> str:
        expert = f"-ep{self.ep}" if self.ep > 1 else ""
        return f"tp{self.tp}{expert}-dp{self.dp}-pp{self.pp}"

    def rank(self, tp: int, dp: int, pp: int) -> int:
        return tp + self.tp * (dp + self.dp * pp)

    def stage_ranks(self, pp: int) -> list[int]:
        return [self.rank(t, d, pp) for d in range(self.dp) for t in range(self.tp)]

    def dp_group(self, pp: int, tp: int) -> list[int]:
        return [self.rank(tp, d, pp) for d in range(self.dp)]

    def ep_groups(self, pp: int) -> list[tuple[str, list[int]]]:
        """(name, ranks) of the EP groups of a stage: EP consecutive DP ranks of one TP index."""
        return [
            (f"ep/pp{pp}/tp{t}/{block}", [self.rank(t, block * self.ep + e, pp) for e in range(self.ep)])
            for t in range(self.tp)
            for block in range(self.dp // self.ep)
        ]

    def expert_dp_groups(self, pp: int) -> list[tuple[str, list[int]]]:
        """(name, ranks) of the groups holding the same experts: DP ranks equal modulo EP."""
        return [
            (f"edp/pp{pp}/tp{t}/ep{e}", [self.rank(t, d, pp) for d in range(e, self.dp, self.ep)])
            for t in range(self.tp)
            for e in range(self.ep)
        ]


@dataclass(frozen=True, kw_only=True)
class DenseModel:
    """A GPT-style transformer; ``micro_batches`` per iteration per DP replica (global batch = b*M*DP)."""

    name: str
    layers: int
    hidden: int
    heads: int
    seq_len: int
    vocab: int
    micro_batch: int = 1
    micro_batches: int = 8
    ffn_hidden: int = 0  #: 0 means 4 * hidden
    mlp_matrices: int = 2  #: 2 for a GPT MLP, 3 for a gated (SwiGLU) one
    dtype_bytes: int = 2

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "seq_len", "vocab", "micro_batch", "micro_batches",
                     "mlp_matrices", "dtype_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"model {self.name}: {name} must be a positive integer, got {value!r}")
        if self.hidden % self.heads:
            raise ValueError(f"model {self.name}: hidden={self.hidden} is not a multiple of heads={self.heads}")

    @property
    def ffn(self) -> int:
        return self.ffn_hidden or 4 * self.hidden

    @property
    def tokens(self) -> int:
        """Tokens of one micro-batch."""
        return self.micro_batch * self.seq_len

    @property
    def attention_params(self) -> int:
        return 4 * self.hidden * self.hidden

    @property
    def mlp_params(self) -> int:
        return self.mlp_matrices * self.hidden * self.ffn

    @property
    def dense_layer_params(self) -> int:
        """Parameters of a layer that every DP rank holds (all of it for a dense model)."""
        return self.attention_params + self.mlp_params

    @property
    def parameters(self) -> int:
        return self.layers * self.dense_layer_params + self.vocab * self.hidden

    def layer_flops(self) -> float:
        """Forward FLOPs of a micro-batch in the part of a layer every rank holds (all of it if dense)."""
        return 2.0 * self.tokens * self.dense_layer_params + 4.0 * self.micro_batch * self.seq_len**2 * self.hidden

    def logits_flops(self) -> float:
        return 2.0 * self.tokens * self.hidden * self.vocab


@dataclass(frozen=True, kw_only=True)
class MoeModel(DenseModel):
    """A transformer whose every MLP is ``experts`` experts, each token routed to ``top_k`` of them."""

    experts: int
    top_k: int = 2
    mlp_matrices: int = 3

    def __post_init__(self) -> None:
        super().__post_init__()
        if not isinstance(self.experts, int) or self.experts < 1:
            raise ValueError(f"model {self.name}: experts must be a positive integer, got {self.experts!r}")
        if not 1 <= self.top_k <= self.experts:
            raise ValueError(f"model {self.name}: top_k={self.top_k} must be within 1..experts={self.experts}")

    @property
    def dense_layer_params(self) -> int:
        """Attention and router: what every DP rank holds and all-reduces over DP."""
        return self.attention_params + self.hidden * self.experts

    @property
    def parameters(self) -> int:
        return self.layers * (self.dense_layer_params + self.experts * self.mlp_params) + self.vocab * self.hidden

    def expert_flops(self) -> float:
        """Forward FLOPs of a micro-batch's tokens in the experts of one layer (balanced routing)."""
        return 2.0 * self.tokens * self.top_k * self.mlp_params


@dataclass(frozen=True)
class ComputeModel:
    """How fast a GPU computes: peak TFLOPS x achieved efficiency; optimizer step bound by memory."""

    peak_tflops: float = 312.0  #: A100 BF16 dense
    efficiency: float = 0.45
    memory_bandwidth: float = 2.0e12  #: bytes/s (A100 80 GB HBM2e)
    optimizer_bytes_per_param: float = 24.0  #: Adam: fp32 master, two moments, read and written

    def __post_init__(self) -> None:
        if not (self.peak_tflops > 0 and 0 < self.efficiency <= 1 and self.memory_bandwidth > 0
                and self.optimizer_bytes_per_param >= 0):
            raise ValueError(f"compute model: peak, bandwidth > 0 and efficiency in (0, 1] required, got {self}")

    def seconds(self, flops: float) -> float:
        return flops / (self.peak_tflops * 1e12 * self.efficiency)

    def optimizer_seconds(self, params: int) -> float:
        return params * self.optimizer_bytes_per_param / self.memory_bandwidth


@dataclass(frozen=True)
class _Sizes:
    """What one GPU of stage ``p`` computes and sends, derived once from model and parallelism."""

    layers_per_stage: int
    forward_seconds: tuple[float, ...]  #: per stage, whole stage (dense) or per layer part (MoE: attention)
    expert_forward_seconds: float  #: per MoE layer, 0 for a dense model
    activation_bytes: int
    alltoall_bytes: int
    dense_grad_bytes: tuple[int, ...]  #: per stage, per GPU
    expert_grad_bytes: int  #: per GPU
    optimizer_seconds: tuple[float, ...]  #: per stage

    @classmethod
    def of(cls, model: DenseModel, par: Parallelism, compute: ComputeModel) -> _Sizes:
        if model.layers % par.pp:
            raise ValueError(f"model {model.name}: {model.layers} layers do not split into PP={par.pp} stages")
        moe = model if isinstance(model, MoeModel) else None
        if moe and moe.experts % par.ep:
            raise ValueError(f"model {model.name}: {moe.experts} experts do not split over EP={par.ep}")
        if not moe and par.ep > 1:
            raise ValueError(f"model {model.name} is dense; EP={par.ep} needs a MoeModel")
        per_stage = model.layers // par.pp
        last = par.pp - 1
        expert_params = moe.experts // par.ep * model.mlp_params // par.tp if moe else 0
        dense_params = [
            (per_stage * model.dense_layer_params + (model.vocab * model.hidden if p == 0 else 0)) // par.tp
            for p in range(par.pp)
        ]
        if moe:
            forward = [compute.seconds(model.layer_flops() / par.tp)] * par.pp
            logits_per_layer = compute.seconds(model.logits_flops() / par.tp) / per_stage
            forward[last] += logits_per_layer
        else:
            forward = [
                compute.seconds((per_stage * model.layer_flops() + (model.logits_flops() if p == last else 0))
                                / par.tp)
                for p in range(par.pp)
            ]
        return cls(
            layers_per_stage=per_stage,
            forward_seconds=tuple(forward),
            expert_forward_seconds=compute.seconds(moe.expert_flops() / par.tp) if moe else 0.0,
            activation_bytes=model.tokens * model.hidden * model.dtype_bytes // par.tp,
            alltoall_bytes=model.tokens // par.tp * moe.top_k * model.hidden * model.dtype_bytes if moe else 0,
            dense_grad_bytes=tuple(p * model.dtype_bytes for p in dense_params),
            expert_grad_bytes=per_stage * expert_params * model.dtype_bytes,
            optimizer_seconds=tuple(compute.optimizer_seconds(p + per_stage * expert_params) for p in dense_params),
        )


def one_f_one_b(stages: int, micro_batches: int) -> list[tuple[int, str, int]]:
    """(stage, "F" or "B", micro-batch) of a 1F1B iteration, in an order where every input comes first.

    Stage p's own order is min(stages-p-1, M) forwards, then forward/backward
    pairs, then the remaining backwards; a forward needs the previous stage's
    forward of the same micro-batch, a backward the next stage's backward.
    """
    orders = []
    for p in range(stages):
        warm = min(stages - p - 1, micro_batches)
        order = [("F", m) for m in range(warm)]
        for i in range(micro_batches - warm):
            order += [("F", warm + i), ("B", i)]
        order += [("B", m) for m in range(micro_batches - warm, micro_batches)]
        orders.append(order)
    placed: set[tuple[int, str, int]] = set()
    position = [0] * stages
    result: list[tuple[int, str, int]] = []
    while len(result) < 2 * stages * micro_batches:
        for p in range(stages):
            while position[p] < len(orders[p]):
                kind, m = orders[p][position[p]]
                needs = (p - 1, "F", m) if kind == "F" else (p + 1, "B", m)
                if 0 <= needs[0] < stages and needs not in placed:
                    break
                placed.add((p, kind, m))
                result.append((p, kind, m))
                position[p] += 1
    return result


def training_workload(
    model: DenseModel,
    parallelism: Parallelism,
    compute: ComputeModel | None = None,
    iterations: int = 1,
    dp_buckets: int = 1,
    name: str | None = None,
) -> Workload:
    """``iterations`` training iterations of ``model`` (dense or MoE) on ``parallelism`` (see module doc)."""
    compute = compute or ComputeModel()
    if not isinstance(iterations, int) or iterations < 1:
        raise ValueError(f"iterations must be a positive integer, got {iterations!r}")
    sizes = _Sizes.of(model, parallelism, compute)
    if not 1 <= dp_buckets <= sizes.layers_per_stage:
        raise ValueError(f"dp_buckets must be within 1..{sizes.layers_per_stage} (layers per stage), got {dp_buckets}")
    metadata = {
        "model": {"kind": type(model).__name__, **asdict(model), "parameters": model.parameters},
        "parallelism": asdict(parallelism),
        "compute": asdict(compute),
        "schedule": "1f1b",
        "dp_buckets": dp_buckets,
        "iterations": iterations,
        "sizes": asdict(sizes),
    }
    builder = WorkloadBuilder(name or f"{model.name}-{parallelism.label}", parallelism.world, metadata)
    graph = _TrainingGraph(builder, model, parallelism, sizes, dp_buckets)
    start: Ids = ()
    for _ in range(iterations):
        start = (graph.iteration(start),)
    return builder.build()


class _TrainingGraph:
    """Adds one iteration at a time; every pipeline runs the same schedule, so a step is added for all at once."""

    def __init__(self, builder: WorkloadBuilder, model: DenseModel, par: Parallelism, sizes: _Sizes,
                 dp_buckets: int) -> None:
        self.builder, self.model, self.par, self.sizes, self.buckets = builder, model, par, sizes, dp_buckets
        self.moe = isinstance(model, MoeModel)

    def iteration(self, start: Ids) -> int:
        """Add one iteration after ``start``; returns the id of its end."""
        par, last_mb = self.par, self.model.micro_batches - 1
        after: dict[int, Ids] = {rank: start for rank in range(par.world)}  # last task on each GPU
        arrived: dict[tuple[str, int, int], Ids] = {}  # (pass, micro-batch, receiving rank) -> flow
        optimizer: list[int] = []
        for stage, kind, mb in one_f_one_b(par.pp, self.model.micro_batches):
            ranks = par.stage_ranks(stage)
            inputs = {r: after[r] + arrived.pop((kind, mb, r), ()) for r in ranks}
            if kind == "F":
                pieces = self._forward(stage, inputs)
            else:
                pieces = self._backward(stage, inputs, self.buckets if mb == last_mb else 1)
            after.update({r: pieces[r][-1] for r in ranks})
            peer_stage = stage + 1 if kind == "F" else stage - 1
            if 0 <= peer_stage < par.pp:
                self._send(kind, stage, peer_stage, mb, after, arrived)
            if kind == "B" and mb == last_mb:
                optimizer += self._sync_and_step(stage, pieces, after)
        return self.builder.end_iteration(optimizer)

    def _forward(self, stage: int, inputs: dict[int, Ids]) -> dict[int, list[Ids]]:
        s = self.sizes
        if not self.moe:
            return self._compute(inputs, s.forward_seconds[stage], "forward")
        cursor = inputs
        for _ in range(s.layers_per_stage):
            cursor = self._compute_last(cursor, s.forward_seconds[stage], "forward")
            cursor = self._alltoall(stage, cursor, "forward")
            cursor = self._compute_last(cursor, s.expert_forward_seconds, "forward")
            cursor = self._alltoall(stage, cursor, "forward")
        return {r: [ids] for r, ids in cursor.items()}

    def _backward(self, stage: int, inputs: dict[int, Ids], pieces: int) -> dict[int, list[Ids]]:
        """Backward of a stage; returns per GPU the ids after each of ``pieces`` groups of layers."""
        s = self.sizes
        groups = split_evenly(s.layers_per_stage, pieces)
        if not self.moe:
            return self._compute(inputs, 2 * s.forward_seconds[stage], "backward", groups)
        out: dict[int, list[Ids]] = {r: [] for r in inputs}
        cursor = inputs
        for layers in groups:
            for _ in range(layers):
                cursor = self._alltoall(stage, cursor, "backward")
                cursor = self._compute_last(cursor, 2 * s.expert_forward_seconds, "backward")
                cursor = self._alltoall(stage, cursor, "backward")
                cursor = self._compute_last(cursor, 2 * s.forward_seconds[stage], "backward")
            for r, ids in cursor.items():
                out[r].append(ids)
        return out

    def _compute(self, inputs: dict[int, Ids], seconds: float, phase: str,
                 groups: list[int] | None = None) -> dict[int, list[Ids]]:
        """``seconds`` of compute on every GPU, as one task or as pieces sized like the layer ``groups``."""
        groups = groups or [1]
        total = sum(groups)
        out: dict[int, list[Ids]] = {}
        for rank, deps in inputs.items():
            out[rank] = []
            for layers in groups:
                deps = (self.builder.add_compute(rank, seconds * layers / total, deps, phase=phase),)
                out[rank].append(deps)
        return out

    def _compute_last(self, inputs: dict[int, Ids], seconds: float, phase: str) -> dict[int, Ids]:
        return {r: pieces[-1] for r, pieces in self._compute(inputs, seconds, phase).items()}

    def _alltoall(self, stage: int, cursor: dict[int, Ids], phase: str) -> dict[int, Ids]:
        done = dict(cursor)
        for group, ranks in self.par.ep_groups(stage):
            done.update(all_to_all(self.builder, ranks, self.sizes.alltoall_bytes, cursor, group=group, phase=phase))
        return done

    def _send(self, kind: str, stage: int, peer_stage: int, mb: int, after: dict[int, Ids],
              arrived: dict[tuple[str, int, int], Ids]) -> None:
        """Activations (forward) or their gradients (backward) from every GPU of a stage to its peer."""
        par = self.par
        for d in range(par.dp):
            for t in range(par.tp):
                src, dst = par.rank(t, d, stage), par.rank(t, d, peer_stage)
                done = send_recv(self.builder, (src, dst), self.sizes.activation_bytes, {src: after[src]},
                                 group=f"pp/dp{d}/tp{t}", phase="forward" if kind == "F" else "backward")
                arrived[(kind, mb, dst)] = done[dst]

    def _sync_and_step(self, stage: int, pieces: dict[int, list[Ids]], after: dict[int, Ids]) -> list[int]:
        """Gradient all-reduces of a stage (dense in buckets, then experts) and each GPU's optimizer step."""
        par, builder, sizes = self.par, self.builder, self.sizes
        synced: dict[int, Ids] = {r: () for r in pieces}
        for bucket, size in enumerate(split_evenly(sizes.dense_grad_bytes[stage], self.buckets)):
            for t in range(par.tp):
                ranks = par.dp_group(stage, t)
                prereqs = {r: pieces[r][bucket] + synced[r] for r in ranks}
                synced.update(ring_allreduce(builder, ranks, size, prereqs, group=f"dp/pp{stage}/tp{t}",
                                             phase="grad-sync"))
        if sizes.expert_grad_bytes:
            for group, ranks in par.expert_dp_groups(stage):
                done = ring_allreduce(builder, ranks, sizes.expert_grad_bytes, {r: after[r] for r in ranks},
                                      group=group, phase="grad-sync")
                synced.update({r: synced[r] + done[r] for r in ranks})
        return [
            builder.add_compute(r, sizes.optimizer_seconds[stage], after[r] + synced[r], phase="optimizer")
            for r in par.stage_ranks(stage)
        ]
