#!/usr/bin/env bash
# Nsight Compute profile of cuDNN's and the course's backward at the leaderboard shape (d = 64 and 128, causal,
# N = 16k, bf16, dO of ones with stride 0):  bash benchmarks/backward_profile.sh OUT  ->  OUT/d<d>.{csv,md}
set -u
OUT=${1:?usage: backward_profile.sh OUT}
PY=${PY:-python}
mkdir -p "$OUT"
for d in 64 128; do
    ncu --profile-from-start off --csv --page details --clock-control none \
        --section SpeedOfLight --section ComputeWorkloadAnalysis --section Occupancy \
        --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \
        --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__pipe_tensor_op.*cycles_active\.avg\.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,lts__t_bytes.sum,dram__bytes.sum" \
        "$PY" -m benchmarks.backward_profile launch --d "$d" >"$OUT/d$d.csv" 2>"$OUT/d$d.log" || { tail "$OUT/d$d.log"; exit 1; }
    "$PY" -m benchmarks.backward_profile summarize "$OUT/d$d.csv" --out "$OUT/d$d.md"
done
