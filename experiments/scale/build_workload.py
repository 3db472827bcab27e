"""Build one workload as ``experiments/llm_training.py`` does, and nothing else: no fabric, no simulation.

Why: issue 15 asks what building a 1,024-GPU workload costs (peak memory and
time) apart from simulating it. Run it under ``/usr/bin/time -v`` for the
peak RSS; it prints the graph's size and the build's own wall time.

    python experiments/scale/build_workload.py simai FILE [--intra-server skip|nvlink]
    python experiments/scale/build_workload.py model gpt-175b|moe-32x22b [--gpus 1024]

``simai`` reads a SimAI/AICB workload file and builds it with the same call
as ``llm_training.py --simai FILE`` (8 GPUs per server, one iteration);
``--intra-server nvlink`` keeps TP collectives as ``--intra-server nvlink``
does. ``model`` builds one iteration from the product's own model builders
(``training_workload``), which have no preset at this scale: the shapes below
are GPT-3 175B and a Mixtral-8x22B-shaped MoE with 32 experts, on TP8-PP8 and
DP (and EP8) filling the GPUs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass

from wormhole_ns3.models.workloads import (
    DenseModel,
    MoeModel,
    Parallelism,
    Workload,
    read_simai_workload,
    simai_to_workload,
    training_workload,
)

#: GPT-3 175B (Brown et al. 2020): 96 layers, hidden 12288, 96 heads, sequence 2048.
GPT_175B = DenseModel(name="gpt-175b", layers=96, hidden=12288, heads=96, seq_len=2048, vocab=50257)
#: Mixtral-8x22B's layer shape (56 layers, hidden 6144, 48 heads, SwiGLU FFN 16384) with 32 experts, top-2.
MOE_32X22B = MoeModel(name="moe-32x22b", layers=56, hidden=6144, heads=48, seq_len=2048, vocab=32768,
                      experts=32, top_k=2, ffn_hidden=16384)
GPUS_PER_SERVER = 8


@dataclass(frozen=True)
class ModelBuild:
    model: DenseModel
    parallelism: Callable[[int], Parallelism]  #: from the GPU count


MODELS = {
    "gpt-175b": ModelBuild(GPT_175B, lambda gpus: Parallelism(tp=8, pp=8, dp=gpus // 64)),
    "moe-32x22b": ModelBuild(MOE_32X22B, lambda gpus: Parallelism(tp=8, pp=8, dp=gpus // 64, ep=8)),
}


def build(args: argparse.Namespace) -> Workload:
    if args.source == "simai":
        return simai_to_workload(read_simai_workload(args.what), iterations=1, gpus_per_server=GPUS_PER_SERVER,
                                 include_tp=args.intra_server == "nvlink", name=args.what)
    chosen = MODELS[args.what]
    par = chosen.parallelism(args.gpus)
    if par.world != args.gpus:
        raise SystemExit(f"build_workload.py: {args.gpus} GPUs do not split into TP8 x PP8 x DP")
    return training_workload(chosen.model, par, iterations=1, name=f"{args.what}-{args.gpus}g")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", choices=("simai", "model"))
    parser.add_argument("what", help="a SimAI file (simai) or one of: " + ", ".join(MODELS))
    parser.add_argument("--intra-server", choices=("skip", "nvlink"), default="skip")
    parser.add_argument("--gpus", type=int, default=1024)
    args = parser.parse_args()
    began = time.perf_counter()
    workload = build(args)
    seconds = time.perf_counter() - began
    flows = workload.flows
    print(f"{workload.name}: {workload.ranks} ranks, {len(workload.tasks):,} tasks, {len(flows):,} flows, "
          f"{sum(len(t.deps) for t in workload.tasks):,} dependencies, {workload.total_bytes / 1e9:,.1f} GB; "
          f"built in {seconds:.1f} s")


if __name__ == "__main__":
    main()
