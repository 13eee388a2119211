"""The grading helpers catch what they claim to catch, and pass what is right."""

import pytest
import torch

import utils
from utils import grading
from utils.attention.naive import naive_attention
from utils.checks.guarded import GuardedAllocations


class SavesScores(torch.autograd.Function):
    """Correct output, but saves the N×N probabilities (breaks the FlashAttention contract)."""

    @staticmethod
    def forward(ctx, q, k, v):
        o, _, p = naive_attention(q, k, v, return_scores=True)
        ctx.save_for_backward(q, k, v, o, p)
        return o

    @staticmethod
    def backward(ctx, grad):
        return None, None, None


class SavesContract(torch.autograd.Function):
    """Saves exactly Q, K, V, O, L (float32)."""

    @staticmethod
    def forward(ctx, q, k, v):
        o, lse = grading.reference_attention(q, k, v)
        o = o.to(q.dtype)
        ctx.save_for_backward(q, k, v, o, lse.float())
        return o

    @staticmethod
    def backward(ctx, grad):
        return None, None, None


@pytest.fixture(params=[1024, 5], ids=["one block", "blocks of 5 rows"])
def reference_rows(request, monkeypatch):
    """The float64 references computed in one block of query rows, and in many (the last one short)."""
    monkeypatch.setattr(grading, "REFERENCE_ROWS", request.param)


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("n_q, n_k", [(19, 23), (23, 19)])
def test_reference_matches_naive_and_logsumexp(is_causal, n_q, n_k, reference_rows):
    q, k, v = grading.random_qkv((2, 3), n_q, n_k, 16, requires_grad=False)
    out, lse = grading.reference_attention(q, k, v, is_causal)
    assert out.dtype == lse.dtype == torch.float64 and out.device == q.device
    grading.assert_close(naive_attention(q, k, v, is_causal), out, "O", atol=1e-5, rtol=1e-5)
    scores = (q.double() @ k.double().transpose(-2, -1)) / 4.0
    if is_causal:
        scores = scores.masked_fill(torch.ones(n_q, n_k).triu(1).bool(), float("-inf"))
    torch.testing.assert_close(lse, torch.logsumexp(scores, -1))


@pytest.mark.parametrize("is_causal", [False, True])
@pytest.mark.parametrize("n_q, n_k", [(9, 14), (14, 9)])
def test_reference_gradients_match_autograd_on_naive(is_causal, n_q, n_k, reference_rows):
    q, k, v = grading.random_qkv(2, n_q, n_k, 16, dtype=torch.float64)
    grad = torch.randn(2, n_q, 16, dtype=torch.float64)
    naive_attention(q, k, v, is_causal=is_causal).backward(grad)
    for mine, theirs in zip(
        grading.reference_gradients(q, k, v, grad, is_causal=is_causal), (q.grad, k.grad, v.grad), strict=True
    ):
        torch.testing.assert_close(mine, theirs)


def test_reference_gradients_take_a_broadcast_upstream_gradient():
    q, k, v = grading.random_qkv(1, 6, 7, 16, dtype=torch.float64)
    grad = torch.randn(1, 6, 1, dtype=torch.float64)
    naive_attention(q, k, v).backward(grad.expand(1, 6, 16))
    for mine, theirs in zip(
        grading.reference_gradients(q, k, v, grad.expand(1, 6, 16)), (q.grad, k.grad, v.grad), strict=True
    ):
        torch.testing.assert_close(mine, theirs)


@pytest.mark.gpu
def test_references_of_cpu_inputs_run_on_the_gpu_and_come_back():
    """The judge's inputs live on the CPU; on a GPU host its float64 references run on the GPU."""
    q, k, v = grading.random_qkv(1, 300, 257, 64, dtype=torch.float64, device="cpu")
    torch.cuda.reset_peak_memory_stats()
    out, _ = grading.reference_attention(q, k, v, is_causal=True)
    assert out.device.type == "cpu" and torch.cuda.max_memory_allocated() > 300 * 257 * 8
    torch.testing.assert_close(out, naive_attention(q, k, v, is_causal=True))


def test_assert_close_reports_shape_nan_and_value_errors():
    expected = torch.zeros(3, 4, dtype=torch.float64)
    grading.assert_close(torch.full((3, 4), 1e-4), expected, "O", atol=1e-3, rtol=0)
    with pytest.raises(AssertionError, match="shape"):
        grading.assert_close(torch.zeros(4, 3), expected, "O", atol=1, rtol=0)
    with pytest.raises(AssertionError, match="NaN"):
        grading.assert_close(torch.full((3, 4), float("nan")), expected, "O", atol=1, rtol=0)
    bad = torch.zeros(3, 4)
    bad[2, 1] = 0.5
    with pytest.raises(AssertionError, match=r"index \(2, 1\)"):
        grading.assert_close(bad, expected, "dQ", atol=1e-3, rtol=0)
    nan = torch.zeros(3, 4)
    nan[1, 2:] = float("inf")
    with pytest.raises(AssertionError, match=r"2 NaN or Inf element\(s\), the first at index \(1, 2\)"):
        grading.assert_close(nan, expected, "O", atol=1, rtol=0)


def test_assert_close_rounds_tolerances_to_two_significant_digits():
    with pytest.raises(AssertionError) as failure:
        grading.assert_close(
            torch.ones(2), torch.zeros(2, dtype=torch.float64), "y", atol=2**-0.5 * 8e-4, rtol=1e-5
        )
    assert "atol=0.00057, rtol=1e-05" in str(failure.value) and "0.000565" not in str(failure.value)


def test_assert_close_names_the_elements_never_written():
    with GuardedAllocations():
        out = torch.empty(3, 5)
    out[:2] = 0.0  # a kernel that forgot the last row
    with pytest.raises(AssertionError) as failure:
        grading.assert_close(out, torch.zeros(3, 5, dtype=torch.float64), "y", atol=1e-3, rtol=0)
    message = str(failure.value)
    assert "5 of 15 elements were never written" in message and "index (2, 0)" in message
    assert "NaN" not in message


def test_saved_contract_accepts_flash_style_and_rejects_n_by_n():
    q, k, v = grading.random_qkv(2, 20, 20, 16)
    grading.check_saved_contract(SavesContract.apply(q, k, v), q, k, v)
    with pytest.raises(AssertionError, match="N×N"):
        grading.check_saved_contract(SavesScores.apply(q, k, v), q, k, v)
    with pytest.raises(AssertionError, match="grad_fn"):
        grading.check_saved_contract(naive_attention(q.detach(), k.detach(), v.detach()), q, k, v)


def test_saved_contract_with_single_token_does_not_mistake_l_for_scores():
    q, k, v = grading.random_qkv(1, 1, 1, 16)
    grading.check_saved_contract(SavesContract.apply(q, k, v), q, k, v)


def test_quadratic_tensor_detector():
    q, k, v = grading.random_qkv(1, 128, 96, 16, requires_grad=False)
    with pytest.raises(AssertionError, match="N×N"):
        grading.assert_no_quadratic_tensor(lambda: naive_attention(q, k, v), q, k, "naive")
    numel, shape = grading.largest_intermediate(lambda: q @ k[:, :16].transpose(-2, -1))
    assert (numel, shape) == (128 * 16, (1, 128, 16))
    grading.assert_no_quadratic_tensor(lambda: q @ k[:, :16].transpose(-2, -1), q, k, "one tile")


def test_forbid_shortcuts_blocks_and_restores():
    q, k, v = grading.random_qkv(1, 8, 8, 16, requires_grad=False)
    original = torch.nn.functional.scaled_dot_product_attention
    with grading.forbid_shortcuts((utils, "bilingual")):
        with pytest.raises(AssertionError, match="not allowed"):
            torch.nn.functional.scaled_dot_product_attention(q, k, v)
        with pytest.raises(AssertionError, match="bilingual"):
            utils.bilingual("a", "b")
    assert torch.nn.functional.scaled_dot_product_attention is original
    assert utils.bilingual("甲", "a") == "甲 / a"


def test_random_qkv_shapes_and_freshness():
    q, k, v = grading.random_qkv((2, 3), 5, 7, 32, dtype=torch.float16)
    assert q.shape == (2, 3, 5, 32) and k.shape == v.shape == (2, 3, 7, 32)
    assert q.dtype == torch.float16 and q.requires_grad
    again, _, _ = grading.random_qkv((2, 3), 5, 7, 32, dtype=torch.float16)
    assert not torch.equal(q, again)
    seeded = [grading.random_qkv(1, 4, 4, 16, seed=3)[0] for _ in range(2)]
    assert torch.equal(*seeded)


def test_row_errors_are_relative_per_row_in_float64():
    exact = torch.tensor([[3.0, 4.0], [0.0, 2.0]], dtype=torch.float16)
    out = torch.tensor([[3.0, 4.5], [0.0, 1.0]], dtype=torch.float32)
    errors = grading.row_errors(out, exact)
    assert errors.dtype == torch.float64
    assert torch.allclose(errors, torch.tensor([0.5 / 5.0, 1.0 / 2.0], dtype=torch.float64))
