"""Unit 10's one-pass backward (`course/reference/hopper_backward.py`): dQ, dK and dV against float64 on odd
shapes, causal and not, Nq ≠ Nk, every dtype and head dim; a forced config; on a GPU both ways of adding dQ
(TMA reduce-add and element-wise atomics) at large odd sizes; and the benchmark's table from its committed results."""

import json

import pytest
import torch
from notebook_run import ROOT

import utils
from benchmarks import hopper_backward as bench
from course.reference import hopper_backward
from utils import grading

RESULTS = ROOT / "benchmarks" / "results" / "h100" / "hopper" / "backward" / "backward.json"
TOL = {torch.float32: 1e-4, torch.float16: 1e-2, torch.bfloat16: 2e-2}  # bfloat16 runs as float32 on the CPU

CASES = [  # B·H, Nq, Nk, d, dtype, causal
    (2, 37, 51, 64, torch.float32, True),
    (2, 51, 37, 64, torch.float32, False),
    (3, 70, 33, 64, torch.float16, True),
    (1, 65, 100, 128, torch.bfloat16, False),
    (2, 50, 50, 128, torch.float16, True),
    (
        1,
        100,
        65,
        128,
        torch.float32,
        True,
    ),  # causal with keys beyond the last query: their gradients are zero
]


def gradients(q, k, v, grad_out, is_causal, config=None, dq_by_tma=None):
    """The one-pass gradients given float64-exact O and L (the forward's float32 runs in TF32 on a GPU)."""
    o, lse = grading.reference_attention(q, k, v, is_causal=is_causal)
    o, lse = o.to(q.dtype), lse.float()
    grads, _ = hopper_backward.hopper_backward(
        q, k, v, o, lse, grad_out, is_causal, q.shape[-1] ** -0.5, config, dq_by_tma
    )
    return grads


def assert_matches_float64(grads, q, k, v, grad_out, is_causal):
    expected = grading.reference_gradients(q, k, v, grad_out, is_causal)
    for name, grad, ref in zip(("dQ", "dK", "dV"), grads, expected, strict=True):
        assert grad.dtype == q.dtype and grad.shape == ref.shape, name
        tol = TOL[q.dtype]
        grading.assert_close(grad, ref, name, atol=tol, rtol=tol)


@pytest.mark.parametrize("case", CASES)
def test_the_one_pass_backward_matches_float64(case):
    b, n_q, n_k, d, dtype, is_causal = case
    q, k, v = grading.random_qkv(b, n_q, n_k, d, dtype=dtype, device=utils.device(), requires_grad=False)
    grad_out = torch.randn_like(q)
    assert_matches_float64(gradients(q, k, v, grad_out, is_causal), q, k, v, grad_out, is_causal)


def test_keys_no_query_sees_get_zero_gradients():
    q, k, v = grading.random_qkv(1, 40, 90, 64, device=utils.device(), requires_grad=False)
    _, dk, dv = gradients(q, k, v, torch.randn_like(q), is_causal=True)
    assert dk[:, 40:].abs().max() == 0 and dv[:, 40:].abs().max() == 0
    assert dk[:, :40].abs().max() > 0


def test_a_forced_config_matches_float64():
    config = (
        hopper_backward.INTERPRETER_CONFIGS[0] if utils.interpreter() else hopper_backward.GPU_CONFIGS[-1]
    )
    q, k, v = grading.random_qkv(
        2, 83, 47, 64, dtype=torch.float16, device=utils.device(), requires_grad=False
    )
    grad_out = torch.randn_like(q)
    assert_matches_float64(gradients(q, k, v, grad_out, True, config), q, k, v, grad_out, True)


def test_the_benchmark_table_shows_every_variant_of_the_committed_results():
    rows = json.loads(RESULTS.read_text(encoding="utf-8"))["rows"]
    text = bench.table(rows)
    assert text.count("\n") == len(rows) + 2
    assert all(row["variant"] in text for row in rows)
    assert all(row.get("correct", True) for row in rows), "a committed variant was wrong against float64"
    assert {(r["d"], r["causal"]) for r in rows} == {(64, False), (64, True), (128, False), (128, True)}


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("dq_by_tma", [True, False])
def test_gpu_one_pass_backward_large_and_odd(dtype, d, is_causal, dq_by_tma):
    q, k, v = grading.random_qkv(3, 1031, 2053, d, dtype=dtype, device="cuda", requires_grad=False)
    grad_out = torch.randn_like(q)
    grads = gradients(q, k, v, grad_out, is_causal, dq_by_tma=dq_by_tma)
    assert_matches_float64(grads, q, k, v, grad_out, is_causal)
