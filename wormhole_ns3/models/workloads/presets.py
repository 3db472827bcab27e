"""Named training workloads: the Wormhole paper's configurations, a medium benchmark, small test cases.

Paper presets are the configurations issue 3 cites from Table 1 of Long et
al., "Supercharging Packet-level Network Simulation of Large Model Training
via Memoization and Fast-Forwarding" (NSDI '26, arXiv 2602.10615): GPU counts
and TP/DP/PP/EP sizes as the issue gives them (the abstract confirms GPT-13B
on 128 GPUs; the table itself was not checked). Sequence length 2048,
micro-batch 1 and 8 micro-batches per iteration are our choices. MoE-8x7B is cited
as TP8-EP8-DP4-PP2 on 64 GPUs; our layout forms EP groups inside DP groups (so
that all-to-all crosses the network on one rail), which caps EP at DP=4, so
the preset is TP8-EP4-DP4-PP2: same GPUs, TP, DP and PP, two experts per EP
rank.

Medium presets are benchmarks sized so that plain ns-3 takes tens of
minutes (``estimate_plain_ns3``: 2.5 us/event, 6 events per packet per hop,
1448-byte segments each ACKed, 2 hops on one rail; 3 hops would be 1.5x):

* ``gpt-medium``: 37.93 GB in 4 iterations -> 52.4 M packets, ~26 min (39 min at 3 hops).
* ``moe-medium``: 34.29 GB in 4 iterations -> 47.4 M packets, ~24 min (36 min at 3 hops).

Small presets (16 ranks, 2 iterations, collective messages of ~0.4-5 MB)
take plain ns-3 well under a minute (estimates 11 s and 18 s); their
"servers" hold 2 GPUs so that TP=2 stays inside one.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from wormhole_ns3.models.workloads.dag import Workload
from wormhole_ns3.models.workloads.models import ComputeModel, DenseModel, MoeModel, Parallelism, training_workload

GPT_7B = DenseModel(name="gpt-7b", layers=32, hidden=4096, heads=32, seq_len=2048, vocab=50257)
GPT_13B = DenseModel(name="gpt-13b", layers=40, hidden=5120, heads=40, seq_len=2048, vocab=50257)
MIXTRAL_8X7B = MoeModel(name="moe-8x7b", layers=32, hidden=4096, heads=32, seq_len=2048, vocab=32000, experts=8,
                        top_k=2, ffn_hidden=14336)


@dataclass(frozen=True)
class Preset:
    description: str
    model: DenseModel
    parallelism: Parallelism
    iterations: int
    dp_buckets: int = 1

    def workload(self, name: str, iterations: int | None = None, compute: ComputeModel | None = None,
                 dp_buckets: int | None = None) -> Workload:
        return training_workload(self.model, self.parallelism, compute, iterations or self.iterations,
                                 self.dp_buckets if dp_buckets is None else dp_buckets, name=name)


PRESETS: MappingProxyType[str, Preset] = MappingProxyType({
    "gpt-small": Preset(
        "GPT 9M, 16 GPUs TP2-DP4-PP2 (2 per server), 2 iterations, 0.26 GB: plain ns-3 in ~11 s",
        DenseModel(name="gpt-small", layers=4, hidden=384, heads=6, seq_len=1024, vocab=4096, micro_batches=4),
        Parallelism(tp=2, dp=4, pp=2, gpus_per_server=2),
        iterations=2,
    ),
    "moe-small": Preset(
        "MoE 4 experts top-2, 16 GPUs TP2-EP4-DP4-PP2 (2 per server), 2 iterations, 0.42 GB: plain ns-3 in ~18 s",
        MoeModel(name="moe-small", layers=4, hidden=384, heads=6, seq_len=1024, vocab=4096, micro_batches=2,
                 experts=4, top_k=2, ffn_hidden=768),
        Parallelism(tp=2, dp=4, pp=2, ep=4, gpus_per_server=2),
        iterations=2,
    ),
    "gpt-medium": Preset(
        "GPT 760M, 64 GPUs TP8-DP4-PP2, 4 iterations, 37.93 GB: plain ns-3 ~26 min (benchmark)",
        DenseModel(name="gpt-medium", layers=24, hidden=1536, heads=16, seq_len=2048, vocab=50257),
        Parallelism(tp=8, dp=4, pp=2),
        iterations=4,
        dp_buckets=4,
    ),
    "moe-medium": Preset(
        "MoE 1.2B 8 experts top-2, 64 GPUs TP8-EP4-DP4-PP2, 4 iterations, 34.29 GB: plain ns-3 ~24 min (benchmark)",
        MoeModel(name="moe-medium", layers=4, hidden=2048, heads=16, seq_len=4096, vocab=32000, micro_batches=4,
                 experts=8, top_k=2, ffn_hidden=5632),
        Parallelism(tp=8, dp=4, pp=2, ep=4),
        iterations=4,
        dp_buckets=2,
    ),
    "gpt-7b-64g": Preset(
        "paper Table 1: GPT-7B, 64 GPUs TP8-DP4-PP2, 2 iterations, 161.7 GB",
        GPT_7B,
        Parallelism(tp=8, dp=4, pp=2),
        iterations=2,
        dp_buckets=4,
    ),
    "gpt-13b-128g": Preset(
        "paper Table 1: GPT-13B, 128 GPUs TP8-DP4-PP4, 2 iterations, 316.2 GB",
        GPT_13B,
        Parallelism(tp=8, dp=4, pp=4),
        iterations=2,
        dp_buckets=5,
    ),
    "moe-8x7b-64g": Preset(
        "paper Table 1: MoE-8x7B, 64 GPUs TP8-EP4-DP4-PP2 (paper: EP8, see module doc), 2 iterations, 263.0 GB",
        MIXTRAL_8X7B,
        Parallelism(tp=8, dp=4, pp=2, ep=4),
        iterations=2,
        dp_buckets=4,
    ),
})


def list_presets() -> dict[str, str]:
    """Preset name -> one-line description."""
    return {name: preset.description for name, preset in PRESETS.items()}


def preset_workload(name: str, iterations: int | None = None, compute: ComputeModel | None = None,
                    dp_buckets: int | None = None) -> Workload:
    """The named preset's workload (its own iteration count and gradient buckets unless given)."""
    if name not in PRESETS:
        raise ValueError(f"unknown workload preset {name!r}; known presets: {', '.join(PRESETS)}")
    return PRESETS[name].workload(name, iterations, compute, dp_buckets)
