#!/usr/bin/env bash
# Instruction counts of the event loop (Simulator::Run() only), plain ns-3 vs accelerated,
# on a small dumbbell with nothing to skip. Usage, from the repository root:
#   experiments/profile/profile_kernel.sh [OUTDIR] [dumbbell args...]
# Environment: SCRIPT=<ns-3 script> profiles another script (its args then replace the dumbbell's);
# TREE=<checkout> profiles that checkout's code (PYTHONPATH=TREE, its native/
# built into WORMHOLE_NS3_CACHE if set); SIDES="base accel" picks the sides to profile;
# ACCEL_OPTIONS="--no-memo" adds options to the accelerated side (the memo's pynauty, if built
# with AVX-512, stops valgrind the same way as cling's wrappers: see the README).
# Writes OUTDIR/{accel,base}.callgrind, OUTDIR/{accel,base}.txt (callgrind_annotate, inclusive
# and exclusive) and prints each side's total instructions and events.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${1:-$ROOT/results/wormhole-profile}; shift || true
ARGS=("$@"); [ ${#ARGS[@]} -gt 0 ] || ARGS=(--flows 2 --min-mb 5 --max-mb 5)
TREE=${TREE:-$ROOT}
SIDES=${SIDES:-base accel}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)  # the script works from TREE
. "$ROOT/.venv/bin/activate"
export PYTHONPATH=$TREE
cd "$TREE"
# cling compiles cppyy's wrappers for the target its precompiled header was built for (cppyy's
# own: -march=native); valgrind 3.19 stops at the first AVX-512 instruction (SIGILL in a
# wrapper), so both sides use a header built for AVX2 at most (made on first use, ~1 minute)
export EXTRA_CLING_ARGS=${EXTRA_CLING_ARGS:--O2 -march=x86-64-v3}
export CLING_STANDARD_PCH=${CLING_STANDARD_PCH:-$ROOT/results/pch/allDict.cxx.pch.x86-64-v3}
mkdir -p "$(dirname "$CLING_STANDARD_PCH")"
SCRIPT=${SCRIPT:-wormhole_ns3/examples/dctcp_dumbbell.py}
# build/load the native modules outside valgrind first (cached by source hash)
python -m wormhole_ns3 run --results "$OUT/warm.json" $SCRIPT "${ARGS[@]}" > /dev/null 2>&1
profile() {  # name, function whose calls are measured, extra wormhole-ns3 options
    local name=$1 fn=$2; shift 2
    valgrind --tool=callgrind --trace-children=no --collect-atstart=no \
        --toggle-collect="$fn" --callgrind-out-file="$OUT/$name.callgrind" \
        python -m wormhole_ns3 run "$@" --results "$OUT/$name.json" $SCRIPT "${ARGS[@]}" \
        > "$OUT/$name.log" 2>&1
    callgrind_annotate --inclusive=yes "$OUT/$name.callgrind" > "$OUT/$name.txt"
    callgrind_annotate "$OUT/$name.callgrind" > "$OUT/$name.self.txt"
    local total events
    total=$(grep -m1 'PROGRAM TOTALS' "$OUT/$name.txt" | awk '{print $1}')
    events=$(python -c "import json,sys; print(json.load(open(sys.argv[1]))['events'])" "$OUT/$name.json")
    echo "$name: Run() instructions $total, events $events"
}
for side in $SIDES; do
    case $side in
        base) profile base 'ns3::DefaultSimulatorImpl::Run()' --baseline ;;
        accel) profile accel 'ns3::WormholeSimulatorImpl::Run()' ${ACCEL_OPTIONS:-} ;;
    esac
done
