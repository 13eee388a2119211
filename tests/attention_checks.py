"""Shared by the attention tests: run forward + backward and compare O, L, dQ, dK, dV with float64.

Tolerances are `Tolerance(atol, rtol)` with `atol` relative to the largest |value| of the reference
tensor being checked, but at least 1: dQ and dK are exactly 0 when every query sees a single key (then
dS = dP − Δ cancels terms of size |dO|·|V| ~ 1), and that rounding noise must still pass. One table
works for outputs and gradients of any magnitude; a bug gives errors of the size of the values.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from utils.grading import assert_close, reference_attention, reference_gradients, saved_tensors


@dataclass(frozen=True)
class Tolerance:
    atol: float  # times max |reference|
    rtol: float


# L is float32 in every dtype: only accumulation error, relative to |L| ~ log(Nk) + max score.
LSE_TOLERANCE = Tolerance(2e-6, 1e-5)


def assert_matches(actual, expected, what: str, tol: Tolerance) -> None:
    magnitude = max(expected.abs().max().item(), 1.0)
    assert_close(actual, expected, what, atol=tol.atol * magnitude, rtol=tol.rtol)


def check_forward_backward(apply, q, k, v, is_causal: bool, tol: Tolerance, scale=None) -> None:
    """`apply(q, k, v, is_causal, scale)` against the float64 reference: O, saved L, dQ, dK, dV."""
    o = apply(q, k, v, is_causal, scale)
    lse = saved_tensors(o)[4]  # saved order: Q, K, V, O, L
    ref_o, ref_lse = reference_attention(q, k, v, is_causal, scale)
    assert o.dtype == q.dtype
    assert_matches(o, ref_o, "O", tol)
    assert_matches(lse, ref_lse, "L", LSE_TOLERANCE)

    grad_out = torch.randn_like(o)
    o.backward(grad_out)
    ref_grads = reference_gradients(q, k, v, grad_out, is_causal, scale)
    for name, leaf, ref in zip(("dQ", "dK", "dV"), (q, k, v), ref_grads, strict=True):
        assert leaf.grad.dtype == leaf.dtype
        assert_matches(leaf.grad, ref, name, tol)
