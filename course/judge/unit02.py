"""Unit 02 (IO-aware design): the hidden cases, tolerances and properties of each graded cell.

FLOP and byte counts are exact integers, so they are compared with a relative tolerance of 1e-9 (float
rounding of the ratio only). The HBM byte counts are compared with what the traffic counter
(`utils.traffic.count_traffic`) measures here, in the judge's process, when the course's kernels run in
Triton's interpreter: the unfused kernels of `utils.io_kernels` for standard attention, the reference
FlashAttention forward kernel (`course.reference.triton_kernels.forward_kernel`) for flash attention.

The fused softmax runs in the child on the judge's slow memory (`course.judge.services.SlowMemoryService`: S and
P stay in the judge's process, the child's `mem` only sends reads and writes), so the judge counts each
element read and written itself and decides here: values against float64 (float32: 1e-6 absolute, softmax
values are at most 1; float16/bfloat16 outputs are rounded to 11/8 mantissa bits: 2e-3/8e-3 absolute), traffic
at the fused bound, and the size of the largest tensor in fast memory: the largest tile one access moved (seen
here) or the largest tensor the student's code created (watched in the child, where switching the watch off is
flagged for review: `services.WATCH_SWITCHES`).
"""

from __future__ import annotations

import functools
import math

import torch
import triton

from course.judge.child import CallFailed
from course.judge.core import Judgement, Unit
from course.judge.services import WATCH_SWITCHES, SlowMemoryService
from course.reference import io_aware as reference
from course.reference.triton_kernels import forward_kernel
from utils import io_kernels
from utils.judged.student_module import LAYOUTS
from utils.traffic import count_traffic

UNIT = Unit(
    LAYOUTS["io_aware.ipynb"],
    banned=[
        "utils.traffic:count_traffic",
        "utils.traffic.triton_counter:count_traffic",
        "utils.io_kernels:standard_attention",
        "utils.io_kernels:fused_attention",
    ],
    suspicious=WATCH_SWITCHES,
)
CALL = "utils.judged.slow_memory.call"
RUN = "utils.judged.slow_memory.run"
DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64)
MAX_ROWS_ON_CHIP = 64
# Sequence lengths of the counted cases: odd (never a multiple of a tile), from a fixed set so that the judge's
# counts (a few seconds each in the interpreter) are reused across the students graded in one process.
SIZES = (37, 77, 101, 131, 163, 197)

MATMUL = "矩阵乘法 · matmul"
SOFTMAX = "softmax"
STEPS = "注意力的两步乘法 scores 与 pv · the attention products scores and pv"
FUSED = "融合注意力 · fused attention"
UNKNOWN = "未知操作引发 ValueError · an unknown op raises ValueError"
MEMORY = "受内存限制的操作 · memory-bound operations"
COMPUTE = "受计算限制的操作 · compute-bound operations"
RIDGE = "恰在拐点：compute · exactly at the ridge: compute"
DEFAULT = "默认 64 行查询块 · the default 64-row query tiles"
TILES = "其他查询块大小（16、32、128）· other query tiles (16, 32, 128)"
LOW = "float16、bfloat16 · float16, bfloat16"
RULE = "分块规则，多种 SRAM 大小 · the tiling rule, several SRAM sizes"
BIG = "块大于 N、N 不是块的整数倍 · tiles larger than N, N not a multiple of the tile"
SMALL = "SRAM 放不下 16 行时 ValueError · ValueError when 16 rows do not fit"
VALUES = "float32 的值 · float32 values"
CAUSAL = "因果掩码（左上角对齐，Nq ≠ Nk）· causal mask (top-left, Nq ≠ Nk)"
LOW_IN = "float16、bfloat16 输入 · float16, bfloat16 inputs"
TRAFFIC = (
    "融合的流量：S 的元素至多读一次，P 的元素恰好写一次 · fused traffic: S read at most once, P written once"
)
ON_CHIP = f"片上至多 {MAX_ROWS_ON_CHIP} 行分数 · at most {MAX_ROWS_ON_CHIP} rows of scores on chip"


def name(dtype: torch.dtype) -> str:
    return str(dtype)  # "torch.float16": turned back into the dtype in the child


def number(j: Judgement, value, what: str) -> float:
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    j.expect(
        isinstance(value, int | float) and not isinstance(value, bool),
        f"{what} 应返回一个数，得到 {value!r}",
        f"{what} should return a number, got {value!r}",
    )
    return float(value)


def expect_near(j: Judgement, got: float, expected: float, what: str, rel: float = 1e-9) -> None:
    j.expect(
        math.isclose(got, expected, rel_tol=rel, abs_tol=1e-12),
        f"{what} = {got:.6g}，应为 {expected:.6g}",
        f"{what} = {got:.6g}, expected {expected:.6g}",
    )


def expect_value_error(j: Judgement, target: str, *args, what: str) -> None:
    try:
        answer = j.call(CALL, target, *args)
    except CallFailed as failure:
        j.expect(
            str(failure).startswith("ValueError"),
            f"{what} 应引发 ValueError，得到 {str(failure)[:200]}",
            f"{what} should raise ValueError, got {str(failure)[:200]}",
        )
        return
    j.expect(
        False,
        f"{what} 应引发 ValueError，却返回了 {answer.result!r}",
        f"{what} should raise ValueError, returned {answer.result!r}",
    )


@UNIT.cell(
    "test_arithmetic_intensity", {MATMUL: 1, SOFTMAX: 1, STEPS: 1, FUSED: 1, UNKNOWN: 0.5}, selfcheck=MATMUL
)
def intensity(j: Judgement) -> None:
    dtypes = j.rng.sample(DTYPES, len(DTYPES))  # every dtype the exercise names, in a shuffled order
    cases = [(MATMUL, "matmul", (64, 64, 64), torch.float32)]  # the visible self-check's case
    cases += [(MATMUL, "matmul", (j.odd(1, 4000), j.odd(1, 300), j.odd(1, 4000)), dtypes[0])]
    cases += [
        (SOFTMAX, "softmax", (j.odd(1, 9000), j.odd(1, 9000)), dtype)
        for dtype in (torch.float16, torch.float32)
    ]
    for op, dtype in (("scores", dtypes[1]), ("pv", dtypes[2])):
        cases.append((STEPS, op, (j.odd(1, 5000), j.odd(1, 5000), j.rng.choice([16, 64, 128])), dtype))
    cases += [
        (FUSED, "fused_attention", (j.odd(1, 9000), j.odd(1, 9000), d), dtype)
        for d, dtype in ((64, dtypes[3]), (128, j.rng.choice(DTYPES)))
    ]
    for prop, op, shapes, dtype in cases:
        what = f"arithmetic_intensity({op!r}, {shapes}, {dtype})"
        with j.case(prop, what):
            got = number(j, j.call(CALL, "arithmetic_intensity", op, list(shapes), name(dtype)).result, what)
            flops, nbytes = reference.flops_and_bytes(op, shapes, dtype)
            j.expect(
                math.isclose(got, flops / nbytes, rel_tol=1e-9),
                f"{what} = {got:.6g}，应为 {flops:,} FLOP / {nbytes:,} 字节 = {flops / nbytes:.6g}",
                f"{what} = {got:.6g}, expected {flops:,} FLOPs / {nbytes:,} bytes = {flops / nbytes:.6g}",
            )
    with j.case(UNKNOWN, "arithmetic_intensity('conv', ...)"):
        expect_value_error(
            j,
            "arithmetic_intensity",
            "conv",
            [3, 3, 3],
            name(torch.float32),
            what="arithmetic_intensity('conv', ...)",
        )


@UNIT.cell("test_roofline", {MEMORY: 1, COMPUTE: 1, RIDGE: 0.5}, selfcheck=MEMORY)
def roofline(j: Judgement) -> None:
    cases = [(MEMORY, 1e9, 1e9, 100e12, 2e12)]  # the visible self-check's case
    for _ in range(3):
        peak, bandwidth = 10 ** j.rng.uniform(11, 15.5), 10 ** j.rng.uniform(10, 13)
        ridge = peak / bandwidth
        nbytes = 10 ** j.rng.uniform(3, 11)
        cases.append((MEMORY, ridge * j.rng.uniform(0.01, 0.9) * nbytes, nbytes, peak, bandwidth))
        cases.append((COMPUTE, ridge * j.rng.uniform(1.1, 100) * nbytes, nbytes, peak, bandwidth))
    peak, bandwidth = 2.0 ** j.rng.randrange(40, 50), 2.0 ** j.rng.randrange(30, 40)
    cases.append((RIDGE, peak / bandwidth * 2.0**20, 2.0**20, peak, bandwidth))  # exact in binary
    cases.append((MEMORY, 0.0, 10 ** j.rng.uniform(3, 11), peak, bandwidth))  # no FLOPs: 0 FLOP/s, memory
    for prop, flops, nbytes, peak, bandwidth in cases:
        what = f"roofline({flops:.4g}, {nbytes:.4g}, {peak:.4g}, {bandwidth:.4g})"
        with j.case(prop, what):
            (attainable, bound) = j.call(CALL, "roofline", flops, nbytes, peak, bandwidth).result
            expected, expected_bound = reference.roofline(flops, nbytes, peak, bandwidth)
            expect_near(j, number(j, attainable, what), expected, f"{what}[0]")
            j.expect(
                bound == expected_bound,
                f"{what}[1] = {bound!r}，应为 {expected_bound!r}",
                f"{what}[1] = {bound!r}, expected {expected_bound!r}",
            )


@functools.lru_cache(maxsize=256)
def counted_standard(n: int, d: int, dtype: torch.dtype, block_q: int) -> int:
    """Bytes the unfused kernels move, counted in the interpreter (values do not change a count)."""
    q, k, v = (torch.randn(1, n, d).to(dtype) for _ in range(3))
    _, traffic = io_kernels.standard_attention(q, k, v, block_q=block_q, block_k=64, count=True)
    return traffic.total_bytes()


@functools.lru_cache(maxsize=256)
def counted_flash(n: int, d: int, dtype: torch.dtype, block: int) -> int:
    """Bytes the reference FlashAttention forward kernel moves with BLOCK_Q = block, counted in the
    interpreter (bfloat16 is counted on float16 tensors: same size, and the interpreter's bf16 products are
    unreliable; values do not change a count)."""
    dtype = torch.float16 if dtype == torch.bfloat16 else dtype
    q, k, v = (torch.randn(1, n, d).to(dtype) for _ in range(3))
    out, lse = torch.empty_like(q), torch.empty(1, n)
    strides = [s for t in (q, k, v, out) for s in t.stride()]
    traffic = count_traffic(
        forward_kernel, (triton.cdiv(n, block), 1), q, k, v, out, lse, *strides, n, n, d**-0.5 * 1.4426950408889634,
        HEAD_DIM=d, BLOCK_Q=block, BLOCK_K=64, IS_CAUSAL=False, PRECISION=None,
    )  # fmt: skip
    return traffic.total_bytes()


def check_bytes(j: Judgement, prop: str, function: str, args: list, counted: int) -> None:
    what = f"{function}({', '.join(str(a) for a in args)})"
    with j.case(prop, what):
        got = number(j, j.call(CALL, function, *args).result, what)
        j.expect(
            got == counted,
            f"{what} = {got:,.0f} 字节，流量计数器在课程内核上测得 {counted:,} 字节",
            f"{what} = {got:,.0f} bytes; the traffic counter measures {counted:,} bytes on the course's kernels",
        )


@UNIT.cell("test_hbm_standard", {DEFAULT: 1, TILES: 1, LOW: 0.5}, selfcheck=DEFAULT)
def hbm_standard(j: Judgement) -> None:
    cases = [(DEFAULT, 100, 64, torch.float32, None)]  # the visible self-check's case
    cases += [(DEFAULT, j.rng.choice(SIZES), j.rng.choice([16, 32]), torch.float32, None)]
    cases += [(TILES, j.rng.choice(SIZES), 16, torch.float32, b) for b in (16, 32, 128)]
    cases += [
        (LOW, j.rng.choice(SIZES), 32, dtype, j.rng.choice([None, 32]))
        for dtype in (torch.float16, torch.bfloat16)
    ]
    for prop, n, d, dtype, block_q in cases:
        args = [n, d, name(dtype)] + ([] if block_q is None else [block_q])
        check_bytes(j, prop, "hbm_bytes_standard", args, counted_standard(n, d, dtype, block_q or 64))


@UNIT.cell("test_hbm_flash", {RULE: 1, BIG: 1, SMALL: 0.5}, selfcheck=RULE)
def hbm_flash(j: Judgement) -> None:
    cases = [(RULE, 100, 64, 100 * 1024, torch.float16)]  # the visible self-check's case (one tile)
    kib = j.rng.choice([48, 64, 100]) * 1024 + j.rng.randrange(1000)
    cases += [
        (RULE, j.rng.choice(SIZES[2:]), 64, kib, torch.float32)
    ]  # B = 32 or 64: several tiles and a tail
    kib = j.rng.choice([164, 228]) * 1024 + j.rng.randrange(1000)
    cases += [(RULE, j.rng.choice(SIZES), 32, kib, torch.bfloat16)]
    cases += [
        (BIG, j.rng.choice(SIZES[:3]), 16, j.rng.randrange(200_000, 300_000), torch.float32)
    ]  # one tile
    cases += [(BIG, j.rng.choice(SIZES[1:]), 16, j.rng.randrange(8_000, 20_000), torch.float16)]
    for prop, n, d, sram, dtype in cases:
        block = reference.flash_block_size(d, sram, dtype)
        check_bytes(j, prop, "hbm_bytes_flash", [n, d, sram, name(dtype)], counted_flash(n, d, dtype, block))
    for d, dtype in ((64, torch.float32), (128, torch.bfloat16)):
        sram = 16 * 4 * d * (4 if dtype == torch.float32 else 2) - j.rng.randrange(1, 64)
        what = f"hbm_bytes_flash(100, {d}, {sram}, {dtype})"
        with j.case(SMALL, what):
            expect_value_error(j, "hbm_bytes_flash", 100, d, sram, name(dtype), what=what)


def reference_softmax(s: torch.Tensor, scale: float, is_causal: bool) -> torch.Tensor:
    scores = s.double() * scale
    if is_causal:
        n_q, n_k = s.shape[-2:]
        scores = scores.masked_fill(
            torch.ones(n_q, n_k, dtype=torch.bool).tril().logical_not(), float("-inf")
        )
    return torch.softmax(scores, dim=-1)


SOFTMAX_TOLERANCE = {torch.float32: 1e-6, torch.float16: 2e-3, torch.bfloat16: 8e-3}


def check_softmax(j: Judgement, props: list[str], batch, n_q, n_k, dtype, is_causal) -> None:
    s = j.randn(batch, n_q, n_k) * 3
    s = s.to(dtype)
    scale = j.rng.uniform(0.1, 1.0)
    what = f"fused_scale_mask_softmax(S {batch}×{n_q}×{n_k} {str(dtype).removeprefix('torch.')}, is_causal={is_causal})"
    with SlowMemoryService(j.child.work, S=s, P=torch.full_like(s, float("nan"))) as memory:
        answer, failed = j.attempt(RUN, "fused_scale_mask_softmax", memory.address, scale, is_causal)
    out, (reads,), _, writes, stats = memory.result(["S"], "P")
    for prop in props:
        with j.case(prop, what):
            if failed is not None:
                raise failed
            if prop == TRAFFIC:
                check_traffic(j, reads, writes, stats, is_causal, what)
            elif prop == ON_CHIP:
                numel, shape = memory.fast_memory(answer.largest)
                j.expect(
                    numel <= MAX_ROWS_ON_CHIP * n_k,
                    f"{what} 在快速内存中有 {numel} 个元素的张量 {shape}，"
                    f"超过 {MAX_ROWS_ON_CHIP} 行（{MAX_ROWS_ON_CHIP * n_k} 个元素）",
                    f"{what} had a tensor of {numel} elements {shape} in fast memory, more than "
                    f"{MAX_ROWS_ON_CHIP} rows ({MAX_ROWS_ON_CHIP * n_k} elements)",
                )
            else:
                j.expect(out.dtype == dtype, f"{what}: P 应为 {dtype}", f"{what}: P should be {dtype}")
                tolerance = SOFTMAX_TOLERANCE[dtype]
                j.close(out, reference_softmax(s, scale, is_causal), f"{what}: P", atol=tolerance, rtol=0)


def check_traffic(j: Judgement, reads, writes, stats, is_causal: bool, what: str) -> None:
    n_q, n_k = reads.shape[-2:]
    visible = torch.ones(n_q, n_k, dtype=torch.bool)
    if is_causal:
        visible = visible.tril()
    most, fewest = int(reads.max()), int(writes.min())
    j.expect(
        int(writes.max()) == 1 and fewest == 1,
        f"{what}: P 的每个元素应恰好写一次，实际写了 {fewest}–{int(writes.max())} 次",
        f"{what}: each element of P should be written exactly once, counted {fewest}–{int(writes.max())} times",
    )
    j.expect(
        most <= 1,
        f"{what}: S 的一些元素被读了 {most} 次（融合后每个元素至多读一次）",
        f"{what}: some elements of S were read {most} times (fused, each is read at most once)",
    )
    unread = int((reads.eq(0) & visible.expand_as(reads)).sum())
    j.expect(
        unread == 0,
        f"{what}: S 中有 {unread} 个结果依赖的元素没有经慢速内存读取",
        f"{what}: {unread} elements of S that the result depends on were never read through slow memory",
    )
    extra = [(name, r, w) for name, r, w in stats if name not in ("S", "P") and (r or w)]
    j.expect(
        not extra,
        f"{what}: 中间结果经过慢速内存 {extra}（融合内核不写中间结果）",
        f"{what}: intermediates went through slow memory {extra} (a fused kernel writes none)",
    )


@UNIT.cell(
    "test_fused_softmax", {VALUES: 1, CAUSAL: 1, LOW_IN: 0.5, TRAFFIC: 1, ON_CHIP: 0.5}, selfcheck=VALUES
)
def fused_softmax(j: Judgement) -> None:
    check_softmax(j, [VALUES, TRAFFIC], 2, 70, 70, torch.float32, False)  # the visible self-check's case
    check_softmax(
        j,
        [VALUES, TRAFFIC, ON_CHIP],
        j.rng.randint(1, 2),
        j.odd(129, 260),
        j.odd(65, 200),
        torch.float32,
        False,
    )
    check_softmax(j, [CAUSAL, TRAFFIC], 2, j.odd(65, 200), j.odd(65, 200), torch.float32, True)
    check_softmax(j, [CAUSAL, ON_CHIP], 1, j.odd(129, 260), j.odd(17, 64), torch.float32, True)  # Nq > Nk
    check_softmax(j, [CAUSAL], 1, j.odd(17, 64), j.odd(129, 260), torch.float32, True)  # Nq < Nk
    for dtype in (torch.float16, torch.bfloat16):
        check_softmax(j, [LOW_IN], 2, j.odd(33, 100), j.odd(33, 100), dtype, j.rng.random() < 0.5)
