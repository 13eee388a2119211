"""Unit 10's one-pass backward for Hopper: dQ, dK and dV from one S and one dP per tile, five products, not seven.

Unit 08 splits the backward into a dK/dV kernel and a dQ kernel, so every tile's S and dP are computed twice
(seven matrix products per tile). Here one program owns a tile of keys, walks the query tiles that see it and
computes all three gradients from one S and one dP (five products, FlashAttention-2's and -3's count): dK and dV
stay in registers; the tile's share of dQ is added to a float32 sum in global memory, on a GPU by a TMA reduce-add
of the whole tile (`dq_desc.atomic_add`: one bulk copy that L2 adds up), else (`dq_by_tma=False`, and always in
the CPU interpreter, which has no descriptor reduce) by element-wise `tl.atomic_add`. The order of those
additions changes from run to run, so dQ is not bitwise reproducible (as in FlashAttention-2 and -3); its float32
sum is scaled and cast once at the end.

Keys are rows: Sᵀ = K Qᵀ, so dK = dSᵀ Q and dV = Pᵀ dO need no transpose and dQ = dS K takes `tl.trans(dSᵀ)`.
Q, K, V, dO, dK and dV go through [1, rows, d] descriptors as in the forward; L and Δ are per-row vectors read
with pointers. The key tail (zero rows from the descriptor) is masked in every tile of its program, since its P
multiplies zero keys but could overflow; the query tail needs no mask (zero rows of Q and dO add nothing to dK
and dV, and its dQ rows are clipped or masked).

Measured on the H100 (Triton 3.6, bf16, N = 4096, `python -m benchmarks.hopper_backward`, results in
`benchmarks/results/h100/hopper/backward/`): at equal tiles the TMA reduce-add is 3-5.6x faster than element-wise
atomics, yet the one pass only draws level with unit 08 at d = 64 (0.98-1.03x) and is slower at d = 128
(0.87-0.88x): a program holds dK and dV (2 · BLOCK_K · d float32), K, V and the dQ share at once, 64 × 64
tiles spill registers at d = 128 with 4 warps, and 8 warps halve the speed. FlashAttention-3 gives its math
warpgroups 240 registers each by taking them from its producer warp (`setmaxnreg`), which Triton 3.6 does not
expose. On the H200 (`benchmarks/results/h200/backward/`) it is the faster only for causal
attention at d = 64 from N = 4096 on, and at CS336's leaderboard call (3.46 ms against the two kernels' 3.58), so
`HopperAttention` takes it there (`hopper.uses_one_pass`) and the unit-08 backward elsewhere.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from course.reference import flash_triton
from course.reference.descriptors import block_shape_hook, descriptor, float32_pruner, launch
from course.reference.triton_configs import FP32_PRECISION, n_bucket
from utils import runtime


def kernel_config(block_q, block_k, warps, stages) -> triton.Config:
    """One config of `hopper_backward_kernel` (its pre-hook sets the descriptors' block shapes)."""
    return triton.Config(
        {"BLOCK_Q": block_q, "BLOCK_K": block_k},
        num_warps=warps,
        num_stages=stages,
        pre_hook=block_shape_hook(
            {
                "BLOCK_Q": ("q_desc", "do_desc", "dq_desc"),
                "BLOCK_K": ("k_desc", "v_desc", "dk_desc", "dv_desc"),
            }
        ),
    )


# The fastest of a sweep on the H100 (`benchmarks/hopper_backward.py`): 64 × 64 at d = 64, 32 × 64 at d = 128
# (the only tiles without spills there); float32 (tests only) and the interpreter get small tiles of their own.
GPU_CONFIGS = [kernel_config(64, 64, 4, 3), kernel_config(64, 64, 4, 4), kernel_config(32, 64, 4, 3)]
FLOAT32_CONFIGS = [kernel_config(32, 64, 4, 2), kernel_config(32, 32, 4, 1)]
INTERPRETER_CONFIGS = [kernel_config(16, 32, 1, 1)]


@triton.jit
def _backward_tile(
    dk, dv, k, v, q_desc, do_desc, dq_desc, DQ, L, Delta, bh, q_start, n_q, n_k, offs_k, qk_scale,
    BLOCK_Q: tl.constexpr, HEAD_DIM: tl.constexpr, MASKED: tl.constexpr, IS_CAUSAL: tl.constexpr,
    DQ_BY_TMA: tl.constexpr, PRECISION: tl.constexpr,
):  # fmt: skip
    """Add one query tile's share to dK and dV (returned) and to the dQ sum (in memory)."""
    q = q_desc.load([bh, q_start, 0]).reshape([BLOCK_Q, HEAD_DIM])
    do = do_desc.load([bh, q_start, 0]).reshape([BLOCK_Q, HEAD_DIM])
    offs_q = q_start + tl.arange(0, BLOCK_Q)
    rows = offs_q < n_q
    lse2 = tl.load(L + bh * n_q + offs_q, mask=rows, other=0.0) * 1.4426950408889634  # to base 2
    delta = tl.load(Delta + bh * n_q + offs_q, mask=rows, other=0.0)
    st = tl.dot(k, tl.trans(q), input_precision=PRECISION)
    dpt = tl.dot(v, tl.trans(do), input_precision=PRECISION)  # issued before exp2: runs while exp2 does
    pt = tl.exp2(st * qk_scale - lse2[None, :])
    if MASKED:
        visible = offs_k[:, None] < n_k
        if IS_CAUSAL:
            visible = visible & (offs_k[:, None] <= offs_q[None, :])
        pt = tl.where(visible, pt, 0.0)
    dv = tl.dot(pt.to(do.dtype), do, dv, input_precision=PRECISION)
    dst = (pt * (dpt - delta[None, :])).to(q.dtype)
    dk = tl.dot(dst, q, dk, input_precision=PRECISION)
    dq = tl.dot(tl.trans(dst), k, input_precision=PRECISION)
    if DQ_BY_TMA:
        dq_desc.atomic_add([bh, q_start, 0], dq.reshape([1, BLOCK_Q, HEAD_DIM]))  # rows beyond Nq are clipped
    else:
        dq_ptrs = DQ + (bh * n_q + offs_q[:, None]).to(tl.int64) * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
        tl.atomic_add(dq_ptrs, dq, mask=rows[:, None])
    return dk, dv


@triton.autotune(
    configs=INTERPRETER_CONFIGS if runtime.interpreter() else GPU_CONFIGS + FLOAT32_CONFIGS,
    key=["HEAD_DIM", "IS_CAUSAL", "N_BUCKET", "ELEMENT_BYTES", "DQ_BY_TMA"],
    prune_configs_by={"early_config_prune": float32_pruner(FLOAT32_CONFIGS)},
    reset_to_zero=["DQ"],  # every timed trial adds into the dQ sum
)
@triton.jit
def hopper_backward_kernel(
    q_desc, k_desc, v_desc, do_desc, dk_desc, dv_desc, dq_desc, DQ, L, Delta, n_q, n_k, scale, qk_scale,
    HEAD_DIM: tl.constexpr, IS_CAUSAL: tl.constexpr, N_BUCKET: tl.constexpr, ELEMENT_BYTES: tl.constexpr,
    DQ_BY_TMA: tl.constexpr, PRECISION: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr,
):  # fmt: skip
    """Grid (cdiv(Nk, BLOCK_K), BH): one program owns a tile of keys, writes its rows of dK and dV and adds its
    share of every dQ row that sees them to DQ (float32, zeroed by the caller, unscaled; `dq_desc` is over it)."""
    k_start = tl.program_id(0) * BLOCK_K
    bh = tl.program_id(1)
    offs_k = k_start + tl.arange(0, BLOCK_K)
    k = k_desc.load([bh, k_start, 0]).reshape([BLOCK_K, HEAD_DIM])
    v = v_desc.load([bh, k_start, 0]).reshape([BLOCK_K, HEAD_DIM])
    dk = tl.zeros([BLOCK_K, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_K, HEAD_DIM], dtype=tl.float32)
    first_q = 0  # causal: the query tiles before it see none of these keys
    masked_end = 0  # the query tiles in [first_q, masked_end) need the mask
    if IS_CAUSAL:
        first_q = (k_start // BLOCK_Q) * BLOCK_Q
        masked_end = tl.minimum(tl.cdiv(k_start + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q, n_q)
    if k_start + BLOCK_K > n_k:  # the key tail: every tile masks the missing keys
        masked_end = n_q
    for q_start in tl.range(first_q, masked_end, BLOCK_Q):
        dk, dv = _backward_tile(
            dk, dv, k, v, q_desc, do_desc, dq_desc, DQ, L, Delta, bh, q_start, n_q, n_k, offs_k, qk_scale,
            BLOCK_Q, HEAD_DIM, True, IS_CAUSAL, DQ_BY_TMA, PRECISION,
        )  # fmt: skip
    for q_start in tl.range(tl.maximum(first_q, masked_end), n_q, BLOCK_Q):
        dk, dv = _backward_tile(
            dk, dv, k, v, q_desc, do_desc, dq_desc, DQ, L, Delta, bh, q_start, n_q, n_k, offs_k, qk_scale,
            BLOCK_Q, HEAD_DIM, False, IS_CAUSAL, DQ_BY_TMA, PRECISION,
        )  # fmt: skip
    dk_desc.store([bh, k_start, 0], (dk * scale).to(dk_desc.dtype).reshape([1, BLOCK_K, HEAD_DIM]))
    dv_desc.store([bh, k_start, 0], dv.to(dv_desc.dtype).reshape([1, BLOCK_K, HEAD_DIM]))


def hopper_backward(
    q,
    k,
    v,
    o,
    lse,
    grad_out,
    is_causal: bool,
    scale: float,
    config: triton.Config | None = None,
    dq_by_tma=None,
):
    """((dQ, dK, dV) in the dtypes and shapes of (q, k, v), the compiled kernel or None in the interpreter).
    `config` (see `kernel_config`) forces one config; `dq_by_tma` (default: on a GPU) picks the dQ reduce-add."""
    dtype = flash_triton._run_dtype(q.dtype)
    q3, k3, v3, o3, do3 = (
        t.reshape(-1, *t.shape[-2:]).to(dtype).contiguous() for t in (q, k, v, o, grad_out)
    )
    batch_heads, n_q, head_dim = q3.shape
    n_k = k3.shape[1]
    dk3, dv3 = torch.empty_like(k3), torch.empty_like(v3)
    dq_sum = torch.zeros(q3.shape, dtype=torch.float32, device=q.device)
    tensors = {"q_desc": q3, "k_desc": k3, "v_desc": v3, "do_desc": do3, "dk_desc": dk3, "dv_desc": dv3}
    descriptors = {name: descriptor(t, 64) for name, t in {**tensors, "dq_desc": dq_sum}.items()}
    delta = flash_triton.row_delta(o3, do3)
    args = (*descriptors.values(), dq_sum, lse.reshape(batch_heads, n_q).contiguous(), delta, n_q, n_k, scale,
            scale * flash_triton.LOG2E)  # fmt: skip
    use_tma = not runtime.interpreter() if dq_by_tma is None else dq_by_tma
    constexprs = {
        "HEAD_DIM": head_dim, "IS_CAUSAL": is_causal, "N_BUCKET": n_bucket(max(n_q, n_k)),
        "ELEMENT_BYTES": q3.element_size(), "DQ_BY_TMA": use_tma,
        "PRECISION": FP32_PRECISION if dtype == torch.float32 else None,
    }  # fmt: skip
    grid = lambda meta: (triton.cdiv(n_k, meta["BLOCK_K"]), batch_heads)  # noqa: E731
    kernel = launch(hopper_backward_kernel, grid, args, constexprs, descriptors, config)
    grads = ((dq_sum * scale).to(dtype), dk3, dv3)
    return tuple(g.to(t.dtype).reshape(t.shape) for g, t in zip(grads, (q, k, v), strict=True)), kernel
