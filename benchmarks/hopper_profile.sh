#!/usr/bin/env bash
# Nsight Compute profile of the Hopper forward beside cuDNN and unit 08 (d = 64 and 128, causal, N = 4k, bf16):
#   bash benchmarks/hopper_profile.sh OUT   ->  OUT/d<d>_causal.{csv,md,log}; about 2 minutes on an H100
set -u
OUT=${1:?usage: hopper_profile.sh OUT}
PY=${PY:-python}
mkdir -p "$OUT"
for d in 64 128; do
    ncu --profile-from-start off --csv --page details \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy \
        --section WarpStateStats --section LaunchStats \
        --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__pipe_tensor_op.*cycles_active\.avg\.pct_of_peak_sustained_active" \
        "$PY" -m benchmarks.hopper_profile launch --d "$d" --causal >"$OUT/d${d}_causal.csv" 2>"$OUT/d${d}_causal.log" || exit 1
    "$PY" -m benchmarks.hopper_profile summarize "$OUT/d${d}_causal.csv" --out "$OUT/d${d}_causal.md"
done
