"""Unit 10's reference: the FlashAttention forward for Hopper, with tensor descriptors and a persistent grid.

- Q, K, V and O are read and written through host-side `TensorDescriptor`s over the (BH, N, d) view, block
  [1, rows, d]: on sm90 each load is one TMA copy. Out-of-bounds rows read as zeros and stores beyond N are
  clipped, so the query tail needs no mask; the scores of the key tail (zeros, not absent) are set to −∞.
- Persistent grid: min(PROGRAMS_PER_SM · #SMs, #tiles) programs, each looping over tiles t = pid,
  pid + programs, … . With 2 programs per SM (d = 64: they fit in shared memory), one program's softmax runs
  while the other's matmuls keep the tensor cores busy: the inter-program form of FlashAttention-3's pingpong,
  without which a lone program leaves the tensor cores idle during every softmax (measured on the H100:
  0.64× cuDNN with one program per SM, 0.88–0.96× with two, `results/h100/hopper/`).
  Non-causal: tiles run head-major (neighbouring programs share K and V in L2). Causal: heads in groups of
  `CAUSAL_GROUP`, so the running programs share K and V in L2, and within a group the query tiles zigzag: longest
  first in even groups, shortest first in odd ones. Programs stride through the tiles, so each sits at about the
  same place in every group: the zigzag gives it long tiles in one group and short ones in the next. (Longest
  first across all heads moved 4–5× cuDNN's DRAM bytes; groups without the zigzag cut that but unbalanced the
  programs and ran slower; with it, 5–10 % faster: `results/h100/hopper/profile/`.)
- exp2 with the scale folded in (`qk_scale = σ · log2 e`, applied in the exponent's multiply-add, so σ > 0);
  the causal loop is split into the key tiles every row sees (no mask) and the diagonal and tail tiles (masked).
- Configs are autotuned per (d, causal, N bucket); each config resets the descriptors' block shapes.
- `HopperAttention` is differentiable: its backward is the one pass of `hopper_backward` or the unit-08 backward
  kernels (`flash_triton`), whichever was the faster on the H200 (`uses_one_pass`); both take the L this forward
  saves. Where `utils.hopper.path()` says "pointers" (no tensor descriptors in this Triton,
  or a GPU older than sm90) `hopper_attention` runs the unit-08 kernel instead and says so once.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from course.reference import flash_triton, hopper_backward
from course.reference.descriptors import block_shape_hook, descriptor, float32_pruner, launch
from course.reference.triton_configs import n_bucket
from utils import hopper, runtime
from utils.attention.validate import check_qkv, default_scale
from utils.messages import bilingual

# Heads whose causal tiles run together: the most consistent of 2, 4, 8 and 16 on the H100
CAUSAL_GROUP = tl.constexpr(8)
HEAD_DIMS = (64, 128)  # descriptor rows must be >= 16 bytes; the exercise and the tuning cover these two


def kernel_config(block_q, block_k, warps, stages, per_sm=1) -> triton.Config:
    """One config of `hopper_forward_kernel` (its pre-hook sets the descriptors' block shapes)."""
    return triton.Config(
        {"BLOCK_Q": block_q, "BLOCK_K": block_k, "PROGRAMS_PER_SM": per_sm},
        num_warps=warps,
        num_stages=stages,
        pre_hook=block_shape_hook({"BLOCK_Q": ("q_desc", "o_desc"), "BLOCK_K": ("k_desc", "v_desc")}),
    )


# The GPU search space for 16-bit inputs: the fastest of a sweep on the H100 (128 × 64 tiles won every panel; two
# programs per SM at d = 64, one or two at d = 128, where registers (8 warps × 164) hold one
# program per SM, so a second only queues), and smaller tiles for
# float32 (tests only: 128-row tiles of float32 overflow shared memory at d = 128). The interpreter gets one small
# config with different Q and K tiles and two programs per pretend SM, so every diagonal and tail case and the
# shared-SM grid are exercised.
GPU_CONFIGS = [
    kernel_config(128, 64, 4, 3, per_sm=2),
    kernel_config(128, 64, 8, 3, per_sm=1),
    kernel_config(128, 64, 8, 4, per_sm=1),
    kernel_config(128, 64, 8, 2, per_sm=2),
]
FLOAT32_CONFIGS = [kernel_config(64, 32, 4, 2), kernel_config(64, 64, 4, 1)]
INTERPRETER_CONFIGS = [kernel_config(32, 16, 1, 1, per_sm=2)]


@triton.jit
def hide_invisible(s, offs_q, offs_k, n_k, IS_CAUSAL: tl.constexpr):
    """The score tile with −∞ where a key is beyond Nk (the key tail, read as zeros) or, causal, after the query."""
    visible = offs_k[None, :] < n_k
    if IS_CAUSAL:
        visible = visible & (offs_k[None, :] <= offs_q[:, None])
    return tl.where(visible, s, float("-inf"))


@triton.jit
def _attend(
    acc, row_max, row_sum, q, k_desc, v_desc, bh, k_start, n_k, offs_q, qk_scale,
    BLOCK_K: tl.constexpr, HEAD_DIM: tl.constexpr, MASKED: tl.constexpr, IS_CAUSAL: tl.constexpr,
):  # fmt: skip
    """Fold keys [k_start, k_start + BLOCK_K) into the running (acc, row_max, row_sum), in base 2."""
    k = k_desc.load([bh, k_start, 0]).reshape([BLOCK_K, HEAD_DIM])
    v = v_desc.load([bh, k_start, 0]).reshape([BLOCK_K, HEAD_DIM])
    s = tl.dot(q, tl.trans(k))  # unscaled: the scale goes into the exponent's multiply-add below
    if MASKED:
        s = hide_invisible(s, offs_q, k_start + tl.arange(0, BLOCK_K), n_k, IS_CAUSAL)
    new_max = tl.maximum(row_max, tl.max(s, 1) * qk_scale)  # key 0 is in the first tile visited: finite
    p = tl.exp2(s * qk_scale - new_max[:, None])  # one fused multiply-add per score
    correction = tl.exp2(row_max - new_max)
    row_sum = row_sum * correction + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * correction[:, None])
    return acc, new_max, row_sum


@triton.jit
def key_bounds(q_start, n_k, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, IS_CAUSAL: tl.constexpr):
    """(full_end, keys_end) for the query tile at `q_start`: key tiles below `full_end` are seen whole by every row
    (no mask: no key tail and, causal, the tile's last key <= its first query); the keys up to `keys_end` are all
    that any of its rows sees (the tiles in between are masked)."""
    full_end = (n_k // BLOCK_K) * BLOCK_K
    keys_end = n_k
    if IS_CAUSAL:
        full_end = tl.minimum(full_end, ((q_start + 1) // BLOCK_K) * BLOCK_K)
        keys_end = tl.minimum(n_k, q_start + BLOCK_Q)
    return full_end, keys_end


@triton.autotune(
    configs=INTERPRETER_CONFIGS if runtime.interpreter() else GPU_CONFIGS + FLOAT32_CONFIGS,
    key=["HEAD_DIM", "IS_CAUSAL", "N_BUCKET", "ELEMENT_BYTES"],  # descriptors carry no dtype for the key
    prune_configs_by={"early_config_prune": float32_pruner(FLOAT32_CONFIGS)},
)
@triton.jit
def hopper_forward_kernel(
    q_desc, k_desc, v_desc, o_desc, L, n_q, n_k, batch_heads, qk_scale,
    HEAD_DIM: tl.constexpr, IS_CAUSAL: tl.constexpr, N_BUCKET: tl.constexpr, ELEMENT_BYTES: tl.constexpr,
    BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, PROGRAMS_PER_SM: tl.constexpr,
):  # fmt: skip
    """Persistent: program `pid` computes O and L of tiles pid, pid + programs, … of cdiv(Nq, BLOCK_Q) · BH
    (`PROGRAMS_PER_SM` sizes the grid, see `grid`)."""
    q_tiles = tl.cdiv(n_q, BLOCK_Q)
    for tile in tl.range(tl.program_id(0), q_tiles * batch_heads, tl.num_programs(0)):
        # causal: heads in groups (they share K and V in L2), query tiles zigzag (longest first in even groups)
        if IS_CAUSAL:
            group = tile // (CAUSAL_GROUP * q_tiles)
            group_start = group * CAUSAL_GROUP
            group_heads = tl.minimum(batch_heads - group_start, CAUSAL_GROUP)  # the last group may be smaller
            in_group = tile - group_start * q_tiles
            q_tile = in_group // group_heads
            if group % 2 == 0:
                q_tile = q_tiles - 1 - q_tile
            bh = group_start + in_group % group_heads
        else:
            bh = tile // q_tiles  # head-major: neighbours share K and V
            q_tile = tile % q_tiles
        q_start = q_tile * BLOCK_Q
        offs_q = q_start + tl.arange(0, BLOCK_Q)
        q = q_desc.load([bh, q_start, 0]).reshape([BLOCK_Q, HEAD_DIM])
        row_max = tl.full([BLOCK_Q], float("-inf"), dtype=tl.float32)
        row_sum = tl.zeros([BLOCK_Q], dtype=tl.float32)
        acc = tl.zeros([BLOCK_Q, HEAD_DIM], dtype=tl.float32)
        full_end, keys_end = key_bounds(q_start, n_k, BLOCK_Q, BLOCK_K, IS_CAUSAL)
        for k_start in tl.range(0, full_end, BLOCK_K):
            acc, row_max, row_sum = _attend(
                acc, row_max, row_sum, q, k_desc, v_desc, bh, k_start, n_k, offs_q, qk_scale,
                BLOCK_K, HEAD_DIM, False, IS_CAUSAL,
            )  # fmt: skip
        for k_start in tl.range(full_end, keys_end, BLOCK_K):
            acc, row_max, row_sum = _attend(
                acc, row_max, row_sum, q, k_desc, v_desc, bh, k_start, n_k, offs_q, qk_scale,
                BLOCK_K, HEAD_DIM, True, IS_CAUSAL,
            )  # fmt: skip
        o = (acc / row_sum[:, None]).to(o_desc.dtype)
        o_desc.store([bh, q_start, 0], o.reshape([1, BLOCK_Q, HEAD_DIM]))  # rows beyond Nq are clipped
        lse = (row_max + tl.log2(row_sum)) * 0.6931471805599453  # natural log, the contract
        tl.store(L + bh * n_q + offs_q, lse, mask=offs_q < n_q)


def check_inputs(q, k, v) -> None:
    check_qkv(q, k, v, head_dims=HEAD_DIMS)
    flash_triton.check_triton_inputs(q, k, v)


def grid(n_q: int, batch_heads: int):
    """The persistent grid: the config's programs per SM, never more programs than tiles."""
    return lambda meta: (
        min(meta["PROGRAMS_PER_SM"] * hopper.num_sms(), triton.cdiv(n_q, meta["BLOCK_Q"]) * batch_heads),
    )


def hopper_forward(q, k, v, is_causal: bool, scale: float, config: triton.Config | None = None):
    """O (q's dtype and shape) and L (float32, (..., Nq)) from the persistent descriptor kernel; `config` (see
    `kernel_config`) forces one config instead of autotuning (the profile compares them)."""
    dtype = flash_triton._run_dtype(q.dtype)
    q3, k3, v3 = (t.reshape(-1, *t.shape[-2:]).to(dtype).contiguous() for t in (q, k, v))
    batch_heads, n_q, head_dim = q3.shape
    n_k = k3.shape[1]
    o3 = torch.empty_like(q3)
    lse = torch.empty((batch_heads, n_q), dtype=torch.float32, device=q.device)
    descriptors = {
        name: descriptor(t, 64)
        for name, t in (("q_desc", q3), ("k_desc", k3), ("v_desc", v3), ("o_desc", o3))
    }
    args = (*descriptors.values(), lse, n_q, n_k, batch_heads, scale * flash_triton.LOG2E)
    constexprs = {"HEAD_DIM": head_dim, "IS_CAUSAL": is_causal, "N_BUCKET": n_bucket(max(n_q, n_k)),
                  "ELEMENT_BYTES": q3.element_size()}  # fmt: skip
    launch(hopper_forward_kernel, grid(n_q, batch_heads), args, constexprs, descriptors, config)
    return o3.to(q.dtype).reshape(q.shape), lse.reshape(q.shape[:-1])


def uses_one_pass(head_dim: int, is_causal: bool, n: int) -> bool:
    """Whether the backward is the one pass (`hopper_backward`: five products, dQ by TMA reduce-add) rather than
    the unit-08 kernels (seven products, no atomics). Measured on the H200 (`benchmarks/results/h200/backward/`):
    the one pass is at least as fast only for causal attention at d = 64 from N = 4096 on (about equal at 4k-8k,
    0.89x cuDNN against 0.85x at 16k, 3.46 ms against 3.58 at the leaderboard's call); at d = 128 its dK, dV and
    dQ share spill registers (0.6x the two kernels)."""
    return head_dim == 64 and is_causal and n >= 4096


class HopperAttention(flash_triton.FlashAttentionTriton):
    """`HopperAttention.apply(Q, K, V, is_causal=False, scale=None)`: the Hopper forward; the backward is the one
    pass where `uses_one_pass`, else `FlashAttentionTriton`'s (the unit-08 kernels). Same
    contract: saves Q, K, V, O and L (float32)."""

    @staticmethod
    def forward(ctx, q, k, v, is_causal=False, scale=None):
        check_inputs(q, k, v)
        scale = default_scale(q, scale)
        if scale <= 0:
            raise ValueError(
                bilingual(f"缩放因子必须为正，得到 {scale}", f"the scale must be positive, got {scale}")
            )
        o, lse = hopper_forward(q, k, v, bool(is_causal), scale)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.is_causal, ctx.scale = bool(is_causal), scale
        return o

    @staticmethod
    def backward(ctx, grad_out):
        q, k, v, o, lse = ctx.saved_tensors
        if not uses_one_pass(q.shape[-1], ctx.is_causal, max(q.shape[-2], k.shape[-2])):
            return flash_triton.FlashAttentionTriton.backward(ctx, grad_out)
        grads, _ = hopper_backward.hopper_backward(q, k, v, o, lse, grad_out, ctx.is_causal, ctx.scale)
        return *grads, None, None


_announced: set[str] = set()


def hopper_attention(q, k, v, is_causal: bool = False, scale: float | None = None):
    """Attention by the fastest path this machine supports (`utils.hopper.path()`): the Hopper kernel, or the
    unit-08 pointer kernel (said once per reason) where descriptors or sm90 are missing, or d is not 64/128."""
    chosen = hopper.path()
    if chosen.hopper and q.shape[-1] in HEAD_DIMS:
        return HopperAttention.apply(q, k, v, is_causal, scale)
    reason = chosen.reason if not chosen.hopper else bilingual(
        f"d = {q.shape[-1]} 不在 {HEAD_DIMS} 中：使用单元 08 的指针内核",
        f"d = {q.shape[-1]} is not in {HEAD_DIMS}: using the unit-08 pointer kernel",
    )  # fmt: skip
    if reason not in _announced:
        _announced.add(reason)
        print(reason)
    return flash_triton.FlashAttentionTriton.apply(q, k, v, is_causal, scale)
