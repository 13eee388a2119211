"""utils.checks.guarded: unwritten elements are recognisable, stray stores and reads past the end are found every run."""

import pytest
import torch
import triton  # noqa: I001  (after utils: it chooses the interpreter first)
import triton.language as tl

import utils
from utils.checks.guarded import UNWRITTEN, GuardedAllocations, padded, unwritten


@triton.jit
def _double_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr, MASKED: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if MASKED:
        tl.store(y_ptr + offsets, 2 * tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)
    else:
        tl.store(y_ptr + offsets, 2 * tl.load(x_ptr + offsets))


def _double(x, masked):
    y = torch.empty_like(x)
    _double_kernel[(1,)](x, y, x.numel(), BLOCK=16, MASKED=masked)
    return y


def test_empty_allocations_start_unwritten_with_their_shape_strides_and_dtype():
    transposed = torch.zeros(5, 7).T
    with GuardedAllocations() as guard:
        a = torch.empty(3, 4, dtype=torch.float16, device=utils.device())
        b = torch.empty_like(transposed)
        c = a.new_empty(2)
        index = torch.empty(4, dtype=torch.int64)
    assert a.dtype == torch.float16 and a.shape == (3, 4) and unwritten(a).all()
    assert b.stride() == (1, 7) and unwritten(b).all() and unwritten(c).all()
    assert len(guard.allocations) == 3 and not unwritten(index).any()  # integers are left alone
    guard.check("nothing stored")


def test_filling_factories_keep_their_values_inside_guarded_margins():
    like = torch.zeros(4)
    with GuardedAllocations() as guard:
        ones = torch.ones_like(like)
        full = torch.full((2, 3), 2.5)
    assert torch.equal(ones, torch.ones(4)) and torch.equal(full, torch.full((2, 3), 2.5))
    assert len(guard.allocations) == 2
    guard.check("nothing stored")


def test_a_store_without_mask_is_caught_and_a_masked_one_is_not():
    x = padded(torch.randn(13, device=utils.device()))
    with GuardedAllocations() as guard:
        y = _double(x, masked=True)
    guard.check("masked")
    assert torch.equal(y, 2 * x)
    with GuardedAllocations() as guard:
        _double(x, masked=False)
    with pytest.raises(AssertionError, match=r"stored 3 element\(s\) outside a tensor your code allocated"):
        guard.check("unmasked")


def test_padded_inputs_are_copies_between_nan_margins():
    t = torch.randn(3, 5, device=utils.device()).requires_grad_(True)
    copy = padded(t)
    assert torch.equal(copy, t) and copy.stride() == (5, 1) and copy.requires_grad and copy.is_leaf
    storage = torch.empty(0, dtype=t.dtype, device=t.device).set_(copy.untyped_storage())
    assert storage.isnan().sum() == storage.numel() - t.numel()
    assert torch.equal(padded(torch.arange(4)), torch.arange(4))


def test_unwritten_is_false_for_written_values():
    assert not unwritten(torch.tensor([0.0, 1.0, float("nan")])).any()
    assert unwritten(torch.tensor([UNWRITTEN], dtype=torch.bfloat16)).all()
