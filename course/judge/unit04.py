"""Unit 04 (online softmax): the hidden cases, tolerances and properties of each graded cell.

References are float64, computed here from the very inputs sent to the child (fp16/bf16 inputs are
compared with the float64 softmax of their rounded values). Convention of the course for a row whose scores
are all −∞ (nothing visible): softmax 0, output 0, state (m, ℓ) = (−∞, 0), L = −∞; never NaN.

- `online_softmax` and `online_softmax_weighted_sum` run in the child on the judge's `utils.sweeps.CountedTensor`
  (the unit-02 slow-memory tensor that also orders the reads), kept in the judge's process as units 02–03's slow
  memory is (`course.judge.services.SweepService`: the child only asks for reads). The judge counts each
  element's reads, the numbers of its first and second reads and the width of every read, and decides here: the
  softmax reads every element exactly twice, the first sweep (m and ℓ together) over a row finished before
  the normalising sweep starts, at most `block_size` columns per read; the weighted sum reads every score
  exactly once, in reads of at most `block_size` columns, and creates no tensor as large as a whole row of
  scores per query (the child's largest-tensor watch).
- The merges are judged on states built here from generated blocks of scores (Hypothesis, `@seed` from
  the cell's seed, generation phase only: fresh per student, identical for a regrade) and batched into a few
  child calls: each result is compared with the exact state of the union of the blocks, computed in float64
  from the scores. Empty blocks and blocks of −∞ give the empty state, which must be the identity.

Tolerances: softmax values float32 1e-6 absolute + 1e-5 relative; float64 1e-12 + 1e-10 (float64 statistics:
float32 ones miss by ~1e-7); float16/bfloat16 outputs carry their own rounding (2⁻¹¹, 2⁻⁹ relative: rtol 2e-3,
8e-3). States keep the arguments' dtype (float32, and float64 for one batch of pairs): m 1e-6 relative (it is a
maximum, exact in float32), ℓ 1e-5 relative (+1e-6 absolute), o within 1e-6 + 1e-5·Σ e^{s−m}|v| (its terms may
cancel; float32 rounds each). Weighted sum: O float32 1e-5 + 1e-4 relative, float64 1e-10, float16 3e-3, bfloat16
2e-2 (rounded outputs); L 1e-4 absolute + 1e-6 relative for every dtype (float32 statistics: a running sum kept in
float16 or bfloat16 misses it by far more). Scores of ±1e4: O also within what one float32 rounding of each score
moves its weights by (`rounding_allowance`: scaling the scores, as base-2 exponentials do, shifts an exponent by up
to an ulp, 2⁻¹⁰ at 1e4·log₂e, which moves O by up to 2·ln 2·ulp·max|v|); an overflow gives inf or NaN.
"""

from __future__ import annotations

import math

import torch
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

from course.judge.core import Judgement, Unit, describe
from course.judge.services import WATCH_SWITCHES, SweepService
from utils.checks.guarded import UNWRITTEN
from utils.judged.student_module import LAYOUTS
from utils.sweeps import sweeps_in_order

UNIT = Unit(
    LAYOUTS["online_softmax.ipynb"],
    banned=["utils.softmax_kernels:row_softmax", "utils.online_softmax_plots:steps"],
    suspicious=WATCH_SWITCHES,
)
RUN = "utils.judged.sweeps.run"
INF = math.inf
LOW = (torch.float16, torch.bfloat16)
SOFTMAX_TOLERANCE = {  # (atol, rtol): float64 inputs need float64 statistics, float32 ones miss by ~1e-7
    torch.float64: (1e-12, 1e-10),
    torch.float32: (1e-6, 1e-5),
    torch.float16: (1e-6, 2e-3),
    torch.bfloat16: (1e-6, 8e-3),
}
OUTPUT_TOLERANCE = {
    torch.float64: dict(atol=1e-10, rtol=1e-10),
    torch.float32: dict(atol=1e-5, rtol=1e-4),
    torch.float16: dict(atol=3e-3, rtol=3e-3),
    torch.bfloat16: dict(atol=2e-2, rtol=2e-2),
}

VALUES = "float32 的值，奇数长度 · float32 values, odd sizes"
EXTREME = "极端数值（±1e4）不溢出 · extreme magnitudes (±1e4) do not overflow"
MASKED = "整行 −∞ 得 0；开头几块全是 −∞ · rows of −∞ give 0; leading blocks of −∞"
LOW_IN = (
    "float16、bfloat16 输入用 float32 统计量，float64 输入用 float64 · float16, bfloat16 inputs with float32 "
    "statistics, float64 inputs with float64"
)
SWEEPS = (
    "两遍：每个元素恰好读两次，先求 (m, ℓ) 再归一化，每次至多 block_size 列 · two sweeps: every element read "
    "exactly twice, (m, ℓ) before normalising, at most block_size columns per read"
)
EXACT = "与并集的 float64 状态一致（含 ±1e4）· equals the float64 state of the union (±1e4 included)"
LAWS = "结合律与交换律（hypothesis）· associative and commutative (hypothesis)"
EMPTY = "空状态 (−∞, 0) 是单位元，不产生 NaN · the empty state (−∞, 0) is the identity, no NaN"
ORDER = (
    "任意块顺序：顺序合并与树形合并一致（hypothesis）· any block order: sequential and tree merges agree "
    "(hypothesis)"
)
FULLY_MASKED = "全被遮住的行：O = 0，L = −∞ · fully masked rows: O = 0, L = −∞"
LOW_WS = (
    "float16、bfloat16、float64 输入：O 为 values 的类型，L 为 float32 · float16, bfloat16, float64 inputs: O in "
    "the values' dtype, L float32"
)
ONE_PASS = (
    "一遍：每个分数恰好读一次，每次至多 block_size 列，不把整行分数放进快速内存 · one pass: every score read "
    "exactly once, at most block_size columns per read, no whole rows of scores in fast memory"
)


def name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# --- float64 references ------------------------------------------------------------------------------------


def softmax64(x: torch.Tensor) -> torch.Tensor:
    """softmax over the last dim in float64; rows of −∞ give 0 (the course's convention)."""
    return torch.softmax(x.double(), dim=-1).nan_to_num(0.0)


def state64(scores: list[float], values: torch.Tensor | None = None):
    """(m, ℓ[, o]) of one block of scores in float64 (o unscaled, Σ e^{s−m} v); empty: (−∞, 0[, 0])."""
    s = torch.tensor(scores, dtype=torch.float64)
    m = float(s.max()) if s.numel() else -INF
    p = torch.exp(s - (0.0 if m == -INF else m))
    if values is None:
        return m, float(p.sum())
    return m, float(p.sum()), p @ values.double()


# --- checks -------------------------------------------------------------------------------------------------


def close_with_infinities(
    j: Judgement, got, expected: torch.Tensor, what: str, atol: float, rtol: float
) -> None:
    """`got` close to `expected`, with −∞ exactly where `expected` has it and no NaN anywhere."""
    j.expect(
        isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(expected.shape),
        f"{what} 应为形状 {tuple(expected.shape)} 的张量，得到 {describe(got)}",
        f"{what} should be a tensor of shape {tuple(expected.shape)}, got {describe(got)}",
    )
    got = got.detach().double()
    nan = int(got.isnan().sum())
    j.expect(nan == 0, f"{what} 有 {nan} 个 NaN", f"{what} has {nan} NaN(s)")
    empty = torch.isneginf(expected)
    wrong = int((torch.isneginf(got) != empty).sum())
    j.expect(
        wrong == 0,
        f"{what}: {wrong} 个元素应为 −∞ 而不是，或不应为 −∞ 却是（空状态的 m 与 L 为 −∞）",
        f"{what}: {wrong} element(s) are −∞ where they should not be or vice versa (the empty state has m = L = −∞)",
    )
    j.close(got[~empty], expected[~empty], what, atol=atol, rtol=rtol)


def check_reads(j: Judgement, reads, first, second, widths, block: int, times: int, what: str) -> None:
    """Every element read `times` times, in reads of at most `block` columns; two sweeps in order per row."""
    low, high = int(reads.min()), int(reads.max())
    j.expect(
        low == high == times,
        f"{what}: 元素被读了 {low}–{high} 次，应恰好 {times} 次",
        f"{what}: elements were read {low}–{high} times, expected exactly {times}",
    )
    widest = int(widths.max()) if widths.numel() else 0
    j.expect(
        widest <= block,
        f"{what}: 有一次读取跨了 {widest} 列，超过 block_size = {block}",
        f"{what}: one read spanned {widest} columns, more than block_size = {block}",
    )
    if times == 2:
        j.expect(
            bool(sweeps_in_order(first, second).all()),
            f"{what}: 有的行在第一遍读完之前就开始了第二遍（先在一遍中求出 m 和 ℓ，再归一化）",
            f"{what}: some row was read a second time before its first sweep ended (find m and ℓ in one sweep, "
            "then normalise)",
        )


def softmax_case(j: Judgement, props: list[str], x: torch.Tensor, block: int) -> None:
    what = f"online_softmax(x {tuple(x.shape)} {name(x.dtype)}, block_size={block})"
    with SweepService(j.child.work, x) as counted:
        answer, failure = j.attempt(RUN, "online_softmax", counted.address, block)
    reads, first, second, widths = counted.result()
    for prop in props:
        with j.case(prop, what):
            if failure is not None:
                raise failure
            out = answer.result
            if prop == SWEEPS:
                check_reads(j, reads, first, second, widths, block, 2, what)
                continue
            j.expect(
                isinstance(out, torch.Tensor) and out.dtype == x.dtype,
                f"{what}: 输出应为 {x.dtype}，得到 {describe(out)}",
                f"{what}: the output should be {x.dtype}, got {describe(out)}",
            )
            atol, rtol = SOFTMAX_TOLERANCE[x.dtype]
            j.close(out, softmax64(x), what, atol=atol, rtol=rtol)


@UNIT.cell(
    "test_online_softmax",
    {VALUES: 1, EXTREME: 1, MASKED: 1, LOW_IN: 1, SWEEPS: 1},
    selfcheck=VALUES,
)
def online_softmax(j: Judgement) -> None:
    softmax_case(j, [VALUES, SWEEPS], j.randn(3, 201) * 3, 32)  # the visible self-check's case
    softmax_case(j, [VALUES, SWEEPS], j.randn(2, j.odd(3, 9), j.odd(301, 601)) * 2, j.rng.choice([16, 64]))
    softmax_case(j, [VALUES], j.randn(j.odd(3, 9), j.odd(3, 15)), 16)  # one partial block
    extreme = (torch.rand(5, j.odd(201, 401), generator=j.generator) * 2 - 1) * 1e4
    extreme[1], extreme[2] = 1e4, -1e4  # ℓ = n exactly; every score −1e4
    softmax_case(j, [EXTREME, SWEEPS], extreme, 32)
    n = j.odd(201, 401)
    masked = j.randn(6, n) * 3
    masked[0] = -INF
    masked[1, : j.rng.randrange(65, n - 3)] = -INF  # leading blocks entirely −∞
    masked[3, 0::2] = -INF
    masked[5] = -INF
    softmax_case(j, [MASKED, SWEEPS], masked, 32)
    for dtype in LOW:
        softmax_case(j, [LOW_IN], (j.randn(4, j.odd(1501, 2501)) * 0.5).to(dtype), 128)
    softmax_case(j, [LOW_IN], j.randn(2, 3, j.odd(101, 201), dtype=torch.float64) * 3, 16)


# --- the merges ---------------------------------------------------------------------------------------------

FINITE = st.floats(-1e4, 1e4, allow_nan=False, width=32).filter(
    lambda v: v != UNWRITTEN
)  # not the fill value
SCORE = st.one_of(FINITE, FINITE, FINITE, st.just(-INF))
BLOCK = st.tuples(st.lists(SCORE, max_size=5), FINITE).map(lambda t: [*t[0], t[1]])  # at least one finite
EMPTY_BLOCK = st.one_of(st.just([]), st.lists(st.just(-INF), min_size=1, max_size=4))


def generated(j: Judgement, strategy, count: int) -> list:
    """Up to `count` examples of `strategy`, drawn by Hypothesis from the cell's seed (no shrinking)."""
    found = []

    @seed(j.seed)
    @settings(
        max_examples=count,
        database=None,
        derandomize=False,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(example) -> None:
        found.append(example)

    collect()
    return found


class States:
    """Blocks of scores turned into float32 states stacked along the leading dims, with their float64 truth."""

    def __init__(self, j: Judgement, blocks: list, d: int | None):
        self.d = d
        self.values = [[j.randn(len(b), d) if d else None for b in row] for row in blocks]
        parts = [
            [state64(b, v) for b, v in zip(row, vals, strict=True)]
            for row, vals in zip(blocks, self.values, strict=True)
        ]
        self.m = torch.tensor([[p[0] for p in row] for row in parts], dtype=torch.float32)
        self.l = torch.tensor([[p[1] for p in row] for row in parts], dtype=torch.float32)
        self.o = torch.stack([torch.stack([p[2] for p in row]) for row in parts]).float() if d else None
        self.blocks = blocks

    def at(self, index) -> tuple:
        """The state(s) at `index` of the (examples, blocks) grid: (m, ℓ) or (o, m, ℓ)."""
        if self.d:
            return self.o[index], self.m[index], self.l[index]
        return self.m[index], self.l[index]

    def union(self, columns) -> tuple[torch.Tensor, ...]:
        """The float64 state of the union of the blocks in `columns`, for every example."""
        rows = []
        for row, vals in zip(self.blocks, self.values, strict=True):
            scores = [s for c in columns for s in row[c]]
            values = torch.cat([vals[c] for c in columns]) if self.d else None
            rows.append(state64(scores, values))
        m = torch.tensor([r[0] for r in rows], dtype=torch.float64)
        ell = torch.tensor([r[1] for r in rows], dtype=torch.float64)
        return (torch.stack([r[2] for r in rows]), m, ell) if self.d else (m, ell)

    def magnitude(self, columns) -> torch.Tensor:
        """Σ e^{s−m} |v| over the union (the size of the terms o sums, which may cancel), for every example."""
        rows = []
        for row, vals in zip(self.blocks, self.values, strict=True):
            values = torch.cat([vals[c] for c in columns]).abs()
            rows.append(state64([s for c in columns for s in row[c]], values)[2])
        return torch.stack(rows)


def merged(j: Judgement, target: str, first: tuple, second: tuple, what: str) -> tuple:
    count = 3 if len(first) == 3 else 2
    return j.tensors(j.call(target, *first, *second).result, count, what)


def compare_state(
    j: Judgement, got: tuple, states: States, columns, what: str, dtype: torch.dtype = torch.float32
) -> None:
    """The merged state against the float64 state of the union of `columns`, in the arguments' `dtype`. o's error
    is bounded relative to Σ e^{s−m}|v|, the size of the terms it sums (they may cancel; float32 rounds each)."""
    expected = states.union(columns)
    labels = ("o", "m", "ℓ") if len(expected) == 3 else ("m", "ℓ")
    for label, g, e in zip(labels, got, expected, strict=True):
        j.expect(
            isinstance(g, torch.Tensor)
            and tuple(g.shape) == tuple(e.shape)
            and g.dtype == dtype
            and not bool(g.isnan().any()),
            f"{what}: {label} 应为形状 {tuple(e.shape)}、dtype {dtype} 且没有 NaN 的张量，得到 {describe(g)}",
            f"{what}: {label} should be a {dtype} tensor of shape {tuple(e.shape)} without NaN, got {describe(g)}",
        )
        if label == "m":
            close_with_infinities(j, g, e, f"{what}: m", atol=0.0, rtol=1e-6)
        elif label == "ℓ":
            j.close(g, e, f"{what}: ℓ", atol=1e-6, rtol=1e-5)
        else:
            error = (g.double() - e).abs()
            bound = 1e-6 + 1e-5 * states.magnitude(columns)
            j.expect(
                bool((error <= bound).all()),
                f"{what}: o 与 float64 参考不符：最大超出 {float((error - bound).max()):.2g}（容差 1e-6 + 1e-5·Σe^(s−m)|v|）",
                f"{what}: o does not match the float64 reference: exceeds the bound by up to "
                f"{float((error - bound).max()):.2g} (tolerance 1e-6 + 1e-5·Σe^(s−m)|v|)",
            )


def judge_merges(j: Judgement, target: str, d: int | None) -> None:
    # Visible self-check's kind of case, then random pairs: a ⊕ b against the union of a and b.
    pairs = States(j, generated(j, st.lists(BLOCK, min_size=2, max_size=2), 40), d)
    with j.case(EXACT, f"{target}(a, b): {len(pairs.blocks)} generated pairs"):
        compare_state(
            j,
            merged(j, target, pairs.at((slice(None), 0)), pairs.at((slice(None), 1)), target),
            pairs,
            [0, 1],
            f"{target}(a, b)",
        )
    with j.case(EXACT, f"{target}(a, b) in float64: {len(pairs.blocks)} generated pairs"):
        first, second = (tuple(t.double() for t in pairs.at((slice(None), i))) for i in (0, 1))
        what = f"{target}(a, b) float64"
        compare_state(j, merged(j, target, first, second, what), pairs, [0, 1], what, torch.float64)
    triples = States(j, generated(j, st.lists(BLOCK, min_size=3, max_size=3), 40), d)
    with j.case(LAWS, f"{target}: {len(triples.blocks)} generated triples"):
        a, b, c = (triples.at((slice(None), i)) for i in range(3))
        ab = merged(j, target, a, b, f"{target}(a, b)")
        compare_state(j, merged(j, target, b, a, f"{target}(b, a)"), triples, [0, 1], f"{target}(b, a)")
        compare_state(j, merged(j, target, ab, c, "(a ⊕ b) ⊕ c"), triples, [0, 1, 2], "(a ⊕ b) ⊕ c")
        bc = merged(j, target, b, c, f"{target}(b, c)")
        compare_state(j, merged(j, target, a, bc, "a ⊕ (b ⊕ c)"), triples, [0, 1, 2], "a ⊕ (b ⊕ c)")
    with_empty = States(j, generated(j, st.tuples(BLOCK, EMPTY_BLOCK, EMPTY_BLOCK).map(list), 30), d)
    with j.case(EMPTY, f"{target}: {len(with_empty.blocks)} generated states with empty ones"):
        a, e1, e2 = (with_empty.at((slice(None), i)) for i in range(3))
        compare_state(j, merged(j, target, e1, a, "empty ⊕ a"), with_empty, [0], "empty ⊕ a")
        compare_state(j, merged(j, target, a, e2, "a ⊕ empty"), with_empty, [0], "a ⊕ empty")
        compare_state(j, merged(j, target, e1, e2, "empty ⊕ empty"), with_empty, [1, 2], "empty ⊕ empty")
    k = j.rng.randrange(3, 9)
    many = States(j, generated(j, st.lists(BLOCK, min_size=k, max_size=k), 25), d)
    order = j.rng.sample(range(k), k)
    with j.case(ORDER, f"{target}: {len(many.blocks)} generated rows of {k} blocks, order {order}"):
        every = range(k)
        state = many.at((slice(None), order[0]))
        for index in order[1:]:
            state = merged(j, target, state, many.at((slice(None), index)), "sequential")
        compare_state(j, state, many, every, f"sequential merge in the order {order}")
        level = many.at((slice(None), slice(None)))  # (examples, k) states: merge neighbours level by level
        while level[-1].shape[-1] > 1:
            width = level[-1].shape[-1]
            even = tuple(t[:, 0 : width - 1 : 2] for t in level)
            odd = tuple(t[:, 1:width:2] for t in level)
            pairs_merged = merged(j, target, even, odd, "tree level")
            if width % 2:
                pairs_merged = tuple(
                    torch.cat([p, t[:, width - 1 : width]], dim=1)
                    for p, t in zip(pairs_merged, level, strict=True)
                )
            level = pairs_merged
        compare_state(j, tuple(t[:, 0] for t in level), many, every, "tree merge")


@UNIT.cell("test_merge_states", {EXACT: 1, LAWS: 1, EMPTY: 1, ORDER: 1}, selfcheck=EXACT)
def merge_states(j: Judgement) -> None:
    judge_merges(j, "merge_softmax_states", None)


@UNIT.cell("test_merge_attention", {EXACT: 1, LAWS: 1, EMPTY: 1, ORDER: 1}, selfcheck=EXACT)
def merge_attention(j: Judgement) -> None:
    judge_merges(j, "merge_attention_states", j.rng.choice([1, 3, 8]))


# --- the weighted sum ---------------------------------------------------------------------------------------


def weighted_sum64(scores: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return softmax64(scores) @ values.double(), torch.logsumexp(scores.double(), dim=-1)


def rounding_allowance(scores: torch.Tensor, values: torch.Tensor) -> float:
    """How far O may move when each float32 score is rounded once more after scaling by log₂e (at most an ulp of
    the largest scaled score on every exponent difference): 2·ln 2·ulp·max|v|."""
    largest = float(scores[scores.isfinite()].abs().max()) * math.log2(math.e)
    ulp = 2.0 ** (math.floor(math.log2(largest)) - 23) if largest > 0 else 0.0
    return 2 * math.log(2) * ulp * float(values.abs().max())


def weighted_case(
    j: Judgement, props: list[str], scores: torch.Tensor, values: torch.Tensor, block: int
) -> None:
    what = (
        f"online_softmax_weighted_sum(scores {tuple(scores.shape)}, values {tuple(values.shape)} "
        f"{name(values.dtype)}, block_size={block})"
    )
    with SweepService(j.child.work, scores) as counted:
        answer, failure = j.attempt(RUN, "online_softmax_weighted_sum", counted.address, values, block)
    reads, first, second, widths = counted.result()
    expected_out, expected_lse = weighted_sum64(scores, values)
    for prop in props:
        with j.case(prop, what):
            if failure is not None:
                raise failure
            if prop == ONE_PASS:
                check_reads(j, reads, first, second, widths, block, 1, what)
                rows, d = math.prod(scores.shape[:-1]), values.shape[-1]
                bound = max(values.numel(), rows * max(block, d))
                largest = int(answer.largest.get("numel", 0))
                j.expect(
                    largest <= bound,
                    f"{what}: 创建了 {largest} 个元素的张量 {tuple(answer.largest.get('shape', ()))}，"
                    f"超过 {bound}（整行分数放在了快速内存里）",
                    f"{what}: created a tensor of {largest} elements {tuple(answer.largest.get('shape', ()))}, "
                    f"more than {bound} (whole rows of scores in fast memory)",
                )
                continue
            out, lse = j.tensors(answer.result, 2, what)
            j.expect(
                out.dtype == values.dtype and lse.dtype == torch.float32,
                f"{what}: O 应为 {values.dtype}、L 应为 float32，得到 {out.dtype}、{lse.dtype}",
                f"{what}: O should be {values.dtype} and L float32, got {out.dtype} and {lse.dtype}",
            )
            tolerance = dict(OUTPUT_TOLERANCE[values.dtype])
            if prop == EXTREME:
                tolerance["atol"] += rounding_allowance(scores, values)
            j.close(out, expected_out, f"{what}: O", **tolerance)
            close_with_infinities(j, lse, expected_lse, f"{what}: L", atol=1e-4, rtol=1e-6)


@UNIT.cell(
    "test_weighted_sum",
    {VALUES: 1, EXTREME: 1, FULLY_MASKED: 1, LOW_WS: 1, ONE_PASS: 1},
    selfcheck=VALUES,
)
def weighted_sum(j: Judgement) -> None:
    weighted_case(j, [VALUES, ONE_PASS], j.randn(2, 37, 101) * 2, j.randn(2, 101, 16), 32)  # the self-check's
    n_q, n_k = j.odd(41, 61), j.odd(301, 401)
    weighted_case(j, [VALUES, ONE_PASS], j.randn(2, n_q, n_k) * 2, j.randn(2, n_k, 8), j.rng.choice([16, 32]))
    n_k = j.odd(3, 15)
    weighted_case(j, [VALUES], j.randn(j.odd(3, 9), n_k), j.randn(n_k, 5), 16)  # one partial block, no batch
    n_k = j.odd(201, 301)
    extreme = (torch.rand(1, 9, n_k, generator=j.generator) * 2 - 1) * 1e4
    extreme[0, 1], extreme[0, 2] = 1e4, -1e4
    weighted_case(j, [EXTREME, ONE_PASS], extreme, j.randn(1, n_k, 8), 32)
    n_q, n_k = j.odd(9, 21), j.odd(101, 201)
    masked = j.randn(2, n_q, n_k) * 2
    masked[0, 0] = -INF
    masked[1, 3] = -INF
    masked[0, 1, : j.rng.randrange(40, n_k - 3)] = -INF  # leading blocks entirely −∞
    causal = torch.ones(n_q, n_k, dtype=torch.bool).tril(-4).logical_not()  # rows 0–3 see nothing
    masked[1] = masked[1].masked_fill(causal, -INF)
    weighted_case(j, [FULLY_MASKED, ONE_PASS], masked, j.randn(2, n_k, 8), 32)
    for dtype in LOW:
        n_k = j.odd(1501, 2501)
        weighted_case(
            j, [LOW_WS], (j.randn(2, 5, n_k) * 0.5).to(dtype), j.randn(2, n_k, 16, dtype=dtype), 128
        )
    n_k = j.odd(101, 201)
    f64 = torch.float64
    weighted_case(j, [LOW_WS], j.randn(2, 7, n_k, dtype=f64) * 2, j.randn(2, n_k, 8, dtype=f64), 16)
