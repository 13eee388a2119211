"""Unit 01 (the memory bottleneck): the hidden cases, tolerances and properties of each graded cell.

`standard_attention` is compared with float64 references (`utils.checks.memory.check_standard_attention`,
tolerances there): odd N, 2-D to 4-D inputs, Nq ≠ Nk, causal top-left, float16 and bfloat16.

`attention_memory_bytes` only computes. The judge measures, here in its own process, the peak of the step
the model describes (`utils.memory.attention_step`): on the CPU by counting live tensors, which is exact, so
the model must agree within 2 % (n ≥ 2·d); on a GPU also with the CUDA allocator, within 10 % (it also sees
kernels' scratch buffers and rounds allocations). The model's device="cuda" rule (one more float32 N×N in
training, nothing else) is checked on any machine against its own device="cpu" answer. A call that creates a tensor of more than
`MAX_ELEMENTS` elements is measuring, not modelling: that case fails.

`max_sequence_length` is judged against the student's own model: N fits, N + 1 does not. Each call has 20 s
(a binary search needs milliseconds), so a one-by-one scan fails the memories where N reaches 10⁷–10⁸.
"""

from __future__ import annotations

import torch

from course.judge.core import Judgement, Unit
from utils import measure, memory
from utils.checks import memory as memory_checks
from utils.checks.memory import dtype_name
from utils.judged.student_module import LAYOUTS

UNIT = Unit(
    LAYOUTS["memory_bottleneck.ipynb"],
    banned=[
        "utils.grading:reference_attention",
        "utils.grading:reference_gradients",
        "utils.attention.naive:naive_attention",
        "utils:naive_attention",
        "utils.memory:LiveTensors",
        "utils.memory:peak_bytes",
        "utils.memory:attention_step",
        "utils.memory:trace",
        "utils.measure:peak_memory_bytes",
    ],
)
MODEL_TOLERANCE = 0.02  # relative, against the counted live tensors (exact for a correct model)
CUDA_TOLERANCE = 0.10  # relative, against torch.cuda.max_memory_allocated
MAX_ELEMENTS = 4096  # a model computes numbers; a larger tensor means it measured

ODD = "float32，奇数 N，任意批维度 (…, N, d) · float32, odd N, any batch shape (…, N, d)"
UNEQUAL = "Nq ≠ Nk（键多于、少于查询）· Nq ≠ Nk (more and fewer keys than queries)"
CAUSAL = "因果掩码左上角对齐（Nq = Nk、Nq < Nk、Nq > Nk）· causal mask, top-left (Nq = Nk, Nq < Nk, Nq > Nk)"
HALF = "float16 与 bfloat16：S、P、O 为输入的 dtype · float16 and bfloat16: S, P, O in the input dtype"

INFER32 = "推理，float32 · inference, float32"
INFER16 = "推理，float16 与 bfloat16（float32 的 softmax）· inference, float16 and bfloat16 (float32 softmax)"
TRAIN = (
    "训练：前向 + 反向（autograd 保存的张量与梯度）· training: forward + backward (saved tensors, gradients)"
)
ON_CUDA = "GPU：与 CUDA 分配器的峰值相差不超过 10% · GPU: within 10 % of the CUDA allocator's peak"
DEVICES = (
    "device='cuda'：训练多一个 float32 的 N×N 临时缓冲区，推理相同（任何机器上都检查）"
    " · device='cuda': one more float32 N×N in training, the same in inference (checked on any machine)"
)

FITS = (
    "你的模型下能放下的最大 N：N 放得下，N + 1 放不下 · the largest N your model fits: N fits, N + 1 does not"
)
EDGES = "边界：内存恰好等于峰值；连 N = 1 都放不下时返回 0 · edges: memory exactly a peak; 0 when not even N = 1 fits"
LARGE = "很快：内存很大、N 达上亿时也不逐个试 · fast: no one-by-one scan, even when N reaches 10⁸"


@UNIT.cell("test_standard_attention", {ODD: 1, UNEQUAL: 1, CAUSAL: 1, HALF: 1}, selfcheck=ODD)
def standard_attention(j: Judgement) -> None:
    cases = [(ODD, (1,), 70, 70, 16, torch.float32, False)]  # the visible self-check's case
    cases += [(ODD, (), j.odd(33, 90), None, 32, torch.float32, False)]  # 2-D (N, d) inputs
    cases += [(ODD, (2, 3), j.odd(65, 160), None, 64, torch.float32, False)]
    cases += [(UNEQUAL, (2,), j.odd(17, 64), j.odd(65, 160), 32, torch.float32, False)]
    cases += [(UNEQUAL, (3,), j.odd(65, 160), j.odd(1, 16), 16, torch.float32, False)]
    n = j.odd(33, 120)
    cases += [(CAUSAL, (2,), n, n, 16, torch.float32, True)]
    cases += [(CAUSAL, (1, 2), j.odd(17, 64), j.odd(65, 160), 32, torch.float32, True)]
    cases += [(CAUSAL, (2,), j.odd(65, 160), j.odd(17, 64), 16, torch.float32, True)]
    for dtype in (torch.float16, torch.bfloat16):
        cases += [(HALF, (2,), j.odd(33, 120), j.odd(33, 120), 64, dtype, j.rng.random() < 0.5)]
    for prop, lead, n_q, n_k, d, dtype, is_causal in cases:
        n_k = n_q if n_k is None else n_k
        q, k, v = (j.randn(*lead, length, d, dtype=dtype) for length in (n_q, n_k, n_k))
        what = f"standard_attention(Q {tuple(q.shape)}, K {tuple(k.shape)}, {dtype_name(dtype)}, is_causal={is_causal})"
        with j.case(prop, what):
            results = j.tensors(j.call("standard_attention", q, k, v, is_causal).result, 3, what)
            memory_checks.check_standard_attention(results, q, k, v, is_causal, what)


def computed_total(j: Judgement, answer, what: str) -> float:
    """The total of a breakdown the student's code computed, refusing one that was measured."""
    largest = answer.largest.get("numel", 0)
    j.expect(
        largest <= MAX_ELEMENTS,
        f"{what} 创建了 {largest} 个元素的张量：模型应当计算，而不是测量",
        f"{what} created a tensor of {largest} elements: a model computes, it does not measure",
    )
    return memory_checks.breakdown_total(answer.result, what)


def check_model(j: Judgement, prop: str, batch, heads, n, d, dtype, training) -> None:
    what = (
        f"attention_memory_bytes({batch}, {heads}, {n}, {d}, {dtype_name(dtype)}, training={training}, 'cpu')"
    )
    with j.case(prop, what):
        predicted = computed_total(
            j, j.call("attention_memory_bytes", batch, heads, n, d, dtype, training, "cpu"), what
        )
        measured = memory.peak_bytes(memory.attention_step(batch, heads, n, d, dtype, training, device="cpu"))
        memory_checks.expect_near(predicted, measured, MODEL_TOLERANCE, what)


@UNIT.cell(
    "test_memory_model",
    {INFER32: 1, INFER16: 1, TRAIN: 1.5, DEVICES: 0.5, ON_CUDA: 0.5},
    selfcheck=INFER32,
    gpu_only=frozenset({ON_CUDA}),
)
def memory_model(j: Judgement) -> None:
    def shape() -> tuple[int, int, int, int]:
        d = j.rng.choice([16, 32, 64])
        return j.rng.randint(1, 3), j.rng.randint(1, 4), j.odd(2 * d + 1, 6 * d), d

    check_model(j, INFER32, 1, 2, 256, 32, torch.float32, False)  # the visible self-check's case
    check_model(j, INFER32, *shape(), torch.float32, False)
    for dtype in (torch.float16, torch.bfloat16):
        check_model(j, INFER16, *shape(), dtype, False)
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        check_model(j, TRAIN, *shape(), dtype, True)
    batch, heads, n, d = shape()
    dtype = j.rng.choice([torch.float32, torch.float16, torch.bfloat16])
    what = f"attention_memory_bytes({batch}, {heads}, {n}, {d}, {dtype_name(dtype)}, …)"
    with j.case(DEVICES, what):

        def total(training: bool, device: str) -> float:
            answer = j.call("attention_memory_bytes", batch, heads, n, d, dtype, training, device)
            return computed_total(j, answer, what)

        memory_checks.check_devices(total, batch, heads, n, what)
    if not j.on_gpu:
        return
    measure.peak_memory_bytes(memory.attention_step(1, 1, 256, 64, torch.float32, True, "cuda"))  # warm-up
    for dtype, training in ((torch.bfloat16, True), (torch.float32, True), (torch.bfloat16, False)):
        batch, heads, n = j.rng.randint(1, 2), j.rng.randint(1, 2), j.odd(4097, 4500)
        what = f"attention_memory_bytes({batch}, {heads}, {n}, 64, {dtype_name(dtype)}, training={training}, 'cuda')"
        with j.case(ON_CUDA, what):
            answer = j.call("attention_memory_bytes", batch, heads, n, 64, dtype, training, "cuda")
            predicted = computed_total(j, answer, what)
            step = memory.attention_step(batch, heads, n, 64, dtype, training, device="cuda")
            memory_checks.expect_near(predicted, measure.peak_memory_bytes(step), CUDA_TOLERANCE, what)


def check_fits(j: Judgement, prop: str, memory_bytes, config: tuple, expected: int | None = None) -> None:
    """max_sequence_length(memory_bytes, *config) is the largest N the student's own model fits.

    `memory_bytes` may be a function of a total-bytes function (a budget taken from the student's model)."""
    batch, heads, d, dtype, training, device = config

    def total(n: int) -> float:
        answer = j.call("attention_memory_bytes", batch, heads, n, d, dtype, training, device)
        return computed_total(j, answer, f"attention_memory_bytes(n={n})")

    with j.case(
        prop, f"max_sequence_length(…, {batch}, {heads}, {d}, {dtype_name(dtype)}, {training}, {device!r})"
    ):
        budget = memory_bytes(total) if callable(memory_bytes) else memory_bytes
        what = f"max_sequence_length({budget:.0f}, {batch}, {heads}, {d}, {dtype_name(dtype)}, {training}, {device!r})"
        n = j.call("max_sequence_length", budget, *config).result
        memory_checks.check_longest(n, budget, total, what)
        j.expect(expected is None or n == expected, f"{what} 应为 {expected}", f"{what} should be {expected}")


@UNIT.cell("test_max_sequence_length", {FITS: 2, EDGES: 1, LARGE: 1}, selfcheck=FITS, timeout=20.0)
def max_sequence(j: Judgement) -> None:
    def config(training: bool, device: str = "cuda") -> tuple:
        dtype = j.rng.choice([torch.float32, torch.float16, torch.bfloat16])
        return j.rng.randint(1, 8), j.rng.randint(1, 16), j.rng.choice([16, 64, 128]), dtype, training, device

    check_fits(j, FITS, 10**9, (1, 1, 64, torch.float32, False, "cpu"))  # the visible self-check's case
    for training, device in ((False, "cuda"), (True, "cpu"), (True, "cuda")):
        check_fits(j, FITS, j.rng.randrange(2**24, 2**36), config(training, device))
    n = j.odd(1001, 3000)
    check_fits(j, EDGES, lambda total: total(n), config(True), expected=n)  # exactly the peak at n
    check_fits(j, EDGES, 1, config(False), expected=0)  # one byte: not even N = 1 fits
    for memory_bytes in (80 * 2**30, 2**50, 2**56):  # N up to ~10⁸: a one-by-one scan runs out of time
        check_fits(
            j, LARGE, memory_bytes, (1, 1, 64, j.rng.choice([torch.float32, torch.bfloat16]), True, "cuda")
        )
        if not j.passed(LARGE):
            break  # one failure decides the property; a scan would time out again
