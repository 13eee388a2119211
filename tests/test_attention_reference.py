"""FlashAttentionPyTorch and FlashAttentionTriton (interpreter on CPU) against the float64 reference."""

import pytest
import torch
from attention_checks import LSE_TOLERANCE, Tolerance, assert_matches, check_forward_backward
from hypothesis import given, settings
from hypothesis import strategies as st

import utils
from course.reference import FlashAttentionPyTorch, FlashAttentionTriton, flash_attention
from course.reference.flash_pytorch import tiled_backward, tiled_forward
from utils.grading import check_saved_contract, random_qkv, reference_attention, reference_gradients

IMPLEMENTATIONS = {"pytorch": FlashAttentionPyTorch.apply, "triton": FlashAttentionTriton.apply}

# O and gradients computed in float32 and rounded once to the input dtype (the CPU paths keep P in
# float32; bfloat16 runs in float32 in the interpreter), so the bound is the dtype's rounding.
TOLERANCES = {
    torch.float32: Tolerance(2e-5, 1e-4),
    torch.float16: Tolerance(3e-3, 1e-2),
    torch.bfloat16: Tolerance(2e-2, 4e-2),
}

SHAPES = [  # (leading dims, Nq, Nk, d, causal)
    ((2,), 1, 1, 16, False),
    ((2,), 1, 1, 16, True),
    ((2, 3), 17, 100, 32, True),  # Nq < Nk, 4-D input
    ((2,), 100, 17, 64, True),  # Nq > Nk: the last queries see every key
    ((1,), 65, 65, 128, False),
    ((3,), 33, 48, 16, False),
    ((2,), 64, 64, 32, True),  # exact multiples of every tile
]


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize("dtype", TOLERANCES, ids=str)
@pytest.mark.parametrize(("lead", "n_q", "n_k", "d", "causal"), SHAPES)
def test_forward_and_gradients_match_float64(impl, dtype, lead, n_q, n_k, d, causal):
    q, k, v = random_qkv(lead, n_q, n_k, d, dtype=dtype, device=utils.device())
    check_forward_backward(IMPLEMENTATIONS[impl], q, k, v, causal, TOLERANCES[dtype])


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize("causal", [False, True])
def test_custom_scale(impl, causal):
    q, k, v = random_qkv(2, 40, 23, 32, device=utils.device())
    check_forward_backward(IMPLEMENTATIONS[impl], q, k, v, causal, TOLERANCES[torch.float32], scale=0.37)


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
def test_non_contiguous_inputs_and_gradient(impl):
    """(B, N, H, d) tensors viewed as (B, H, N, d): strided, not mergeable without a copy."""

    def heads_view(n):
        return torch.randn(2, n, 3, 16, device=utils.device()).transpose(1, 2).requires_grad_()

    q, k, v = heads_view(37), heads_view(29), heads_view(29)
    assert not q.is_contiguous()
    check_forward_backward(IMPLEMENTATIONS[impl], q, k, v, True, TOLERANCES[torch.float32])
    # an expanded (stride-0) upstream gradient, as `.sum().backward()` produces
    q.grad = k.grad = v.grad = None
    IMPLEMENTATIONS[impl](q, k, v, False, None).sum().backward()
    assert torch.isfinite(q.grad).all() and q.grad.abs().sum() > 0


@pytest.mark.parametrize("impl", IMPLEMENTATIONS)
@pytest.mark.parametrize("lead", [(3,), (2, 2)])
def test_saves_exactly_q_k_v_o_and_float32_lse(impl, lead):
    q, k, v = random_qkv(lead, 19, 41, 16, dtype=torch.float16, device=utils.device())
    o = IMPLEMENTATIONS[impl](q, k, v, True)
    check_saved_contract(o, q, k, v)
    saved = o.grad_fn.saved_tensors
    assert saved[4].dtype == torch.float32 and saved[4].shape == q.shape[:-1]


@pytest.mark.parametrize("backend", ["pytorch", "triton", "naive"])
@pytest.mark.parametrize("causal", [False, True])
def test_flash_attention_entry_point(backend, causal):
    q, k, v = random_qkv((2, 2), 21, 30, 16, device=utils.device())
    apply = lambda q, k, v, c, s: flash_attention(q, k, v, is_causal=c, scale=s, backend=backend)  # noqa: E731
    if backend == "naive":  # saves no L: compare O and gradients only
        o = apply(q, k, v, causal, 0.5)
        assert_matches(o, reference_attention(q, k, v, causal, 0.5)[0], "O", TOLERANCES[torch.float32])
    else:
        check_forward_backward(apply, q, k, v, causal, TOLERANCES[torch.float32], scale=0.5)


@settings(max_examples=6, deadline=None)
@given(
    batch=st.integers(1, 3),
    n_q=st.integers(1, 80),
    n_k=st.integers(1, 80),
    d=st.sampled_from([16, 32, 64]),
    causal=st.booleans(),
    dtype=st.sampled_from([torch.float32, torch.float16]),
)
def test_property_triton_matches_reference_on_any_shape(batch, n_q, n_k, d, causal, dtype):
    q, k, v = random_qkv(batch, n_q, n_k, d, dtype=dtype, device=utils.device())
    check_forward_backward(IMPLEMENTATIONS["triton"], q, k, v, causal, TOLERANCES[dtype])


@settings(max_examples=25, deadline=None)
@given(
    lead=st.lists(st.integers(1, 3), min_size=1, max_size=2),
    n_q=st.integers(1, 150),
    n_k=st.integers(1, 150),
    d=st.sampled_from([8, 16, 24, 64]),
    causal=st.booleans(),
)
def test_property_pytorch_matches_reference_on_any_shape(lead, n_q, n_k, d, causal):
    q, k, v = random_qkv(tuple(lead), n_q, n_k, d, device=utils.device())
    check_forward_backward(IMPLEMENTATIONS["pytorch"], q, k, v, causal, TOLERANCES[torch.float32])


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize(("block_q", "block_k"), [(16, 24), (24, 16), (7, 7)])
def test_pytorch_tiles_of_any_size(causal, block_q, block_k):
    """The tiled loops do not rely on equal or power-of-two tile sizes (the Function uses 64×64)."""
    q, k, v = random_qkv(2, 50, 61, 16, device=utils.device(), requires_grad=False)
    o, lse = tiled_forward(q, k, v, causal, 0.25, block_q, block_k)
    ref_o, ref_lse = reference_attention(q, k, v, causal, 0.25)
    assert_matches(o, ref_o, "O", TOLERANCES[torch.float32])
    assert_matches(lse, ref_lse, "L", LSE_TOLERANCE)
    grad_out = torch.randn_like(o)
    grads = tiled_backward(q, k, v, o, lse, grad_out, causal, 0.25, block_q, block_k)
    refs = reference_gradients(q, k, v, grad_out, causal, 0.25)
    for name, grad, ref in zip(("dQ", "dK", "dV"), grads, refs, strict=True):
        assert_matches(grad, ref, name, TOLERANCES[torch.float32])
