"""Unit 05 (recomputation): the hidden cases, tolerances and properties of each graded cell.

The exercises take modules, which the child cannot receive: the judge sends the layers' weights to the entry
points of `utils.judged.recompute` (imported by the preamble), which build the modules in the child and call
the student's function. The judge builds the same layers here and decides:

- `saved_bytes`: against the exact byte counts of `utils.recompute.STORAGE_LAYERS`, whose saved tensors are
  known (tests/test_unit05.py checks those counts against PyTorch).
- `checkpointed_forward`: against plain autograd run here with the same seed, on the same device as the child
  (the GPU on a GPU host: dropout masks come from that device's generator, so this process touches the GPU
  too): same output, same gradients (float32; the recomputation repeats the same operations, so the
  differences are rounding: atol 1e-5, rtol 1e-4), the same dropout masks, and the same random numbers drawn
  afterwards. Peak memory is measured in the child, plain autograd's and the student's in the same process
  with the same function (its residual risk: `utils.judged.recompute`); the bound is a ratio, so it holds for
  the GPU allocator and for the CPU's `utils.memory.LiveTensors` alike.
- `attention_backward_from_lse`: float32 against float64 autograd of the reference attention (tolerances as
  unit 06); bfloat16, float64, and an L and O that do not come from Q, K, V, against the formulas evaluated in
  float64 on the inputs given, tightly enough that a computation below float32 (or float64 in float32) fails.
"""

from __future__ import annotations

import torch

import utils
from course.judge.core import Judgement, Unit
from course.reference.recompute import attention_backward_from_lse as formulas
from utils import grading, recompute
from utils.judged.recompute import DRAWS
from utils.judged.student_module import LAYOUTS

UNIT = Unit(
    LAYOUTS["recomputation.ipynb"],
    banned=[
        "utils.grading:reference_attention",
        "utils.grading:reference_gradients",
        "utils.attention.naive:naive_attention",
        "utils:naive_attention",
    ],
)
ENTRY = "utils.judged.recompute."
GRAD_TOLERANCE = dict(atol=1e-5, rtol=1e-4)
MEMORY_RATIO = 0.6  # checkpointed peak / plain peak: 0.41–0.48 measured for the reference (8 or 4 segments)
AUTOGRAD_TOLERANCE = dict(atol=2e-4, rtol=1e-3)  # float32 against float64 autograd of the attention
# bfloat16 and float64 are compared with the formulas evaluated in float64 on the very inputs given, which a
# computation in at least float32 (float64 kept) matches but for its final rounding: a float32 computation
# rounded to bfloat16 stays within half a bfloat16 spacing (2⁻⁹), computing in bfloat16 was measured 1.7–5×
# above one spacing (2⁻⁸); float64 computed in float32 is ~1e-7 off.
FORMULA_TOLERANCE = {
    torch.float32: AUTOGRAD_TOLERANCE,
    torch.bfloat16: dict(atol=2**-8, rtol=2**-8),
    torch.float64: dict(atol=1e-9, rtol=1e-9),
}

BASIC = "输入与输出都算（LinearTanh，float32）· the input and the output count (LinearTanh, float32)"
ONCE = (
    "每个存储只算一次：同一张量存两次、同一存储的两个视图 · "
    "each storage once: a tensor saved twice, two views of one storage"
)
STATE = "不算参数与缓冲区；什么都不存时为 0 · parameters and buffers excluded; 0 when nothing is saved"
HALF = "bfloat16 激活（每个元素 2 字节）· bfloat16 activations (2 bytes per element)"

SAME = "与普通 autograd 相同的输出和梯度（x 与每个参数）· same output and gradients as plain autograd (x, every parameter)"
EDGES = (
    "段数 = 1、段数 = 层数、不能整除时各段长度至多相差 1 · "
    "one segment, one layer per segment, uneven splits into lengths differing by at most one"
)
NO_X_GRAD = (
    "x 不需要梯度时参数仍有梯度（可重入检查点的陷阱）· "
    "the parameters get gradients when x needs none (the reentrant pitfall)"
)
DROPOUT = "dropout：重计算用相同的掩码 · dropout: the recomputation uses the same masks"
RNG = (
    "之后的随机数与普通 autograd 相同（恢复随机数生成器）· "
    "the random numbers afterwards match plain autograd (the generator is restored)"
)

FOUR = f"24 层、4 段：峰值 ≤ {MEMORY_RATIO} × 普通 autograd · 24 layers, 4 segments: peak ≤ {MEMORY_RATIO} × plain autograd"
EIGHT = f"32 层、8 段：峰值 ≤ {MEMORY_RATIO} × 普通 autograd · 32 layers, 8 segments: peak ≤ {MEMORY_RATIO} × plain autograd"

ODD = "float32，奇数长度 · float32, odd sizes"
UNEQUAL = "Nq ≠ Nk（查询多于键、键多于查询）· Nq ≠ Nk (more queries than keys, more keys than queries)"
DTYPES = (
    "bfloat16 与 float64：至少用 float32 计算（float64 保持 float64），梯度保持输入的类型 · "
    "bfloat16 and float64: computed in at least float32 (float64 kept), gradients in the inputs' dtypes"
)
CONTRACT = (
    "使用给定的 L 与 O：P = exp(σQKᵀ − L)，Δ = rowsum(dO ∘ O) · "
    "uses the given L and O: P = exp(σQKᵀ − L), Δ = rowsum(dO ∘ O)"
)
SQUARE = "方形因果 · square, causal"
CAUSAL_UNEQUAL = "Nq ≠ Nk 的因果（左上角对齐）· causal with Nq ≠ Nk (top-left aligned)"
BF16_CAUSAL = "bfloat16 因果（至少用 float32 计算）· bfloat16, causal (computed in at least float32)"


def name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# --- saved_bytes -----------------------------------------------------------------------------------------


def check_storage(
    j: Judgement, prop: str, kind: str, rows: int, width_in: int, width_out: int, dtype, x_grad
):
    state = recompute.storage_state(kind, width_in, width_out, j.generator)
    x = j.randn(rows, width_in, dtype=dtype)
    what = f"saved_bytes({kind}({width_in}, {width_out}), x=({rows}, {width_in}) {name(dtype)}, requires_grad={x_grad})"
    with j.case(prop, what):
        got = j.call(ENTRY + "storage", "saved_bytes", kind, width_out, x_grad, x, *state).result
        elements = recompute.STORAGE_LAYERS[kind].activation_elements(rows, width_in, width_out, x_grad)
        expected = elements * x.element_size()
        j.expect(
            isinstance(got, int) and not isinstance(got, bool),
            f"{what} 应返回 int，得到 {got!r}",
            f"{what} should return an int, got {got!r}",
        )
        j.expect(got == expected, f"{what} = {got}，应为 {expected}", f"{what} = {got}, expected {expected}")


@UNIT.cell("test_saved_bytes", {BASIC: 1, ONCE: 1, STATE: 1, HALF: 0.5}, selfcheck=BASIC)
def saved_bytes(j: Judgement) -> None:
    check_storage(j, BASIC, "LinearTanh", 5, 8, 16, torch.float32, True)  # the visible self-check's case
    check_storage(j, BASIC, "LinearTanh", j.odd(9, 99), j.odd(3, 40), j.odd(3, 40), torch.float32, False)
    for kind in ("TwoLayerMLP", "Gated"):
        check_storage(j, ONCE, kind, j.odd(9, 99), j.odd(3, 40), j.odd(3, 40), torch.float32, True)
        check_storage(j, HALF, kind, j.odd(9, 99), j.odd(3, 40), j.odd(3, 40), torch.bfloat16, True)
    check_storage(j, STATE, "Scaled", j.odd(9, 99), j.odd(3, 40), 1, torch.float32, True)
    check_storage(j, STATE, "TanhOnly", j.odd(9, 99), j.odd(3, 40), 1, torch.float32, False)


# --- checkpointed_forward --------------------------------------------------------------------------------


def chain_params(j: Judgement, n: int, width: int) -> list[torch.Tensor]:
    """Weights scaled by 1/√width (Tanh stays away from saturation) and small biases."""
    return [t for _ in range(n) for t in (j.randn(width, width) * width**-0.5, j.randn(width) * 0.1)]


def plain_run(seed: int, p: float, x_grad: bool, x, grad, params):
    """What plain autograd gives here, on the child's device, after the same `torch.manual_seed(seed)`."""
    device = utils.device()
    layers = recompute.chain_from([t.to(device) for t in params], p)
    leaf = x.detach().to(device).clone().requires_grad_(x_grad)
    torch.manual_seed(seed)
    out, x_grad_value, grads = recompute.plain_step(layers, leaf, grad.to(device))
    return out, x_grad_value, grads, torch.rand(DRAWS, device=device)


def compare_gradients(j: Judgement, what: str, answer, reference, x_grad: bool) -> None:
    out, x_grad_value, grads = answer[:3]
    ref_out, ref_x_grad, ref_grads = reference[:3]
    j.close(out, ref_out.cpu().double(), f"{what}: output", **GRAD_TOLERANCE)
    if x_grad:
        j.close(x_grad_value, ref_x_grad.cpu().double(), f"{what}: x.grad", **GRAD_TOLERANCE)
    grads = grads if isinstance(grads, tuple) else ()
    j.expect(
        len(grads) == len(ref_grads) and all(g is not None for g in grads),
        f"{what}: 有参数没有得到梯度（None）",
        f"{what}: some parameters got no gradient (None)",
    )
    for index, (grad, ref) in enumerate(zip(grads, ref_grads, strict=True)):
        j.close(grad, ref.cpu().double(), f"{what}: grad of parameter {index}", **GRAD_TOLERANCE)


def check_checkpoint(j: Judgement, props, n, segments, p, container, x_grad, rows=None, width=None) -> None:
    rows, width = rows or j.odd(17, 64), width or j.odd(9, 33)
    params, x, grad = chain_params(j, n, width), j.randn(rows, width), j.randn(rows, width)
    seed = j.rng.randrange(2**31)
    what = f"checkpointed_forward({n} × Block({width}, p={p}) as {container}, x=({rows}, {width}), segments={segments}, x.requires_grad={x_grad})"
    reply, failure = j.attempt(
        ENTRY + "checkpoint_gradients",
        "checkpointed_forward",
        seed,
        segments,
        p,
        container,
        x_grad,
        x,
        grad,
        *params,
    )
    reference = plain_run(seed, p, x_grad, x, grad, params)
    for prop in props:
        with j.case(prop, what):
            if failure is not None:
                raise failure
            answer = reply.result
            if prop == EDGES:
                compare_gradients(j, what, answer, reference, x_grad)
                check_lengths(j, what, n, segments, answer[4])
            elif prop == RNG:
                draws = answer[3]
                j.expect(
                    isinstance(draws, torch.Tensor) and torch.equal(draws.cpu(), reference[3].cpu()),
                    f"{what}: 反向传播之后的随机数与普通 autograd 不同：重计算后要恢复随机数生成器的状态",
                    f"{what}: the random numbers drawn after backward differ from plain autograd's: restore "
                    "the generator's state after the recomputation",
                )
            else:
                compare_gradients(j, what, answer, reference, x_grad)


def check_lengths(j: Judgement, what: str, n: int, segments: int, recomputed) -> None:
    """The segments the backward pass's recomputation shows: `segments` of them, lengths at most one apart."""
    lengths = recompute.segment_lengths(n, list(recomputed))
    j.expect(
        lengths is not None,
        f"{what}: 反向传播重计算的层 {list(recomputed)} 不是逐段、从检查点开始各重计算一次",
        f"{what}: the layers run again in backward, {list(recomputed)}, are not each segment once from its checkpoint",
    )
    j.expect(
        len(lengths) == segments and max(lengths) - min(lengths) <= 1,
        f"{what}: 各段长度为 {lengths}：应为 {segments} 段，长度至多相差 1",
        f"{what}: the segment lengths are {lengths}: there should be {segments}, differing by at most one",
    )


@UNIT.cell(
    "test_checkpoint_gradients", {SAME: 1, EDGES: 0.5, NO_X_GRAD: 1, DROPOUT: 1, RNG: 0.5}, selfcheck=SAME
)
def checkpoint_gradients(j: Judgement) -> None:
    check_checkpoint(j, [SAME], 7, 3, 0.0, "list", True, rows=16, width=8)  # the visible self-check's case
    n = j.odd(7, 12)
    check_checkpoint(j, [SAME], n, j.rng.randint(2, n - 2), 0.0, "Sequential", True)
    n = j.odd(7, 12)
    # uneven splits with a remainder of at least two: all of it in the last segment (as checkpoint_sequential
    # does) or ⌈n / segments⌉ layers a segment then give lengths two apart, or fewer segments
    for segments in (1, n, j.rng.choice([s for s in range(2, n - 2) if n % s >= 2]), n - 2):
        check_checkpoint(j, [EDGES], n, segments, 0.0, "list", True)
    check_checkpoint(j, [NO_X_GRAD], j.odd(5, 10), 2, 0.0, "Sequential", False)
    check_checkpoint(j, [NO_X_GRAD, DROPOUT, RNG], j.odd(5, 10), 3, 0.25, "list", False)
    check_checkpoint(j, [DROPOUT, RNG], j.odd(7, 12), 3, 0.5, "Sequential", True)


def check_memory(j: Judgement, prop: str, n: int, segments: int) -> None:
    rows, width = j.odd(1801, 2200), 64
    params, x, grad = chain_params(j, n, width), j.randn(rows, width), j.randn(rows, width)
    what = f"checkpointed_forward({n} × Block({width}), x=({rows}, {width}), segments={segments}) forward+backward"
    with j.case(prop, what):
        answer = j.call(
            ENTRY + "checkpoint_memory", "checkpointed_forward", segments, x, grad, *params
        ).result
        reference = plain_run(0, 0.0, True, x, grad, params)
        compare_gradients(j, what, answer, reference, True)
        plain, peak = answer[3], answer[4]
        activation = rows * width * 4  # one Tanh output per layer is what plain autograd keeps
        j.expect(
            isinstance(plain, int)
            and isinstance(peak, int)
            and plain >= n * activation
            and peak >= activation,
            f"{what}: 测得的峰值不可信（普通 {plain}，你的 {peak} 字节）",
            f"{what}: the measured peaks are implausible (plain {plain}, yours {peak} bytes)",
        )
        j.expect(
            peak <= MEMORY_RATIO * plain,
            f"{what}: 峰值 {peak / 2**20:.2f} MiB，超过普通 autograd（{plain / 2**20:.2f} MiB）的 {MEMORY_RATIO} 倍",
            f"{what}: peak {peak / 2**20:.2f} MiB is above {MEMORY_RATIO} × plain autograd's {plain / 2**20:.2f} MiB",
        )


@UNIT.cell("test_checkpoint_memory", {FOUR: 1, EIGHT: 1}, selfcheck=FOUR)
def checkpoint_memory(j: Judgement) -> None:
    check_memory(j, FOUR, 24, 4)
    check_memory(j, EIGHT, 32, 8)


# --- attention_backward_from_lse -------------------------------------------------------------------------


def check_backward(j: Judgement, prop, batch, n_q, n_k, d, dtype, is_causal, contract=False) -> None:
    q, k, v = (j.randn(batch, n, d, dtype=dtype) for n in (n_q, n_k, n_k))
    d_out = j.randn(batch, n_q, d, dtype=dtype)
    out, lse = grading.reference_attention(q, k, v, is_causal=is_causal)
    out, lse = out.to(dtype), lse.float()
    if contract:  # an L and an O that do not come from Q, K, V: the formulas must use them as given
        lse = lse + torch.rand(lse.shape, generator=j.generator) * 2 - 1
        out = out + 0.1 * j.randn(*out.shape, dtype=dtype)
    what = f"attention_backward_from_lse(B={batch}, Nq={n_q}, Nk={n_k}, d={d}, {name(dtype)}, is_causal={is_causal})"
    with j.case(prop, what):
        grads = j.tensors(
            j.call("attention_backward_from_lse", q, k, v, out, lse, d_out, is_causal).result, 3, what
        )
        if contract or dtype != torch.float32:
            expected = formulas(*(t.double() for t in (q, k, v, out, lse, d_out)), is_causal)
            tolerance = FORMULA_TOLERANCE[dtype]
        else:
            expected = grading.reference_gradients(q, k, v, d_out, is_causal=is_causal)
            tolerance = AUTOGRAD_TOLERANCE
        for label, grad, ref, inp in zip(("dQ", "dK", "dV"), grads, expected, (q, k, v), strict=True):
            j.expect(
                grad.dtype == inp.dtype,
                f"{what}: {label} 应为 {inp.dtype}，得到 {grad.dtype}",
                f"{what}: {label} should be {inp.dtype}, got {grad.dtype}",
            )
            j.close(grad, ref, f"{what}: {label}", **tolerance)


@UNIT.cell("test_backward_lse", {ODD: 1, UNEQUAL: 1, DTYPES: 0.5, CONTRACT: 0.5}, selfcheck=ODD)
def backward_lse(j: Judgement) -> None:
    check_backward(j, ODD, 1, 37, 37, 16, torch.float32, False)  # the visible self-check's case
    n = j.odd(65, 200)
    check_backward(j, ODD, 2, n, n, 64, torch.float32, False)
    check_backward(j, UNEQUAL, 1, j.odd(17, 64), j.odd(129, 256), 32, torch.float32, False)
    check_backward(j, UNEQUAL, 3, j.odd(129, 256), j.odd(1, 16), 16, torch.float32, False)
    check_backward(j, DTYPES, 2, j.odd(65, 160), j.odd(65, 160), 64, torch.bfloat16, False)
    check_backward(j, DTYPES, 1, j.odd(17, 64), j.odd(17, 64), 32, torch.float64, False)
    check_backward(j, CONTRACT, 2, j.odd(17, 64), j.odd(17, 64), 16, torch.float32, False, contract=True)


@UNIT.cell("test_backward_lse_causal", {SQUARE: 1, CAUSAL_UNEQUAL: 1, BF16_CAUSAL: 0.5}, selfcheck=SQUARE)
def backward_lse_causal(j: Judgement) -> None:
    check_backward(j, SQUARE, 1, 37, 37, 16, torch.float32, True)  # the visible self-check's case
    n = j.odd(65, 200)
    check_backward(j, SQUARE, 2, n, n, 64, torch.float32, True)
    check_backward(j, CAUSAL_UNEQUAL, 1, j.odd(17, 64), j.odd(129, 256), 32, torch.float32, True)  # Nq < Nk
    check_backward(j, CAUSAL_UNEQUAL, 2, j.odd(129, 256), j.odd(17, 64), 16, torch.float32, True)  # Nq > Nk
    check_backward(j, BF16_CAUSAL, 2, j.odd(65, 160), j.odd(65, 160), 32, torch.bfloat16, True)
