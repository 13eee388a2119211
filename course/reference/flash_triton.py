"""FlashAttentionTriton: the autograd Function that launches the kernels of `triton_kernels`.

Inputs (..., N, d) are viewed as (BH, N, d) (a copy only if the leading dims cannot be merged) and the
kernels walk them through their strides. Supported: head dims 16/32/64/128; float16, bfloat16 and
float32 on a GPU. In the CPU interpreter bfloat16 is computed in float32 and rounded back, because the
interpreter's bfloat16 matrix product is wrong. float32 keeps fp32-level accuracy on a GPU (three TF32
products per product, `triton_configs.FP32_PRECISION`), not plain TF32.
"""

from __future__ import annotations

import contextlib

import torch
import triton

from course.reference import triton_configs as configs
from course.reference.triton_kernels import dkdv_kernel, dq_kernel, forward_kernel, preprocess_kernel
from utils import runtime
from utils.attention.validate import SUPPORTED_HEAD_DIMS, check_qkv, default_scale
from utils.messages import bilingual

SUPPORTED_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
LOG2E = 1.4426950408889634

_chosen_configs: dict[tuple, configs.KernelConfig] = {}
_forced_configs: dict[str, configs.KernelConfig] = {}


@contextlib.contextmanager
def forced_configs(**by_kernel: configs.KernelConfig):
    """Launch the named kernels with exactly these configs inside the block (for `course tune`)."""
    _forced_configs.update(by_kernel)
    try:
        yield
    finally:
        for name in by_kernel:
            _forced_configs.pop(name, None)


def check_triton_inputs(q, k, v) -> None:
    """`check_qkv` plus what the kernels need: a supported head dim and dtype, on the right device."""
    check_qkv(q, k, v, head_dims=SUPPORTED_HEAD_DIMS)
    if q.dtype not in SUPPORTED_DTYPES:
        raise ValueError(
            bilingual(
                f"Triton 内核不支持数据类型 {q.dtype}，支持 float16、bfloat16、float32",
                f"the Triton kernels do not support dtype {q.dtype}; use float16, bfloat16 or float32",
            )
        )
    if not runtime.interpreter() and q.device.type != "cuda":
        raise ValueError(
            bilingual(
                f"GPU 模式下张量必须在 CUDA 设备上，得到 {q.device}（用 utils.device()）",
                f"in GPU mode the tensors must be on a CUDA device, got {q.device} (use utils.device())",
            )
        )


def _run_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the kernels see: bfloat16 is upcast in the interpreter, everything else runs as is."""
    return torch.float32 if runtime.interpreter() and dtype == torch.bfloat16 else dtype


def _as_3d(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """(BH, N, d) view in `dtype`. A tensor whose rows are not contiguous (a transposed view, or the stride-0 dO
    of `o.sum().backward()`) is copied: the kernels load 16 bytes at a time only from contiguous rows (the
    leaderboard's stride-0 dO made the dK/dV kernel 0.7 ms slower than the 15 µs the copy costs)."""
    t3 = t.reshape(-1, *t.shape[-2:]).to(dtype)
    return t3 if t3.stride(-1) == 1 else t3.contiguous()


def _strides(*tensors: torch.Tensor) -> list[int]:
    return [s for t in tensors for s in t.stride()]


def _launch(name, kernel, args, rows, rows_per_program, batch_heads, dtype, device, n, **constexprs) -> None:
    """Launch `kernel` with the best config that fits this device, remembering the choice.

    The grid is (programs over `rows`, batch_heads); `rows_per_program(config)` is one program's share;
    `n` (the longer sequence) picks the tuning bucket.
    """
    head_dim, is_causal = constexprs["HEAD_DIM"], constexprs["IS_CAUSAL"]
    key = (name, head_dim, dtype, is_causal, configs.n_bucket(n), str(device))
    if name in _forced_configs:
        candidates = [_forced_configs[name]]
    elif key in _chosen_configs:
        candidates = [_chosen_configs[key]]
    else:
        candidates = configs.candidate_configs(name, head_dim, dtype, device, is_causal, n)
    for config in candidates:
        grid = (triton.cdiv(rows, rows_per_program(config)), batch_heads)
        try:
            kernel[grid](
                *args,
                BLOCK_Q=config.block_q,
                BLOCK_K=config.block_k,
                num_warps=config.num_warps,
                num_stages=config.num_stages,
                **constexprs,
            )
        except triton.runtime.errors.OutOfResources:
            continue  # the estimate was too optimistic: try the next, smaller config
        if name not in _forced_configs:
            _chosen_configs[key] = config
        return
    raise RuntimeError(
        bilingual(
            f"没有适合此 GPU 共享内存的 {name} 内核配置（d={head_dim}, {dtype}）",
            f"no {name} kernel config fits this GPU's shared memory (d={head_dim}, {dtype})",
        )
    )


def _precision(dtype: torch.dtype):
    return configs.FP32_PRECISION if dtype == torch.float32 else None


def triton_forward(q, k, v, is_causal: bool, scale: float):
    """O (dtype of q, shape of q) and L (float32, (..., Nq)) from the forward kernel."""
    dtype = _run_dtype(q.dtype)
    q3, k3, v3 = (_as_3d(t, dtype) for t in (q, k, v))
    batch_heads, n_q, head_dim = q3.shape
    o3 = torch.empty((batch_heads, n_q, head_dim), dtype=dtype, device=q.device)
    lse = torch.empty((batch_heads, n_q), dtype=torch.float32, device=q.device)
    args = (q3, k3, v3, o3, lse, *_strides(q3, k3, v3, o3), n_q, k3.shape[1], scale * LOG2E)
    _launch(
        "forward", forward_kernel, args, n_q, lambda c: c.block_q, batch_heads, dtype, q.device,
        max(n_q, k3.shape[1]), HEAD_DIM=head_dim, IS_CAUSAL=is_causal, PRECISION=_precision(dtype),
    )  # fmt: skip
    return o3.to(q.dtype).reshape(q.shape), lse.reshape(q.shape[:-1])


def row_delta(o3: torch.Tensor, do3: torch.Tensor) -> torch.Tensor:
    """Δ = rowsum(dO ∘ O), float32 (BH, N), from the preprocessing kernel."""
    batch_heads, n_q, head_dim = o3.shape
    delta = torch.empty((batch_heads, n_q), dtype=torch.float32, device=o3.device)
    grid = (triton.cdiv(n_q, configs.PREPROCESS_BLOCK), batch_heads)
    preprocess_kernel[grid](
        o3, do3, delta, *_strides(o3, do3), n_q, HEAD_DIM=head_dim, BLOCK=configs.PREPROCESS_BLOCK
    )
    return delta


def triton_backward(q, k, v, o, lse, grad_out, is_causal: bool, scale: float):
    """(dQ, dK, dV) from the Δ, dK/dV and dQ kernels; each gradient element is written by one program."""
    dtype = _run_dtype(q.dtype)
    q3, k3, v3, o3, do3 = (_as_3d(t, dtype) for t in (q, k, v, o, grad_out))
    batch_heads, n_q, head_dim = q3.shape
    n_k = k3.shape[1]
    lse3 = lse.reshape(batch_heads, n_q).contiguous()
    delta = row_delta(o3, do3)
    dq3, dk3, dv3 = (torch.empty(t.shape, dtype=dtype, device=q.device) for t in (q3, k3, v3))
    inputs = (q3, k3, v3, do3, lse3, delta)
    constexprs = dict(HEAD_DIM=head_dim, IS_CAUSAL=is_causal, PRECISION=_precision(dtype))
    _launch(
        "dkdv", dkdv_kernel,
        (*inputs, dk3, dv3, *_strides(q3, k3, v3, do3, dk3, dv3), n_q, n_k, scale, scale * LOG2E),
        n_k, lambda c: c.block_k, batch_heads, dtype, q.device, max(n_q, n_k), **constexprs,
    )  # fmt: skip
    _launch(
        "dq", dq_kernel,
        (*inputs, dq3, *_strides(q3, k3, v3, do3, dq3), n_q, n_k, scale, scale * LOG2E),
        n_q, lambda c: c.block_q, batch_heads, dtype, q.device, max(n_q, n_k), **constexprs,
    )  # fmt: skip
    return tuple(g.to(t.dtype).reshape(t.shape) for g, t in ((dq3, q), (dk3, k), (dv3, v)))


class FlashAttentionTriton(torch.autograd.Function):
    """FlashAttention-2 in Triton: `FlashAttentionTriton.apply(Q, K, V, is_causal=False, scale=None)`.

    Same contract as `FlashAttentionPyTorch`: saves exactly Q, K, V, O and L (float32, (..., Nq)).
    """

    @staticmethod
    def forward(ctx, q, k, v, is_causal=False, scale=None):
        check_triton_inputs(q, k, v)
        scale = default_scale(q, scale)
        o, lse = triton_forward(q, k, v, bool(is_causal), scale)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal, ctx.scale = bool(is_causal), scale
        return o

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, o, lse = ctx.saved_tensors
        dq, dk, dv = triton_backward(q, k, v, o, lse, grad_out, ctx.is_causal, ctx.scale)
        return dq, dk, dv, None, None
