#!/usr/bin/env bash
# A preset through Chakra and back (issue 40): export PRESET as Chakra traces, run the
# traces and the preset itself accelerated with the same options, and check that the two
# runs are the same run (events, skips, memo counters, every flow's FCT, iteration times).
# Where they are, the traces' error against plain ns-3 is the preset's kept comparison's
# (experiments/scoreboard/PRESET[-TRANSPORT]), whose baseline took hours.
# Usage, from the repository root:
#   experiments/chakra/roundtrip.sh PRESET [OUTDIR] [-- RUN OPTIONS]
#   experiments/chakra/roundtrip.sh gpt-7b-64g /tmp/rt -- --transport dcqcn --queues --rtt
set -euo pipefail
PRESET=${1:?usage: roundtrip.sh PRESET [OUTDIR] [-- RUN OPTIONS]}
shift
OUT=${1:-results/chakra-roundtrip/$PRESET}
[ $# -gt 0 ] && shift
[ "${1:-}" = "--" ] && shift
mkdir -p "$OUT"
wormhole-ns3 experiment export-chakra --preset "$PRESET" --out "$OUT/traces" --force
wormhole-ns3 experiment run llm-training --chakra "$OUT/traces/$PRESET" "$@" --out "$OUT/chakra" --force
wormhole-ns3 experiment run llm-training --preset "$PRESET" "$@" --out "$OUT/preset" --force
python3 - "$OUT" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
runs = {side: json.loads((out / side / "summary.json").read_text()) for side in ("chakra", "preset")}
fields = ("events", "skips", "skipped_time_s", "flows_finished", "iteration_times_s", "memo_hits", "memo_mirrored",
          "memo_misses", "flows_replayed", "flows_resumed")
same = {name: runs["chakra"].get(name) == runs["preset"].get(name) for name in fields}
same["fct.txt"] = (out / "chakra" / "fct.txt").read_bytes() == (out / "preset" / "fct.txt").read_bytes()
same["iterations.csv"] = (out / "chakra" / "iterations.csv").read_bytes() == (out / "preset" / "iterations.csv").read_bytes()
print(f"events: chakra {runs['chakra']['events']:,}, preset {runs['preset']['events']:,}")
for name, equal in same.items():
    print(f"{name}: {'same' if equal else 'DIFFERENT'}")
(out / "roundtrip.json").write_text(json.dumps({"events": runs["chakra"]["events"], "same": same}, indent=1) + "\n")
sys.exit(0 if all(same.values()) else 1)
PY
