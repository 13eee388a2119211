"""The device layer: mode selection, the interpreter switch and its banner, overrides, a kernel through utils."""

import os
import subprocess
import sys

import pytest
import torch

import utils
from utils import runtime as device_layer


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("TRITON_INTERPRET", device_layer.ENV_VAR)}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=300
    )


def test_cpu_mode_switches_interpreter_on_and_prints_one_banner():
    out = run_python(
        "import os, utils; import utils; import triton; "
        "print('INTERPRET', os.environ.get('TRITON_INTERPRET')); print('MODE', utils.mode().name)",
        **{device_layer.ENV_VAR: "cpu"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.count(device_layer.CPU_BANNER) == 1
    assert "INTERPRET 1" in out.stdout
    assert "MODE CPU (Triton interpreter)" in out.stdout


def test_invalid_override_is_rejected_bilingually():
    out = run_python("import utils", **{device_layer.ENV_VAR: "tpu"})
    assert out.returncode != 0
    assert "无效" in out.stderr and "invalid" in out.stderr


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the no-GPU error path")
def test_forcing_gpu_without_one_fails_clearly():
    out = run_python("import utils", **{device_layer.ENV_VAR: "gpu"})
    assert out.returncode != 0
    assert "no CUDA GPU" in out.stderr


def test_triton_imported_too_early_is_reported():
    out = run_python("import triton, utils", **{device_layer.ENV_VAR: "cpu"})
    assert out.returncode != 0
    assert "import utils" in out.stderr and "restart" in out.stderr


def test_warnings_go_to_stdout_not_stderr():
    out = run_python("import utils, warnings; warnings.warn('harmless')", **{device_layer.ENV_VAR: "cpu"})
    assert out.returncode == 0
    assert "harmless" in out.stdout and "harmless" not in out.stderr


def test_mode_matches_this_machine():
    assert utils.mode().interpreter == (
        not torch.cuda.is_available() or os.environ.get(device_layer.ENV_VAR) == "cpu"
    )
    assert utils.device().type == ("cpu" if utils.interpreter() else "cuda")


def test_triton_kernel_launched_through_utils_runs_correctly():
    import triton
    import triton.language as tl

    @triton.jit
    def scaled_add(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offsets < n
        x = tl.load(x_ptr + offsets, mask=mask)
        y = tl.load(y_ptr + offsets, mask=mask)
        tl.store(out_ptr + offsets, x + alpha * y, mask=mask)

    n = 1000  # not a multiple of BLOCK: the mask guards the tail
    x, y = torch.randn(n, device=utils.device()), torch.randn(n, device=utils.device())
    out = torch.empty_like(x)
    scaled_add[(triton.cdiv(n, 256),)](x, y, out, n, 0.5, BLOCK=256)
    torch.testing.assert_close(out, x + 0.5 * y)
