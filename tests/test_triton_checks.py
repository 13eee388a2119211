"""Launch counting and forbidden torch ops: the guards that tell a Triton kernel from a PyTorch fallback."""

import types

import pytest
import torch
import triton  # noqa: I001  (after utils: it chooses the interpreter first)
import triton.language as tl

import utils
from utils.checks.launches import count_launches, forbid_torch_ops, require_launches, triton_kernels


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst_ptr + offsets, tl.load(src_ptr + offsets, mask=offsets < n), mask=offsets < n)


def _module():
    return types.SimpleNamespace(copy_kernel=_copy_kernel, helper=len, BLOCK=16)


def test_count_launches_counts_each_launch_and_restores_the_kernel():
    module = _module()
    src = torch.randn(40, device=utils.device())
    dst = torch.empty_like(src)
    assert list(triton_kernels(module)) == ["copy_kernel"]
    with count_launches(module) as launches:
        for _ in range(3):
            _copy_kernel[(3,)](src, dst, 40, BLOCK=16)
    assert launches == {"copy_kernel": 3}
    assert torch.equal(src, dst)
    assert "run" not in vars(_copy_kernel)  # the wrapper is gone again


def test_require_launches_fails_without_a_launch():
    with count_launches(_module()) as launches:
        pass
    with pytest.raises(AssertionError, match="launched none of your Triton kernels"):
        require_launches(launches, "forward")


def test_forbid_torch_ops_blocks_listed_ops_only():
    a = torch.randn(4, 4)
    with forbid_torch_ops(("mm", "exp"), "forward"):
        a + a  # allowed
        with pytest.raises(AssertionError, match="torch.mm"):
            a @ a
        with pytest.raises(AssertionError, match="torch.exp"):
            torch.exp(a)
    a @ a  # nothing forbidden any more
