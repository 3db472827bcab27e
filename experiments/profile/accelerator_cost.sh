#!/usr/bin/env bash
# The accelerator's own cost where there is nothing to skip (issue 39): plain Run() against
# accelerated Run() on three scripts, each one `compare --profile` (the split of the
# accelerated Run(): events in C++, controller, memo, boundary, the script's callbacks,
# start-up). Usage, from the repository root:
#   experiments/profile/accelerator_cost.sh [OUTDIR]
# Environment: TREE=<checkout> measures that checkout's code (PYTHONPATH=TREE);
# CASES="alltoall moe-small udp-echo" picks the cases (also: small-interleaved, pipeline-small,
# two-rings-small, the zoo's small presets); OPTIONS="--no-memo" adds options to those.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/results/accelerator-cost}
TREE=${TREE:-$ROOT}
CASES=${CASES:-alltoall moe-small udp-echo}
OPTIONS=${OPTIONS:-}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
. "$ROOT/.venv/bin/activate"
export PYTHONPATH=$TREE
cd "$TREE"
for case in $CASES; do
    case $case in
        alltoall)  # every all-to-all contends on every uplink: nothing holds still, no episode repeats
            nice -n 10 python -m wormhole_ns3 compare --profile --json "$OUT/alltoall.json" \
                experiments/zoo/moe_alltoall.py --placement interleaved --iterations 2 > "$OUT/alltoall.txt" ;;
        moe-small)  # memo off: moe-small has nothing to skip
            nice -n 10 python -m wormhole_ns3 experiment compare llm-training --preset moe-small --no-memo \
                --profile --out "$OUT/moe-small" --force > "$OUT/moe-small.txt" ;;
        small-interleaved|pipeline-small|two-rings-small)  # the user scripts' small presets (zoo)
            experiment=$(echo "$case" | sed 's/-small$//; s/^small-interleaved$/moe-alltoall/; s/^pipeline$/pipeline-1f1b/')
            preset=$([ "$case" = small-interleaved ] && echo small-interleaved || echo small)
            nice -n 10 python -m wormhole_ns3 experiment compare "$experiment" --preset "$preset" $OPTIONS \
                --profile --out "$OUT/$case" --force > "$OUT/$case.txt" 2>/dev/null ;;
        udp-echo)  # untracked traffic: every event unattributed
            nice -n 10 python -m wormhole_ns3 compare --profile --json "$OUT/udp-echo.json" \
                experiments/scripts/udp_echo.py --packets 100000 --interval 0.00002 --rate 1Gbps \
                > "$OUT/udp-echo.txt" 2>/dev/null ;;
    esac
    grep -hE "speedup \(Run|^events  |accelerated Run\(\)|Run\(\) wall time|^\| events" \
        "$OUT/$case.txt" || true
done
