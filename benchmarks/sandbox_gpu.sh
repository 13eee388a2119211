#!/usr/bin/env bash
# Issue 45 on the GPU host in one call (~9 min on an H200): the sandbox's and the grading paths' attack tests with a
# GPU in the sandbox, and units 06 and 08 judged there (their peak-memory properties are GPU-only).
#   OUT=/some/dir PY=python bash benchmarks/sandbox_gpu.sh
# Where nbgrader and nbconvert come from a `pip install --target DIR` folder, also export JUPYTER_PATH=DIR/share/jupyter
# (nbconvert's templates live there).
# Three groups side by side, each with its own time limit; $OUT/summary.txt lists every step's exit status and wall
# time, $OUT/<step>.log its output.
set -u
OUT=${OUT:?set OUT to an output folder}
PY=${PY:-python}
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"

source "$(dirname "$0")/gpu_steps.sh"
PYTEST=("$PY" -m pytest -q -rxXs -p no:cacheprovider --durations=5)

nvidia-smi --query-gpu=name,driver_version --format=csv >"$OUT/gpu.txt" 2>&1
"$PY" -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" >>"$OUT/gpu.txt" 2>&1
bwrap --version >>"$OUT/gpu.txt" 2>&1

step attacks 430 "${PYTEST[@]}" tests/test_sandbox_attacks.py &
step layers 430 "${PYTEST[@]}" tests/test_sandbox.py tests/test_secrets.py tests/test_relay.py tests/test_host_tables.py \
    tests/test_triton_reference.py tests/test_redteam_layers.py tests/test_pair_concurrency_attacks.py &
{
    step paths 200 "${PYTEST[@]}" tests/test_attacks_grading_paths.py tests/test_hostile_student.py tests/test_feedback_safety.py
    step selftest 220 "$PY" -m course selftest 06 08 --sample --jobs 4
} &
wait
cat "$SUMMARY"
