"""Unit 03 (tiling): the hidden cases, tolerances and properties of each graded cell.

- `tiled_matmul` runs in the child on the judge's slow memory (`course.judge.services.SlowMemoryService`, C shaped
  m×n): A, B and C stay in the judge's process, which counts every element read and written, and decides here: values
  against float64 (float32 inputs, float32 accumulation: rtol 1e-5, atol 1e-4 for |C| up to ~40; float16
  inputs: within one float16 ulp of the float64 product plus 2^-16·(|A| |B|) for float32 accumulation
  rounding, which float32 accumulation with one rounding at the end meets and float16 partial products miss), traffic equal to the formula of its tile sizes
  (each element of A read exactly ⌈n/block_n⌉ times, of B exactly ⌈m/block_m⌉ times, of C written once and
  never read, nothing else in slow memory), and the largest tensor in fast memory (one tile): the largest tile one
  access moved, or the largest tensor its code created (watched in the child, as in unit 02).
- `matmul_hbm_loads` is compared with counted loads: the traffic counter on the course's Triton kernel
  (`utils.tiling.blocked_matmul`, power-of-two tiles) or the slow-memory wrapper on the reference tiled
  matmul (any tile sizes), both run here in the judge's process.
- `best_tile` is compared with the reference rule (course.reference.tiling.best_tile) on budgets drawn at
  random, at the exact byte count of a tile and one byte below it, on budgets with ties, and too small.
"""

from __future__ import annotations

import functools
import math

import torch

from course.judge.core import Judgement, Unit
from course.judge.services import WATCH_SWITCHES, SlowMemoryService
from course.reference import tiling as reference
from utils import tiling
from utils.judged.student_module import LAYOUTS
from utils.traffic import SlowMemory

UNIT = Unit(
    LAYOUTS["tiling.ipynb"],
    banned=[
        "utils.traffic:count_traffic",
        "utils.traffic.triton_counter:count_traffic",
        "utils.tiling:blocked_matmul",
        "utils.tiling:three_pass_attention",
    ],
    suspicious=WATCH_SWITCHES,
)
RUN = "utils.judged.slow_memory.run"
CALL = "utils.judged.slow_memory.call"
DTYPES = (torch.float16, torch.bfloat16, torch.float32)

VALUES = "float32 的值：奇数尺寸、余数块 · float32 values: odd sizes, remainder tiles"
HALF = "float16 的值：误差不超过一个 ulp · float16 values: within one ulp"
TRAFFIC = "流量等于公式：A 读 ⌈n/Bn⌉ 次，B 读 ⌈m/Bm⌉ 次，C 写一次 · traffic equals the formula"
ON_CHIP = "快速内存中只有一个块 · one tile at a time in fast memory"
DIVIDES = "块整除尺寸 · tiles divide the sizes"
REMAINDER = "余数块（奇数尺寸）· remainder tiles (odd sizes)"
SHAPES = "m ≠ n、Bm ≠ Bn、块大于矩阵 · m ≠ n, Bm ≠ Bn, tiles larger than the matrix"
GPU = "GPU 的 SRAM 大小 · GPU-sized budgets"
RANDOM = "随机预算、d 与 dtype · random budgets, d and dtypes"
BOUNDARY = "恰好放下与差一个字节 · exactly fitting and one byte short"
TIE = "面积相同取较大的 Bq · equal areas: the larger Bq"
NONE = "放不下 (16, 16) 时返回 None · None when (16, 16) does not fit"


def check_matmul(j: Judgement, props: list[str], m, n, k, blocks, dtype) -> None:
    a, b = j.randn(m, k, dtype=dtype), j.randn(k, n, dtype=dtype)
    block_m, block_n, block_k = blocks
    what = f"tiled_matmul(A {m}×{k}, B {k}×{n} {str(dtype).removeprefix('torch.')}, {block_m}, {block_n}, {block_k})"
    c = torch.full((m, n), float("nan"), dtype=dtype)
    with SlowMemoryService(j.child.work, A=a, B=b, C=c) as memory:
        answer, failed = j.attempt(RUN, "tiled_matmul", memory.address, block_m, block_n, block_k)
    c, (reads_a, reads_b), reads_c, writes_c, stats = memory.result(["A", "B"], "C")
    for prop in props:
        with j.case(prop, what):
            if failed is not None:
                raise failed
            if prop == TRAFFIC:
                check_traffic(j, (m, n, k), blocks, reads_a, reads_b, reads_c, writes_c, stats, what)
            elif prop == ON_CHIP:
                limit = max(block_m * block_k, block_k * block_n, block_m * block_n)
                numel, shape = memory.fast_memory(answer.largest)
                j.expect(
                    numel <= limit,
                    f"{what} 在快速内存中有 {numel} 个元素的张量 {shape}，大于一个块（{limit} 个元素）",
                    f"{what} had a tensor of {numel} elements {shape} in fast memory, more than one tile "
                    f"({limit} elements)",
                )
            else:  # compared on the CPU, where slow memory lives
                c, a_cpu, b_cpu = c.cpu(), a.cpu(), b.cpu()
                expected = a_cpu.double() @ b_cpu.double()
                j.expect(c.dtype == dtype, f"{what}: C 应为 {dtype}", f"{what}: C should be {dtype}")
                if dtype == torch.float32:
                    j.close(c, expected, f"{what}: C", atol=1e-4, rtol=1e-5)
                else:
                    error = (c.double() - expected).abs()
                    over = (error > tiling.float16_matmul_tolerance(a_cpu, b_cpu)) | c.isnan()
                    j.expect(
                        not bool(over.any()),
                        f"{what}: {int(over.sum())} 个元素与 float64 结果相差超过一个 float16 ulp（最大误差 "
                        f"{float(error.nan_to_num(float('inf')).max()):.3g}）：要在 float32 中累加，最后只舍入一次",
                        f"{what}: {int(over.sum())} elements differ from the float64 product by more than one "
                        f"float16 ulp (largest error {float(error.nan_to_num(float('inf')).max()):.3g}): accumulate "
                        "in float32 and round once at the end",
                    )


def check_traffic(j: Judgement, sizes, blocks, reads_a, reads_b, reads_c, writes_c, stats, what: str) -> None:
    (m, n, _), (block_m, block_n, _) = sizes, blocks
    for name, reads, times in (
        ("A", reads_a, math.ceil(n / block_n)),
        ("B", reads_b, math.ceil(m / block_m)),
    ):
        low, high = int(reads.min()), int(reads.max())
        j.expect(
            low == high == times,
            f"{what}: {name} 的元素被读了 {low}–{high} 次，按块大小应恰好 {times} 次",
            f"{what}: elements of {name} were read {low}–{high} times; for these tiles exactly {times} times",
        )
    j.expect(
        int(writes_c.min()) == int(writes_c.max()) == 1 and int(reads_c.max()) == 0,
        f"{what}: C 的元素写了 {int(writes_c.min())}–{int(writes_c.max())} 次、读了至多 {int(reads_c.max())} 次"
        "（应各写一次、不读：在快速内存中累加）",
        f"{what}: elements of C were written {int(writes_c.min())}–{int(writes_c.max())} times and read up to "
        f"{int(reads_c.max())} times (each should be written once and never read: accumulate in fast memory)",
    )
    extra = [(name, r, w) for name, r, w in stats if name not in ("A", "B", "C") and (r or w)]
    j.expect(
        not extra,
        f"{what}: 中间结果经过慢速内存 {extra}",
        f"{what}: intermediates went through slow memory {extra}",
    )


def blocks_for(j: Judgement, m: int, n: int, k: int) -> tuple[int, int, int]:
    """Tile sizes that leave a remainder in every dimension (sizes are odd; tiles at least 2)."""
    return tuple(j.rng.choice([b for b in range(4, 40) if size % b]) for size in (m, n, k))


@UNIT.cell("test_tiled_matmul", {VALUES: 1, HALF: 0.5, TRAFFIC: 1, ON_CHIP: 0.5}, selfcheck=VALUES)
def tiled_matmul(j: Judgement) -> None:
    check_matmul(
        j, [VALUES, TRAFFIC], 50, 30, 70, (16, 16, 32), torch.float32
    )  # the visible self-check's case
    m, n, k = j.odd(41, 90), j.odd(41, 90), j.odd(41, 90)
    check_matmul(j, [VALUES, TRAFFIC, ON_CHIP], m, n, k, blocks_for(j, m, n, k), torch.float32)
    m, n, k = j.odd(9, 30), j.odd(41, 70), j.odd(5, 15)
    check_matmul(
        j, [VALUES, TRAFFIC, ON_CHIP], m, n, k, (j.rng.choice([32, 64]), j.odd(5, 13), 16), torch.float32
    )
    m, n, k = j.odd(41, 90), j.odd(41, 90), j.odd(101, 160)
    check_matmul(j, [HALF, TRAFFIC], m, n, k, blocks_for(j, m, n, k), torch.float16)


@functools.lru_cache(maxsize=256)
def counted_loads(m: int, n: int, k: int, block_m: int, block_n: int, block_k: int) -> tuple[int, int]:
    """Elements of A and B loaded, counted here: the Triton counter on the course's kernel for power-of-two
    tiles of at least 16, else the slow-memory wrapper on the reference tiled matmul (values do not matter)."""
    a, b = torch.randn(m, k), torch.randn(k, n)
    if all(x >= 16 and not x & (x - 1) for x in (block_m, block_n, block_k)):
        _, traffic = tiling.blocked_matmul(a, b, block_m, block_n, block_k, count=True)
        return traffic.read_bytes("A") // 4, traffic.read_bytes("B") // 4
    mem = SlowMemory(A=a, B=b, C=torch.empty(m, n))
    reference.tiled_matmul(mem, block_m, block_n, block_k)
    stats = mem.stats()
    return stats["A"]["read_elements"], stats["B"]["read_elements"]


def check_loads(j: Judgement, prop: str, args: tuple[int, ...]) -> None:
    what = f"matmul_hbm_loads{args}"
    with j.case(prop, what):
        got = j.call(CALL, "matmul_hbm_loads", *args).result
        expected = counted_loads(*args)
        j.expect(
            isinstance(got, tuple | list)
            and len(got) == 2
            and all(isinstance(x, int) and not isinstance(x, bool) for x in got)
            and tuple(got) == expected,
            f"{what} = {got!r}，计数器数出 A、B 的读取元素数为 {expected}（两个 int）",
            f"{what} = {got!r}; the counter counts {expected} elements of A and B loaded (two ints)",
        )


@UNIT.cell("test_matmul_loads", {DIVIDES: 1, REMAINDER: 1, SHAPES: 1}, selfcheck=DIVIDES)
def matmul_loads(j: Judgement) -> None:
    check_loads(j, DIVIDES, (64, 64, 64, 32, 32, 32))  # the visible self-check's case
    t = j.rng.choice([16, 32])
    check_loads(j, DIVIDES, (4 * t, 2 * t, 3 * t, t, t, j.rng.choice([16, 32, 64])))
    check_loads(j, REMAINDER, (j.odd(33, 99), j.odd(33, 99), j.odd(33, 99), 16, 32, 16))
    m, n, k = j.odd(21, 70), j.odd(21, 70), j.odd(21, 70)
    check_loads(j, REMAINDER, (m, n, k, *blocks_for(j, m, n, k)))
    check_loads(j, SHAPES, (j.odd(65, 99), j.odd(17, 31), j.odd(33, 63), 16, 64, 32))
    check_loads(j, SHAPES, (j.odd(3, 15), j.odd(3, 15), j.odd(3, 15), 16, 32, 64))
    m, n = j.odd(40, 80), j.odd(5, 20)
    check_loads(j, SHAPES, (m, n, j.odd(5, 40), j.rng.choice([7, 9, 11]), j.rng.choice([3, 5]), 4))


def check_tile(j: Judgement, prop: str, sram: int, d: int, dtype: torch.dtype) -> None:
    what = f"best_tile({sram}, {d}, {dtype})"
    with j.case(prop, what):
        got = j.call(CALL, "best_tile", sram, d, str(dtype)).result
        expected = reference.best_tile(sram, d, dtype)
        got = tuple(got) if isinstance(got, list | tuple) else got
        hint = ""
        if isinstance(got, tuple) and len(got) == 2 and all(isinstance(x, int) for x in got):
            need = reference.on_chip_bytes(*got, d, dtype)
            hint = f"；(Bq, Bk) = {got} 在片上需要 {need} 字节 / (Bq, Bk) = {got} needs {need} bytes on chip"
        ints = not isinstance(got, tuple) or all(isinstance(x, int) and not isinstance(x, bool) for x in got)
        j.expect(
            got == expected and ints,
            f"{what} = {got!r}，应为 {expected!r}" + hint.split(" / ")[0],
            f"{what} = {got!r}, expected {expected!r}" + (", " + hint.split(" / ")[1] if hint else ""),
        )


def fitting(sram: int, d: int, dtype: torch.dtype) -> list[tuple[int, int]]:
    """Every power-of-two (Bq, Bk) ≥ 16 that fits."""
    sizes = [2**p for p in range(4, 16)]
    return [(q, k) for q in sizes for k in sizes if reference.on_chip_bytes(q, k, d, dtype) <= sram]


def is_tie(sram: int, d: int, dtype: torch.dtype) -> bool:
    tiles = fitting(sram, d, dtype)
    area = max((q * k for q, k in tiles), default=0)
    return sum(q * k == area for q, k in tiles) > 1


@UNIT.cell("test_best_tile", {GPU: 1, RANDOM: 1, BOUNDARY: 1, TIE: 1, NONE: 0.5}, selfcheck=GPU)
def best_tile(j: Judgement) -> None:
    check_tile(j, GPU, 228 * 1024, 64, torch.float16)  # the visible self-check's cases
    check_tile(j, GPU, 100 * 1024, 128, torch.float32)
    check_tile(j, GPU, j.rng.choice([48, 164, 192, 228]) * 1024, j.rng.choice([64, 128]), torch.bfloat16)
    for _ in range(4):
        check_tile(
            j,
            RANDOM,
            j.rng.randrange(8_000, 300_000),
            j.rng.choice([16, 32, 64, 128, 256]),
            j.rng.choice(DTYPES),
        )
    for _ in range(2):
        block_q, block_k = 2 ** j.rng.randrange(4, 8), 2 ** j.rng.randrange(4, 8)
        d, dtype = j.rng.choice([32, 64, 128]), j.rng.choice(DTYPES)
        exact = reference.on_chip_bytes(block_q, block_k, d, dtype)
        check_tile(j, BOUNDARY, exact, d, dtype)
        check_tile(j, BOUNDARY, exact - 1, d, dtype)
    ties = 0
    while ties < 3:
        sram, d, dtype = (
            j.rng.randrange(20_000, 300_000),
            j.rng.choice([16, 32, 64, 128]),
            j.rng.choice(DTYPES),
        )
        if is_tie(sram, d, dtype):
            check_tile(j, TIE, sram, d, dtype)
            ties += 1
    d, dtype = j.rng.choice([64, 128, 256]), j.rng.choice(DTYPES)
    check_tile(j, NONE, reference.on_chip_bytes(16, 16, d, dtype) - j.rng.randrange(1, 2000), d, dtype)
