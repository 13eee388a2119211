"""Unit 10's FP8 forward (`course/reference/hopper_fp8.py`): quantising keeps every value within e4m3's rounding;
the kernel's O stays within FP8's error of float64, and O and L close to float64 attention of the kernel's own
e4m3 inputs, on odd shapes, causal and not, Nq ≠ Nk, d = 64 and 128 (the CPU interpreter's e4m3 rounding is worse,
see the module: looser bounds there). Also the benchmark's table."""

import pytest
import torch

import utils
from course.reference import hopper_fp8
from utils import grading

# Bounds on ‖O − O₆₄‖ / ‖O₆₄‖ per row (median, max) against float64 attention of the unrounded inputs: e4m3 has 3
# mantissa bits, so a row is typically off by a few per cent (`benchmarks/results/h100/hopper/fp8/`); a wrong scale,
# mask or transpose is off by tens of per cent in most rows. Against float64 attention of the kernel's own e4m3
# inputs (`dequantize`) only P's rounding remains in O (median below `P_ROUNDING`; measured 0.025 on the H100), and
# hardly any in L: the kernel sums the unrounded P in float32. On the CPU L agrees to float32 rounding (~5e-7); the
# H100's FP8 tensor cores accumulate the scores with fewer mantissa bits than float32 (about 14, DeepSeek-V3's report,
# section 3.3.2), a score of size ~10 off by ~1e-3 (L off by 1.1e-3 at N = 4096, d = 128 on the H100), so L gets
# `L_BOUND`["gpu"]: still 7x below what rounding the inputs to e4m3 costs L by itself (0.07), and far below a wrong
# scale or mask.
BOUNDS = {"gpu": (0.06, 0.25), "cpu": (0.09, 0.4)}
P_ROUNDING = 0.05
L_BOUND = {"gpu": 1e-2, "cpu": 1e-4}

CASES = [  # B·H, Nq, Nk, d, dtype, causal
    (2, 37, 51, 64, torch.float32, True),
    (2, 70, 45, 64, torch.float16, False),
    (1, 65, 100, 128, torch.bfloat16, True),
    (3, 33, 33, 128, torch.float32, False),
]


def assert_within_fp8_error(q, k, v, is_causal, where):
    x = hopper_fp8.prepare(q, k, v)
    out, lse = hopper_fp8.fp8_attention(x, is_causal, q.shape[-1] ** -0.5)
    assert out.dtype == q.dtype and out.shape == q.shape and lse.shape == q.shape[:-1]
    exact, _ = grading.reference_attention(q, k, v, is_causal=is_causal)
    errors = grading.row_errors(out, exact)
    median_bound, max_bound = BOUNDS[where]
    assert errors.median() < median_bound and errors.max() < max_bound, (errors.median(), errors.max())
    on_fp8_inputs, lse_on_fp8_inputs = grading.reference_attention(
        *hopper_fp8.dequantize(x), is_causal=is_causal
    )
    assert grading.row_errors(out.reshape(on_fp8_inputs.shape), on_fp8_inputs).median() < P_ROUNDING
    assert (lse.reshape(lse_on_fp8_inputs.shape).double() - lse_on_fp8_inputs).abs().max() < L_BOUND[where]


@pytest.mark.parametrize("dim", [-1, -2])
def test_quantize_keeps_every_value_within_e4m3_rounding(dim):
    x = torch.randn(3, 50, 64) * torch.logspace(-3, 3, 50)[:, None]  # rows spanning six orders of magnitude
    x[1, 7] = 0.0
    x8, scales = hopper_fp8.quantize(x, dim)
    assert x8.dtype == hopper_fp8.FP8 and x8.float().abs().max() <= hopper_fp8.FP8_MAX
    back = x8.float() * scales.unsqueeze(dim)
    amax = x.abs().amax(dim=dim, keepdim=True)
    # e4m3: relative rounding ≤ 2⁻⁴ for normal values, absolute ≤ 2⁻¹⁰ · scale below them
    assert ((back - x).abs() <= x.abs() / 16 + amax / hopper_fp8.FP8_MAX * 2**-9 + 1e-30).all()
    if dim == -1:
        assert scales[1, 7] == 1.0 and (x8[1, 7].float() == 0).all()


@pytest.mark.parametrize("case", CASES)
def test_the_fp8_forward_is_within_fp8_error_of_float64(case):
    b, n_q, n_k, d, dtype, is_causal = case
    q, k, v = grading.random_qkv(b, n_q, n_k, d, dtype=dtype, device=utils.device(), requires_grad=False)
    assert_within_fp8_error(q, k, v, is_causal, "gpu" if utils.mode().is_gpu else "cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("is_causal", [False, True])
def test_gpu_fp8_forward_large_and_odd(dtype, d, is_causal):
    q, k, v = grading.random_qkv(3, 1031, 2053, d, dtype=dtype, device="cuda", requires_grad=False)
    assert_within_fp8_error(q, k, v, is_causal, "gpu")


def test_the_benchmark_table_has_a_row_per_point_and_the_ratios():
    from benchmarks import hopper_fp8 as bench

    speeds = {"fp8 kernel": 600.0, "bf16 Hopper forward": 400.0, "bf16 SDPA cuDNN": 500.0}
    rows = [
        {"d": d, "causal": c, "n": n, "tflops": speeds}
        for d in (64, 128)
        for c in (False, True)
        for n in (4, 8)
    ]
    for last in rows[1::2]:
        last |= {"accuracy": {"fp8 kernel": (0.05, 0.1)}, "configs_n": 8, "configs": {"128×64 w4 s3": 321.0}}
    lines = bench.table(rows).splitlines()
    assert sum(line.startswith("| 128 | yes | 8 | 600 | 400 | 500 | 1.50 | 1.20 |") for line in lines) == 1
    assert sum(line.startswith("| 64 |") for line in lines) == 4 + 2 + 2  # speeds, errors, configs
    assert "| 64 | no | 5.0e-02 / 1.0e-01 |" in lines and "| 128 | yes | 321 |" in lines
