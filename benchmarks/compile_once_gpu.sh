#!/usr/bin/env bash
# Issue 50 on the GPU host (not run yet): compile once, per-stage costs, the cluster simulation from measured costs.
#   OUT=/some/dir PY=python STEP=check|unit08|units bash benchmarks/compile_once_gpu.sh
# check  (~3 min): the reference cache's GPU test, then the sandbox's and the pair's attack tests with it in use
# unit08 (~5 min): `grading_throughput --students 24` at the default jobs (before: 239 s, 10.0 s a submission,
#                  issue 50), then `course demo` (before: 167 s); the stage means say what the reference cache saved
# units  (~10 min a call, two calls: UNITS="01 02 03 04 05", then "06 07 08 09 10"): each unit's pair costs at
#                  12 students, then `cluster_sim` from them (the other units' costs are estimated until then)
# Each step has its own time limit; $OUT/summary.txt lists every step's exit status and wall time.
set -u
OUT=${OUT:?set OUT to an output folder}
PY=${PY:-python}
STEP=${STEP:?set STEP to check, unit08 or units}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
SUMMARY="$OUT/summary.txt"

source "$(dirname "$0")/gpu_steps.sh"

case "$STEP" in
check)
    step reference_gpu 200 "$PY" -m pytest tests/test_triton_reference.py -m gpu -q
    step attacks 400 "$PY" -m pytest tests/test_triton_reference.py tests/test_pair_concurrency_attacks.py tests/test_judge_stages.py -q
    ;;
unit08)
    step throughput24 400 "$PY" -m benchmarks.grading_throughput --students 24 --out "$OUT/unit08"
    step demo 200 "$PY" -m course demo
    ;;
units)
    for unit in ${UNITS:?set UNITS to the units of this call}; do
        step "unit$unit" 300 "$PY" -m benchmarks.grading_throughput --unit "$unit" --students 12 --out "$OUT/units/$unit"
    done
    step cluster_sim 120 "$PY" -m benchmarks.cluster_sim --out "$OUT/cluster_sim" \
        --throughput "$OUT"/units/*/grading_throughput.json
    ;;
esac
cat "$SUMMARY"
