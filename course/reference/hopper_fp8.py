"""Unit 10's optional FP8 forward (exercise 4's reference): both matrix products on e4m3 tensor cores.

Scaling, chosen so every scale folds into work the kernel does anyway:
- Q and K per row (token): q8[i] = q[i] / sq[i], k8[j] = k[j] / sk[j], with s = amax(row) / 448. The score tile
  is S = (Q8 K8ᵀ) ∘ (sq skᵀ): one multiply per score beside the softmax scale.
- V per channel (column c of each head): v8[:, c] = v[:, c] / sv[c]. O's column c is multiplied by sv[c] once at
  the end, with the row normaliser.
- P in [0, 1] is multiplied by `P_SCALE` = 256 before it is rounded to e4m3 (so its values use e4m3's normal range,
  3 mantissa bits, not the subnormals below 2⁻⁶), and divided out at the end.
The row sum ℓ is accumulated from the unrounded P in float32.

V is stored transposed, (BH, d, N), so that both products read their second operand with the contraction
dimension contiguous, as FP8 `wgmma` requires (Triton's fused-attention tutorial does the same); its rows are
padded to a multiple of 16 elements, since TMA needs 16-byte row strides. Quantising is done by torch operations before
the kernel (`prepare`); the benchmark times the kernel alone (`fp8_attention`) and with the quantising. The CPU interpreter
(Triton 3.9) rounds float32 to e4m3 without carrying into the exponent (124.2 → 64, not 128), so P is rounded worse
there than on a GPU: the CPU tests have a looser tolerance. Accuracy against float64 and speed against the 16-bit
Hopper forward: `benchmarks/hopper_fp8.py`, results in `benchmarks/results/h100/hopper/fp8/`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import triton
import triton.language as tl

from course.reference import flash_triton
from course.reference.descriptors import descriptor, launch
from course.reference.hopper import check_inputs, hide_invisible, key_bounds
from course.reference.triton_configs import n_bucket
from utils import hopper, runtime
from utils.attention.validate import default_scale

FP8 = torch.float8_e4m3fn
FP8_MAX = 448.0
P_SCALE = tl.constexpr(256.0)  # a global a kernel reads must be a constexpr
TMA_ALIGN = 16  # elements of one byte: a TMA row stride must be a multiple of 16 bytes


def set_block_shapes(nargs) -> None:
    """Autotuning pre-hook: Q and O blocks [1, BLOCK_Q, d], K [1, BLOCK_K, d], Vᵀ [1, d, BLOCK_K]."""
    block_q, block_k, head_dim = nargs["BLOCK_Q"], nargs["BLOCK_K"], nargs["HEAD_DIM"]
    nargs["q_desc"].block_shape = nargs["o_desc"].block_shape = [1, block_q, head_dim]
    nargs["k_desc"].block_shape = [1, block_k, head_dim]
    nargs["vt_desc"].block_shape = [1, head_dim, block_k]


def kernel_config(block_q: int, block_k: int, warps: int, stages: int) -> triton.Config:
    """One config of `fp8_forward_kernel` (its pre-hook sets the descriptors' block shapes)."""
    return triton.Config(
        {"BLOCK_Q": block_q, "BLOCK_K": block_k},
        num_warps=warps,
        num_stages=stages,
        pre_hook=set_block_shapes,
    )


# The GPU's search space (the benchmark times each of them, `benchmarks/results/h100/hopper/fp8/`); the interpreter
# gets one small config with different Q and K tiles, so the diagonal and tail cases are exercised.
GPU_CONFIGS = [
    kernel_config(128, 128, 8, 3),
    kernel_config(128, 128, 8, 4),
    kernel_config(128, 64, 4, 3),
    kernel_config(128, 64, 8, 3),
    kernel_config(64, 128, 4, 3),
]
INTERPRETER_CONFIGS = [kernel_config(32, 16, 1, 1)]


def quantize(x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(x8 in e4m3, float32 scales) with one scale per slice along `dim` reduced: dim=-1 scales rows (tokens),
    dim=-2 scales columns (channels). x = x8 · scales, up to e4m3 rounding; all-zero slices get scale 1."""
    amax = x.abs().amax(dim=dim, keepdim=True).float()
    scales = torch.where(amax > 0, amax / FP8_MAX, torch.ones_like(amax))
    return (x.float() / scales).to(FP8), scales.squeeze(dim)


@triton.jit
def _fp8_tile(
    acc, row_max, row_sum, q, row_scale, k_desc, vt_desc, K_SCALES, bh, k_start, n_k, offs_q,
    BLOCK_K: tl.constexpr, HEAD_DIM: tl.constexpr, MASKED: tl.constexpr, IS_CAUSAL: tl.constexpr,
):  # fmt: skip
    """Fold keys [k_start, k_start + BLOCK_K) into (acc, row_max, row_sum); `row_scale` = sq · σ · log2 e."""
    offs_k = k_start + tl.arange(0, BLOCK_K)
    k = k_desc.load([bh, k_start, 0]).reshape([BLOCK_K, HEAD_DIM])
    vt = vt_desc.load([bh, 0, k_start]).reshape([HEAD_DIM, BLOCK_K])
    key_scale = tl.load(K_SCALES + bh * n_k + offs_k, mask=offs_k < n_k, other=0.0)
    s = tl.dot(q, tl.trans(k)) * row_scale[:, None] * key_scale[None, :]
    if MASKED:
        s = hide_invisible(s, offs_q, offs_k, n_k, IS_CAUSAL)
    new_max = tl.maximum(row_max, tl.max(s, 1))  # key 0 is in the first tile visited: finite
    p = tl.exp2(s - new_max[:, None])
    correction = tl.exp2(row_max - new_max)
    row_sum = row_sum * correction + tl.sum(p, 1)
    acc = tl.dot((p * P_SCALE).to(q.dtype), tl.trans(vt), acc * correction[:, None])
    return acc, new_max, row_sum


@triton.autotune(
    configs=INTERPRETER_CONFIGS if runtime.interpreter() else GPU_CONFIGS,
    key=["HEAD_DIM", "IS_CAUSAL", "N_BUCKET"],
)
@triton.jit
def fp8_forward_kernel(
    q_desc, k_desc, vt_desc, o_desc, L, Q_SCALES, K_SCALES, V_SCALES, n_q, n_k, qk_scale,
    HEAD_DIM: tl.constexpr, IS_CAUSAL: tl.constexpr, N_BUCKET: tl.constexpr,
    BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """Grid (cdiv(Nq, BLOCK_Q), BH): O and L of one query tile; scores in base 2 (`qk_scale` = σ · log2 e)."""
    q_start = tl.program_id(0) * BLOCK_Q
    bh = tl.program_id(1)
    offs_q = q_start + tl.arange(0, BLOCK_Q)
    q = q_desc.load([bh, q_start, 0]).reshape([BLOCK_Q, HEAD_DIM])
    row_scale = tl.load(Q_SCALES + bh * n_q + offs_q, mask=offs_q < n_q, other=0.0) * qk_scale
    row_max = tl.full([BLOCK_Q], float("-inf"), dtype=tl.float32)
    row_sum = tl.zeros([BLOCK_Q], dtype=tl.float32)
    acc = tl.zeros([BLOCK_Q, HEAD_DIM], dtype=tl.float32)
    full_end, keys_end = key_bounds(q_start, n_k, BLOCK_Q, BLOCK_K, IS_CAUSAL)
    for k_start in tl.range(0, full_end, BLOCK_K):
        acc, row_max, row_sum = _fp8_tile(
            acc, row_max, row_sum, q, row_scale, k_desc, vt_desc, K_SCALES, bh, k_start, n_k, offs_q,
            BLOCK_K, HEAD_DIM, False, IS_CAUSAL,
        )  # fmt: skip
    for k_start in tl.range(full_end, keys_end, BLOCK_K):
        acc, row_max, row_sum = _fp8_tile(
            acc, row_max, row_sum, q, row_scale, k_desc, vt_desc, K_SCALES, bh, k_start, n_k, offs_q,
            BLOCK_K, HEAD_DIM, True, IS_CAUSAL,
        )  # fmt: skip
    channel_scale = tl.load(V_SCALES + bh * HEAD_DIM + tl.arange(0, HEAD_DIM))
    o = acc * channel_scale[None, :] / (row_sum[:, None] * P_SCALE)
    o_desc.store([bh, q_start, 0], o.to(o_desc.dtype).reshape([1, BLOCK_Q, HEAD_DIM]))
    lse = (row_max + tl.log2(row_sum)) * 0.6931471805599453
    tl.store(L + bh * n_q + offs_q, lse, mask=offs_q < n_q)


@dataclass(frozen=True)
class Fp8Inputs:
    """Q, K (BH, N, d) and Vᵀ (BH, d, N padded) in e4m3 with their float32 scales; `shape`, `dtype`: Q's."""

    q8: torch.Tensor
    k8: torch.Tensor
    vt8: torch.Tensor
    q_scales: torch.Tensor  # (BH, Nq), one per query row
    k_scales: torch.Tensor  # (BH, Nk), one per key row
    v_scales: torch.Tensor  # (BH, d), one per channel of V
    shape: torch.Size
    dtype: torch.dtype


def prepare(q, k, v) -> Fp8Inputs:
    """Quantise (..., N, d) inputs for `fp8_attention` (torch, on the inputs' device)."""
    q3, k3, v3 = (t.reshape(-1, *t.shape[-2:]) for t in (q, k, v))
    batch_heads, n_k, head_dim = k3.shape
    q8, q_scales = quantize(q3, -1)
    k8, k_scales = quantize(k3, -1)
    v8, v_scales = quantize(v3, -2)
    vt8 = torch.zeros(
        (batch_heads, head_dim, triton.cdiv(n_k, TMA_ALIGN) * TMA_ALIGN), dtype=FP8, device=q.device
    )
    vt8[..., :n_k] = v8.transpose(1, 2)
    return Fp8Inputs(q8, k8, vt8, q_scales, k_scales, v_scales, q.shape, q.dtype)


def dequantize(x: Fp8Inputs) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Q, K, V (BH, N, d) in float64 as the kernel sees them: the e4m3 values times their scales."""
    n_k = x.k8.shape[1]
    return (
        x.q8.double() * x.q_scales[..., None],
        x.k8.double() * x.k_scales[..., None],
        x.vt8[..., :n_k].transpose(1, 2).double() * x.v_scales[:, None, :],
    )


def fp8_attention(x: Fp8Inputs, is_causal: bool, scale: float, config: triton.Config | None = None):
    """O (Q's dtype and shape) and L (float32, (..., Nq)) from the FP8 kernel on prepared inputs; `config` (see
    `kernel_config`) forces one config instead of autotuning (the benchmark times each)."""
    batch_heads, n_q, head_dim = x.q8.shape
    n_k = x.k8.shape[1]
    o3 = torch.empty((batch_heads, n_q, head_dim), dtype=flash_triton._run_dtype(x.dtype), device=x.q8.device)
    lse = torch.empty((batch_heads, n_q), dtype=torch.float32, device=x.q8.device)
    descriptors = {
        "q_desc": descriptor(x.q8, 64),
        "k_desc": descriptor(x.k8, 64),
        "vt_desc": hopper.tensor_descriptor_class()(
            x.vt8, list(x.vt8.shape), list(x.vt8.stride()), [1, head_dim, 64]
        ),
        "o_desc": descriptor(o3, 64),
    }
    args = (
        *descriptors.values(),
        lse,
        x.q_scales,
        x.k_scales,
        x.v_scales,
        n_q,
        n_k,
        scale * flash_triton.LOG2E,
    )
    constexprs = {"HEAD_DIM": head_dim, "IS_CAUSAL": bool(is_causal), "N_BUCKET": n_bucket(max(n_q, n_k))}
    grid = lambda meta: (triton.cdiv(n_q, meta["BLOCK_Q"]), batch_heads)  # noqa: E731
    launch(fp8_forward_kernel, grid, args, constexprs, descriptors, config)
    return o3.to(x.dtype).reshape(x.shape), lse.reshape(x.shape[:-1])


def fp8_forward(q, k, v, is_causal: bool = False, scale: float | None = None):
    """O (q's dtype and shape) and L (float32) of attention with Q, K, V quantised to e4m3 (see the module)."""
    check_inputs(q, k, v)
    return fp8_attention(prepare(q, k, v), is_causal, default_scale(q, scale))
