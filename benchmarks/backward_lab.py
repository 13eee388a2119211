"""Backward experiments at CS336's leaderboard shape (issue 49): which change moves the kernels, measured.

    python -m benchmarks.backward_lab --out DIR

Each kernel is timed alone (`do_bench`, median) at (16, 16384, 64) and (8, 16384, 128), causal, bf16, with the
leaderboard's dO (ones, stride 0), beside cuDNN's whole backward; each result is checked against the course's
reference backward of the same inputs first (relative error of each gradient, ≤ 2e-2). Variants:
- `early_dp`: issue the dP product before the softmax's exp2 of the same tile, so the tensor cores work on dP
  while the exp2 runs (the reference kernels issue it after the dV product, in dependency order);
- `q_rows`: the dK/dV kernel loads Q as [queries, d] and takes `tl.trans` for Sᵀ = K Qᵀ (as the Hopper backward);
- the one-pass Hopper backward (five products, dQ by TMA reduce-add) in each config;
- round 2 (`--round 2`, DIR/lab2.json): the dK/dV kernel with Triton's automatic warp specialisation of its
  unmasked loop (`tl.range(..., warp_specialize=True)`) and with a register cap (`maxnreg`: more programs per SM).
Writes DIR/lab.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from torch.nn.attention import SDPBackend, sdpa_kernel

SEQUENCES = {64: 16, 128: 8}
N = 16384
_PLAIN, _EARLY, _EARLY_Q_ROWS = (
    {"early_dp": False, "q_rows": False}, {"early_dp": True, "q_rows": False}, {"early_dp": True, "q_rows": True}
)  # fmt: skip
DKDV_VARIANTS = {  # round -> [(config, flags)]; round 2 adds Triton's warp specialisation and a register cap
    1: [
        (config, flags)
        for config in [(64, 64, 4, 3), (32, 128, 4, 3), (64, 128, 8, 3), (64, 128, 8, 2), (32, 64, 4, 3)]
        for flags in (_PLAIN, _EARLY, _EARLY_Q_ROWS)
    ],
    2: [
        (config, flags)
        for config, cap in [((64, 64, 4, 3), 168), ((64, 128, 8, 3), 128), ((64, 64, 4, 2), 168)]
        for flags in (_EARLY_Q_ROWS, _EARLY_Q_ROWS | {"warp_spec": True}, _EARLY_Q_ROWS | {"maxnreg": cap})
    ],
}
DQ_CONFIGS = [(128, 64, 8, 3), (64, 64, 4, 3), (128, 128, 8, 2), (128, 32, 8, 3)]
ONE_PASS_CONFIGS = [(64, 64, 4, 3), (64, 64, 4, 4), (64, 128, 8, 3), (32, 64, 4, 3)]
LOG2E = 1.4426950408889634


@triton.jit
def _dkdv_tile(dk, dv, k, v, q_ptr, do_ptr, lse_ptr, delta_ptr, stride_qn, stride_qd, stride_don, stride_dod,
               q_start, n_q, offs_k, offs_d, qk_scale, BLOCK_Q: tl.constexpr, MASKED: tl.constexpr,
               EARLY_DP: tl.constexpr, Q_ROWS: tl.constexpr):  # fmt: skip
    offs_q = q_start + tl.arange(0, BLOCK_Q)
    rows = offs_q < n_q
    if Q_ROWS:
        q = tl.load(
            q_ptr + offs_q[:, None] * stride_qn + offs_d[None, :] * stride_qd, mask=rows[:, None], other=0.0
        )
        qt = tl.trans(q)
    else:
        qt = tl.load(
            q_ptr + offs_d[:, None] * stride_qd + offs_q[None, :] * stride_qn, mask=rows[None, :], other=0.0
        )
    do = tl.load(
        do_ptr + offs_q[:, None] * stride_don + offs_d[None, :] * stride_dod, mask=rows[:, None], other=0.0
    )
    lse2 = tl.load(lse_ptr + offs_q, mask=rows, other=0.0) * 1.4426950408889634
    delta = tl.load(delta_ptr + offs_q, mask=rows, other=0.0)
    st = tl.dot(k, qt)
    if EARLY_DP:
        dpt = tl.dot(v, tl.trans(do))
    pt = tl.exp2(st * qk_scale - lse2[None, :])
    if MASKED:
        pt = tl.where(offs_k[:, None] <= offs_q[None, :], pt, 0.0)
    dv = tl.dot(pt.to(do.dtype), do, dv)
    if not EARLY_DP:
        dpt = tl.dot(v, tl.trans(do))
    dst = pt * (dpt - delta[None, :])
    if Q_ROWS:
        dk = tl.dot(dst.to(q.dtype), q, dk)
    else:
        dk = tl.dot(dst.to(qt.dtype), tl.trans(qt), dk)
    return dk, dv


@triton.jit
def dkdv_lab(Q, K, V, DO, L, Delta, DK, DV, stride_qn, stride_qd, stride_kn, stride_kd, stride_don, stride_dod,
             n, scale, qk_scale, HEAD_DIM: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr,
             EARLY_DP: tl.constexpr, Q_ROWS: tl.constexpr, WARP_SPEC: tl.constexpr = False):  # fmt: skip
    """Causal dK, dV; Q, K, V, DK, DV contiguous (BH, n, d) with n a multiple of the tiles; DO any strides."""
    k_start = tl.program_id(0) * BLOCK_K
    bh = tl.program_id(1).to(tl.int64)
    offs_k = k_start + tl.arange(0, BLOCK_K)
    offs_d = tl.arange(0, HEAD_DIM)
    kv_offs = bh * n * HEAD_DIM + offs_k[:, None] * HEAD_DIM + offs_d[None, :]
    k = tl.load(K + kv_offs)
    v = tl.load(V + kv_offs)
    q_ptr = Q + bh * n * HEAD_DIM
    do_ptr = DO + bh * 0  # stride-0 batch for the leaderboard's ones
    dk = tl.zeros([BLOCK_K, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_K, HEAD_DIM], dtype=tl.float32)
    first_q = (k_start // BLOCK_Q) * BLOCK_Q
    full_start = tl.cdiv(k_start + BLOCK_K - 1, BLOCK_Q) * BLOCK_Q
    for q_start in range(first_q, full_start, BLOCK_Q):
        dk, dv = _dkdv_tile(dk, dv, k, v, q_ptr, do_ptr, L + bh * n, Delta + bh * n, stride_qn, stride_qd,
                            stride_don, stride_dod, q_start, n, offs_k, offs_d, qk_scale, BLOCK_Q, True,
                            EARLY_DP, Q_ROWS)  # fmt: skip
    for q_start in tl.range(full_start, n, BLOCK_Q, warp_specialize=WARP_SPEC):
        dk, dv = _dkdv_tile(dk, dv, k, v, q_ptr, do_ptr, L + bh * n, Delta + bh * n, stride_qn, stride_qd,
                            stride_don, stride_dod, q_start, n, offs_k, offs_d, qk_scale, BLOCK_Q, False,
                            EARLY_DP, Q_ROWS)  # fmt: skip
    tl.store(DK + kv_offs, (dk * scale).to(DK.dtype.element_ty))
    tl.store(DV + kv_offs, dv.to(DV.dtype.element_ty))


@triton.jit
def _dq_tile(dq, q, do, lse2, delta, k_ptr, v_ptr, k_start, offs_q, offs_d, qk_scale, HEAD_DIM: tl.constexpr,
             BLOCK_K: tl.constexpr, MASKED: tl.constexpr, EARLY_DP: tl.constexpr):  # fmt: skip
    offs_k = k_start + tl.arange(0, BLOCK_K)
    kt = tl.load(k_ptr + offs_d[:, None] + offs_k[None, :] * HEAD_DIM)
    vt = tl.load(v_ptr + offs_d[:, None] + offs_k[None, :] * HEAD_DIM)
    s = tl.dot(q, kt)
    if EARLY_DP:
        dp = tl.dot(do, vt)
    p = tl.exp2(s * qk_scale - lse2[:, None])
    if MASKED:
        p = tl.where(offs_k[None, :] <= offs_q[:, None], p, 0.0)
    if not EARLY_DP:
        dp = tl.dot(do, vt)
    ds = p * (dp - delta[:, None])
    return tl.dot(ds.to(kt.dtype), tl.trans(kt), dq)


@triton.jit
def dq_lab(Q, K, V, DO, L, Delta, DQ, stride_don, stride_dod, n, scale, qk_scale, HEAD_DIM: tl.constexpr,
           BLOCK_Q: tl.constexpr, BLOCK_K: tl.constexpr, EARLY_DP: tl.constexpr):  # fmt: skip
    """Causal dQ, longest query tiles first."""
    q_start = (tl.num_programs(0) - 1 - tl.program_id(0)) * BLOCK_Q
    bh = tl.program_id(1).to(tl.int64)
    offs_q = q_start + tl.arange(0, BLOCK_Q)
    offs_d = tl.arange(0, HEAD_DIM)
    q_offs = bh * n * HEAD_DIM + offs_q[:, None] * HEAD_DIM + offs_d[None, :]
    q = tl.load(Q + q_offs)
    do = tl.load(DO + offs_q[:, None] * stride_don + offs_d[None, :] * stride_dod)
    lse2 = tl.load(L + bh * n + offs_q) * 1.4426950408889634
    delta = tl.load(Delta + bh * n + offs_q)
    k_ptr = K + bh * n * HEAD_DIM
    v_ptr = V + bh * n * HEAD_DIM
    dq = tl.zeros([BLOCK_Q, HEAD_DIM], dtype=tl.float32)
    full_end = ((q_start + 1) // BLOCK_K) * BLOCK_K
    for k_start in range(0, full_end, BLOCK_K):
        dq = _dq_tile(dq, q, do, lse2, delta, k_ptr, v_ptr, k_start, offs_q, offs_d, qk_scale, HEAD_DIM,
                      BLOCK_K, False, EARLY_DP)  # fmt: skip
    for k_start in range(full_end, q_start + BLOCK_Q, BLOCK_K):
        dq = _dq_tile(dq, q, do, lse2, delta, k_ptr, v_ptr, k_start, offs_q, offs_d, qk_scale, HEAD_DIM,
                      BLOCK_K, True, EARLY_DP)  # fmt: skip
    tl.store(DQ + q_offs, (dq * scale).to(DQ.dtype.element_ty))


def bench(fn) -> float:
    return triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median")


def relative_error(got, expected) -> float:
    return ((got.float() - expected.float()).norm() / expected.float().norm()).item()


def panel(d: int, lab_round: int) -> list[dict]:
    from course.reference import flash_triton, hopper_backward

    dtype = torch.bfloat16
    bh = SEQUENCES[d]
    q, k, v = (torch.randn(bh, N, d, device="cuda", dtype=dtype) for _ in range(3))
    ones = torch.ones((), dtype=dtype, device="cuda").expand(bh, N, d)
    scale = d**-0.5
    o, lse = flash_triton.triton_forward(q, k, v, True, scale)
    expected = flash_triton.triton_backward(q, k, v, o, lse, ones, True, scale)
    delta = flash_triton.row_delta(o, ones)
    rows = []

    q4, k4, v4 = (t[:, None].clone().requires_grad_() for t in (q, k, v))
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        out4 = F.scaled_dot_product_attention(q4, k4, v4, is_causal=True)
    ones4 = torch.ones((), dtype=dtype, device="cuda").expand_as(out4)
    rows.append({"d": d, "kernel": "cuDNN backward", "ms": bench(
        lambda: torch.autograd.grad(out4, (q4, k4, v4), ones4, retain_graph=True))})  # fmt: skip
    rows.append({"d": d, "kernel": "course backward", "ms": bench(
        lambda: flash_triton.triton_backward(q, k, v, o, lse, ones, True, scale))})  # fmt: skip

    def record(kernel, config, flags, fn, got):
        row = {"d": d, "kernel": kernel, "config": config, **flags}
        try:
            fn()
            torch.cuda.synchronize()
            row["errors"] = [relative_error(g, e) for g, e in got()]
            row["ms"] = bench(fn)
        except Exception as error:  # noqa: BLE001 - out of resources, a compile error: recorded
            row["error"] = f"{type(error).__name__}: {str(error)[:160]}"
        rows.append(row)
        print(row, flush=True)

    dk, dv, dq = (torch.empty_like(t) for t in (k, v, q))
    for (bq, bk, w, s), flags in DKDV_VARIANTS[lab_round]:
        fn = lambda bq=bq, bk=bk, w=w, s=s, flags=flags: dkdv_lab[(N // bk, bh)](  # noqa: E731
            q, k, v, ones, lse, delta, dk, dv, d, 1, d, 1, *ones.stride()[1:], N, scale, scale * LOG2E,
            HEAD_DIM=d, BLOCK_Q=bq, BLOCK_K=bk, EARLY_DP=flags["early_dp"], Q_ROWS=flags["q_rows"],
            WARP_SPEC=flags.get("warp_spec", False), maxnreg=flags.get("maxnreg"), num_warps=w, num_stages=s)  # fmt: skip
        record("dkdv", (bq, bk, w, s), flags, fn, lambda: [(dk, expected[1]), (dv, expected[2])])
    if lab_round == 2:
        return rows
    for bq, bk, w, s in DQ_CONFIGS:
        for early in (False, True):
            fn = lambda bq=bq, bk=bk, w=w, s=s, early=early: dq_lab[(N // bq, bh)](  # noqa: E731
                q, k, v, ones, lse, delta, dq, *ones.stride()[1:], N, scale, scale * LOG2E, HEAD_DIM=d,
                BLOCK_Q=bq, BLOCK_K=bk, EARLY_DP=early, num_warps=w, num_stages=s)  # fmt: skip
            record("dq", (bq, bk, w, s), {"early_dp": early}, fn, lambda: [(dq, expected[0])])
    for bq, bk, w, s in ONE_PASS_CONFIGS:
        config = hopper_backward.kernel_config(bq, bk, w, s)
        box = {}

        def one_pass(config=config, box=box):
            box["grads"] = hopper_backward.hopper_backward(q, k, v, o, lse, ones, True, scale, config)[0]

        record(
            "one pass",
            (bq, bk, w, s),
            {},
            one_pass,
            lambda box=box: list(zip(box["grads"], expected, strict=True)),
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--head-dims", type=int, nargs="+", default=[64, 128])
    parser.add_argument(
        "--round", type=int, choices=(1, 2), default=1, help="1: lab.json's sweep; 2: lab2.json"
    )
    args = parser.parse_args(argv)
    rows = [row for d in args.head_dims for row in panel(d, args.round)]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / ("lab.json" if args.round == 1 else f"lab{args.round}.json")).write_text(
        json.dumps(rows, indent=1), encoding="utf-8"
    )
    for r in rows:
        flags = "".join(f" {k}={r[k]}" for k in ("early_dp", "q_rows", "warp_spec", "maxnreg") if r.get(k))
        bad = "" if max(r.get("errors", [0])) <= 2e-2 else f" WRONG {r['errors']}"
        print(
            f"d{r['d']} {r['kernel']:15} {r.get('config', '')!s:18}{flags:18} {r.get('ms', r.get('error'))}{bad}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
