#!/usr/bin/env bash
# Unit 10 on the GPU host in one go (about 12 minutes on an H100): everything it writes goes under $OUT.
#   OUT=/some/dir PY=python bash benchmarks/unit10_gpu_batch.sh
# 1. the Hopper kernel beside the unit-08 kernel and SDPA cuDNN/flash (alone on the GPU: it is the timing that counts),
#    then its Nsight Compute profile
# 2. then, side by side: unit 10's tests (GPU-marked included), `course selftest 10`, the notebook executed
# Each step has its own time limit; $OUT/summary.txt lists every step's exit status and wall time.
set -u
OUT=${OUT:?set OUT to an output folder}
PY=${PY:-python}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"  # the notebook's kernel imports utils from this checkout
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"

source "$(dirname "$0")/gpu_steps.sh"

nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
"$PY" -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" >>"$OUT/gpu.txt" 2>&1

step hopper_check 250 "$PY" -m benchmarks.hopper_check --out "$OUT/hopper_check"
step profile 200 env PY="$PY" bash benchmarks/hopper_profile.sh "$OUT/profile"

step pytest_unit10 300 "$PY" -m pytest tests/test_unit10.py -q -s -k "not executes_cleanly" -p no:cacheprovider &
step selftest10 400 "$PY" -m course selftest 10 --jobs 6 &
step notebook 300 "$PY" -m jupyter nbconvert --to notebook --execute source/10_hopper/hopper.ipynb \
    --output-dir "$OUT" --output hopper_executed.ipynb --ExecutePreprocessor.timeout=280 &
wait
cat "$SUMMARY"
