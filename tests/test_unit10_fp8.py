"""Unit 10's FP8 forward (`course/reference/hopper_fp8.py`): quantising keeps every value within e4m3's rounding,
and the kernel's O and L stay within FP8's error of float64 on odd shapes, causal and not, Nq ≠ Nk, d = 64 and
128 (the CPU interpreter's e4m3 rounding is worse, see the module: looser bounds there)."""

import pytest
import torch

import utils
from course.reference import hopper_fp8
from utils import grading

# Bounds on ‖O − O₆₄‖ / ‖O₆₄‖ per row (median, max) and on |L − L₆₄|: e4m3 has 3 mantissa bits, so a row is
# typically off by a few per cent (`benchmarks/results/h100/hopper/fp8/`); a wrong scale, mask or transpose is
# off by tens of per cent in most rows.
BOUNDS = {"gpu": (0.06, 0.25, 0.05), "cpu": (0.09, 0.4, 0.12)}

CASES = [  # B·H, Nq, Nk, d, dtype, causal
    (2, 37, 51, 64, torch.float32, True),
    (2, 70, 45, 64, torch.float16, False),
    (1, 65, 100, 128, torch.bfloat16, True),
    (3, 33, 33, 128, torch.float32, False),
]


def assert_within_fp8_error(q, k, v, is_causal, bounds):
    out, lse = hopper_fp8.fp8_forward(q, k, v, is_causal)
    exact, exact_lse = grading.reference_attention(q, k, v, is_causal=is_causal)
    assert out.dtype == q.dtype and out.shape == q.shape and lse.shape == q.shape[:-1]
    errors = (out.double() - exact).norm(dim=-1) / exact.norm(dim=-1)
    median_bound, max_bound, lse_bound = bounds
    assert errors.median() < median_bound and errors.max() < max_bound, (errors.median(), errors.max())
    assert (lse.double() - exact_lse).abs().max() < lse_bound


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
    assert_within_fp8_error(q, k, v, is_causal, BOUNDS["gpu" if utils.mode().is_gpu else "cpu"])


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("is_causal", [False, True])
def test_gpu_fp8_forward_large_and_odd(dtype, d, is_causal):
    q, k, v = grading.random_qkv(3, 1031, 2053, d, dtype=dtype, device="cuda", requires_grad=False)
    assert_within_fp8_error(q, k, v, is_causal, BOUNDS["gpu"])
