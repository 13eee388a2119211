"""Unit 09 (the systems lab): the hidden cases, tolerances and properties of each graded cell.

The exercises take functions and modules, which the child cannot receive: the judge calls the entry points of
`utils.judged.systems` (imported by the preamble), which build the workload or the model in the child and
call the student's function; the answers come back as plain numbers and strings. The judge decides:

- `benchmark`: workloads whose durations the judge chose (`utils.timing.Workload`, sleeping): the median and
  the interquartile range of the timed calls (`method="inclusive"`: one case's other methods give a spread at
  least 12 ms wider; `reps == 1`: a spread of 0), at most 1 ms below (3 ms for the spread) and 25 % + 5 ms above
  (sleep never wakes early; on a busy machine it wakes late); durations skewed as real timings are, so a mean
  (or the whole loop timed once and divided) misses the median; the workload called exactly warmup + reps
  times; the first calls slow (a missing warm-up puts them in the median); an asynchronous device
  (`utils.timing.SimulatedDevice` on any machine; on a GPU also `torch.cuda._sleep`, against CUDA events
  measured here): without synchronisation the median is the launch time, microseconds instead of
  milliseconds; slow warm-up launches still queued when a single timed call starts: without a synchronisation
  before the clock starts, they are timed too (that call may wake late by half of them: it has no median).
  The workload and the simulated device are kept here (`course.judge.services.TimingService`): the child's
  calls, launches and synchronisations are requests the judge answers and counts, so the student's code can
  neither read the durations nor rewrite the counts. The expected median and quartiles are those of the calls
  as the judge timed them (from when the child sent each): the judge's own late wake-ups on a busy machine are
  not held against the student; the child's are not measurable here, so a case whose durations miss runs
  again, `ATTEMPTS` times in all (a wrong benchmark misses every time, a busy machine seldom twice).
- `autocast_dtypes`: the same model with the same weights run here by the reference on the child's device
  type (`utils.device()`); the tables must be equal, and the child reports the modules that still hold a
  forward hook afterwards (none may).
- `activation_memory_bytes`: saved-tensor hooks counted here on the CPU (`course.reference.systems_lab.
  measured_activation_bytes`); float32 exactly. 16-bit: exactly, with LayerNorm's mean and rstd in float32 (a
  GPU's kernel) or in the 16-bit dtype (the CPU's); large models against the reference formula, which the
  unit's tests check against that measurement.
"""

from __future__ import annotations

import statistics

import torch

import utils
from course.judge.core import Judgement, Unit
from course.judge.services import TimingService
from course.reference import systems_lab as reference
from utils import timing
from utils.judged.student_module import LAYOUTS
from utils.judged.systems import build_model, dtype_names
from utils.measure import timing_lock
from utils.toy_transformer import TransformerConfig

UNIT = Unit(
    LAYOUTS["systems_lab.ipynb"],
)
ENTRY = "utils.judged.systems."
# Sleep never undershoots; on a busy machine it oversleeps by milliseconds: a tight lower bound, a loose upper one.
BELOW, RELATIVE, ABOVE = 0.001, 0.25, 0.005  # seconds, share, seconds
SPREAD_BELOW = (
    0.003  # an oversleeping q1 narrows the spread; the std. deviation is still ≥ 3 ms below the IQR
)
MS = 1e-3
ATTEMPTS = 3  # runs of a timed case whose durations miss, before they count

MEDIAN = "中位数：同步的 CPU 工作负载 · the median: a synchronous CPU workload"
SPREAD = "离散程度：四分位距 q75 − q25 · the spread: the interquartile range q75 − q25"
WARMUP = "预热：恰好 warmup 次不计时的调用，慢的前几次不计入 · warm-up: exactly warmup untimed calls, the slow first calls left out"
SYNC = "同步：模拟的异步设备 · synchronisation: a simulated asynchronous device"
CUDA_SYNC = "同步：GPU 上的 torch.cuda._sleep · synchronisation: torch.cuda._sleep on a GPU"

TOY = "玩具模型（ToyModel），float16 · the toy model (ToyModel), float16"
BF16 = "玩具模型，bfloat16 · the toy model, bfloat16"
LEAVES = "其他模型：每个叶子模块（嵌套的、数字命名的）· other models: every leaf module (nested, numbered)"
LOSS = "损失与梯度 · the loss and the gradients"
HOOKS = "钩子：用完后全部移除 · hooks: every one removed afterwards"

F32 = "float32 的小模型，测量值 · small models in float32, as measured"
ODD = "奇数尺寸，seq_len < context_length · odd sizes, seq_len < context_length"
HALF = "bfloat16 与 float16 · bfloat16 and float16"
LARGE = "大模型（公式，而非测量）· large models (a formula, not a measurement)"


def close_to(got, expected: float, below: float = BELOW) -> bool:
    return isinstance(got, float) and expected - below <= got <= expected * (1 + RELATIVE) + ABOVE


def answer_pair(j: Judgement, what: str, answer) -> tuple[float, float]:
    j.expect(
        well_formed(answer),
        f"{what} 应返回 (median, spread) 两个秒数，得到 {answer!r}",
        f"{what} should return two numbers of seconds (median, spread), got {answer!r}",
    )
    return answer


def expect_seconds(j: Judgement, what: str, label: str, got: float, expected: float, below=BELOW) -> None:
    j.expect(
        close_to(got, expected, below),
        f"{what}: {label} = {got * 1e3:.3f} ms，应约为 {expected * 1e3:.3f} ms",
        f"{what}: {label} = {got * 1e3:.3f} ms, expected about {expected * 1e3:.3f} ms",
    )


def method_durations(j: Judgement) -> list[float]:
    """Nine durations whose interquartile range depends on the quantile method: "inclusive" gives x6 − x2 (the
    middle five, at most 6 ms apart), "exclusive" about ((x6 + x7) − (x1 + x2)) / 2, at least 12 ms wider."""
    low, high = j.rng.choice([3, 4, 5]) * MS, j.rng.choice([35, 40, 45]) * MS
    values = [low, low, *(j.rng.uniform(9, 15) * MS for _ in range(5)), high, high]
    j.rng.shuffle(values)
    return values


def timed_durations(j: Judgement, reps: int) -> list[float]:
    """Durations of the timed calls whose median and quartiles every quantile method agrees on, even when one
    call oversleeps: reps = 4k + 1 (k ≥ 2) values, the lowest k + 2 equal, the highest k + 2 equal, shuffled.
    Skewed as real timings are (a few slow calls far above the rest): the median is at most 2 ms above the
    lowest, the mean at least 3 ms beyond what the judge accepts for the median (a mean, or a whole loop timed
    once and divided, fails)."""
    k = (reps - 1) // 4
    low, high = j.rng.choice([4, 5, 6]) * MS, j.rng.choice([40, 45, 50]) * MS
    middle = sorted(j.rng.uniform(low, low + 2 * MS) for _ in range(reps - 2 * (k + 2)))
    values = [low] * (k + 2) + middle + [high] * (k + 2)
    j.rng.shuffle(values)
    return values


def timed_run(j: Judgement, warmup: int, durations: list[float], reps: int):
    """One run of the student's benchmark on a sleeping workload: (reply, failure, calls, the timed calls'
    seconds as slept here: a busy machine oversleeps; the chosen duration stands for a call that never came)."""
    with TimingService(j.child.work, workload=timing.Workload(durations)) as service:
        reply, failure = j.attempt(ENTRY + "benchmark_workload", "benchmark", service.address, warmup, reps)
    timed = (service.observed + durations[len(service.observed) :])[warmup : warmup + reps]
    return reply, failure, service.workload.calls, timed


def seconds_expected(prop: str, answer, timed: list[float]) -> list[tuple[str, float, float, float]]:
    """(label, got, expected, allowed below) of each duration `prop` checks in a (median, spread) answer."""
    median, spread = answer
    q1, _, q3 = statistics.quantiles(timed, n=4, method="inclusive") if len(timed) > 1 else (0.0, 0.0, 0.0)
    checks = []
    if prop in (MEDIAN, WARMUP):
        checks.append(("median", median, statistics.median(timed), BELOW))
    if prop in (SPREAD, WARMUP):  # slow warm-up calls among the timed ones widen the spread
        checks.append(("spread", spread, q3 - q1, SPREAD_BELOW))
    return checks


def until_on_time(run, on_time):
    """`run()`, again while `on_time` says its durations missed, ATTEMPTS runs in all: the last run."""
    for _ in range(ATTEMPTS):
        result = run()
        if on_time(result):
            break
    return result


def well_formed(answer) -> bool:
    return isinstance(answer, tuple) and len(answer) == 2 and all(isinstance(v, float) for v in answer)


def check_workload(j: Judgement, props, warmup: int, timed: list[float], first: float | None = None) -> None:
    """A sleeping workload: `warmup` calls (each `first` seconds if given, else like the timed ones), then the
    `timed` calls, whose median and quartiles are compared with those of the calls as the judge timed them. A
    run whose durations miss is run again (ATTEMPTS in all): a busy machine seldom wakes the child late twice,
    a wrong benchmark misses every time."""
    reps = len(timed)
    durations = [first] * warmup + timed if first is not None else (timed * warmup)[:warmup] + timed
    what = f"benchmark(workload, warmup={warmup}, reps={reps})"

    def on_time(run) -> bool:  # or not worth running again: the student's code failed or answered nonsense
        reply, failure, _, observed = run
        if failure is not None or not well_formed(reply.result):
            return True
        checks = [c for prop in props for c in seconds_expected(prop, reply.result, observed)]
        return all(close_to(got, expected, below) for _, got, expected, below in checks)

    reply, failure, calls, observed = until_on_time(lambda: timed_run(j, warmup, durations, reps), on_time)
    for prop in props:
        with j.case(prop, what):
            if failure is not None:
                raise failure
            answer = answer_pair(j, what, reply.result)
            for label, got, expected, below in seconds_expected(prop, answer, observed):
                expect_seconds(j, what, label, got, expected, below)
            if prop == WARMUP:
                j.expect(
                    calls == warmup + reps,
                    f"{what}: fn 被调用了 {calls} 次，应为 warmup + reps = {warmup + reps}",
                    f"{what}: fn was called {calls} times, expected warmup + reps = {warmup + reps}",
                )


def simulated_run(j: Judgement, durations: list[float], warmup: int, reps: int) -> tuple[object, int]:
    """(the student's answer, launches) of one run on a simulated asynchronous device whose launches take
    `durations` (`utils.timing.SimulatedDevice`)."""
    with TimingService(j.child.work, device=timing.SimulatedDevice(durations)) as service:
        answer = j.call(ENTRY + "benchmark_simulated", "benchmark", service.address, warmup, reps).result
    return answer, service.device.launches


def check_simulated(j: Judgement, warmup: int, reps: int, first: float | None = None) -> None:
    """A simulated asynchronous device: without synchronisation the median is the launch time. With `first`, the
    warm-up launches take `first` seconds each and are still queued when the one timed call is launched: a timer
    that does not synchronise before starting its clock times them too. That single call is allowed to wake late
    by up to half the queued warm-up (it has no median to absorb a late wake-up); the mistake adds all of it."""
    seconds = j.rng.choice([6, 8, 10]) * MS
    durations = [first] * warmup + [seconds] if first is not None else [seconds]
    queued = warmup * first if first is not None else 0.0

    def on_time(median) -> bool:
        return median <= seconds + queued / 2 if first is not None else close_to(median, seconds)

    launches_ms = "/".join(f"{s * 1e3:g}" for s in durations)
    what = f"benchmark(SimulatedDevice([{launches_ms}] ms).launch, warmup={warmup}, reps={reps})"
    with j.case(SYNC, what):
        answer, launches = until_on_time(
            lambda: simulated_run(j, durations, warmup, reps),
            lambda run: not well_formed(run[0]) or on_time(run[0][0]),
        )
        median, _ = answer_pair(j, what, answer)
        j.expect(
            launches == warmup + reps,
            f"{what}: 启动了 {launches} 次，应为 {warmup + reps}",
            f"{what}: {launches} launches, expected {warmup + reps}",
        )
        j.expect(
            median >= 0.5 * seconds,
            f"{what}: 中位数 {median * 1e3:.3f} ms 只是启动的时间：计时前后要调用 utils.timing.synchronize()",
            f"{what}: the median {median * 1e3:.3f} ms is the launch time: call utils.timing.synchronize() "
            "before starting and before reading the timer",
        )
        if first is None:
            expect_seconds(j, what, "median", median, seconds)
            return
        j.expect(
            on_time(median),
            f"{what}: 中位数 {median * 1e3:.3f} ms，应约为 {seconds * 1e3:g} ms：开始计时前没有同步，还在排队的预热工作"
            f"（{queued * 1e3:g} ms）也被计时了",
            f"{what}: median {median * 1e3:.3f} ms, expected about {seconds * 1e3:g} ms: without a synchronisation "
            f"before starting the timer, the warm-up work still queued ({queued * 1e3:g} ms) is timed too",
        )


def cuda_sleep_seconds(cycles: int) -> float:
    """The median seconds of one `torch.cuda._sleep(cycles)` on this GPU, measured here with CUDA events."""
    for _ in range(3):
        torch.cuda._sleep(cycles)
    samples = []
    for _ in range(9):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.cuda._sleep(cycles)
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end) / 1e3)
    return statistics.median(samples)


def check_cuda_sleep(j: Judgement) -> None:
    cycles = j.rng.choice([5, 10, 20]) * 1_000_000  # a few milliseconds at GPU clocks
    what = f"benchmark(lambda: torch.cuda._sleep({cycles}), warmup=3, reps=15)"
    with j.case(CUDA_SYNC, what):
        with timing_lock():  # no other grader times work on this GPU meanwhile
            answer = j.call(ENTRY + "benchmark_cuda_sleep", "benchmark", 3, 15, cycles).result
            events = cuda_sleep_seconds(cycles)
        median, _ = answer_pair(j, what, answer)
        j.expect(
            isinstance(events, float) and 0.7 * events <= median <= 1.5 * events + ABOVE,
            f"{what}: 中位数 {median * 1e3:.3f} ms，CUDA 事件测得 {events * 1e3:.3f} ms：GPU 是异步的，要同步",
            f"{what}: median {median * 1e3:.3f} ms, CUDA events measured {events * 1e3:.3f} ms: the GPU runs "
            "asynchronously, synchronise",
        )


@UNIT.cell(
    "test_benchmark",
    {MEDIAN: 1, SPREAD: 1, WARMUP: 1, SYNC: 1, CUDA_SYNC: 1},
    selfcheck=MEDIAN,
    gpu_only=frozenset({CUDA_SYNC}),
)
def benchmark(j: Judgement) -> None:
    check_workload(
        j, [MEDIAN, SPREAD], 2, method_durations(j), first=30 * MS
    )  # the visible self-check's case
    check_workload(j, [MEDIAN, SPREAD], 0, timed_durations(j, 13))
    check_workload(j, [MEDIAN, SPREAD], j.rng.choice([1, 2]), [j.rng.choice([5, 8]) * MS])  # reps == 1
    check_workload(j, [WARMUP], 5, timed_durations(j, 9), first=j.rng.choice([40, 60]) * MS)
    check_workload(j, [WARMUP], 7, timed_durations(j, 13), first=j.rng.choice([40, 60]) * MS)
    check_simulated(j, 2, 9)
    check_simulated(j, j.rng.choice([1, 3]), 9)
    # the visible self-check's case: slow warm-up launches still queued when the one timed call starts
    check_simulated(j, j.rng.choice([2, 3]), 1, first=j.rng.choice([30, 40]) * MS)
    if j.on_gpu:
        check_cuda_sleep(j)


# --- autocast_dtypes -------------------------------------------------------------------------------------


def check_autocast(j: Judgement, props, kind: str, sizes: list[int], dtype) -> None:
    device = utils.device()
    model = build_model(kind, sizes)
    if kind == "transformer":
        config = TransformerConfig(*sizes)
        batch, n = j.rng.randint(2, 3), j.rng.randint(3, config.context_length)
        x = torch.randint(config.vocab_size, (batch, n), generator=j.generator)
        y = torch.randint(config.vocab_size, (batch, n), generator=j.generator)
    else:
        x = j.randn(j.odd(3, 12), sizes[0])
        y = torch.randint(sizes[1], (x.shape[0],), generator=j.generator)
    state = [p.detach().clone() for p in model.parameters()]
    what = f"autocast_dtypes({kind}{tuple(sizes)}, x={tuple(x.shape)}, {dtype}) on {device.type}"
    reply, failure = j.attempt(ENTRY + "autocast_table", "autocast_dtypes", kind, sizes, dtype, x, y, *state)
    expected = dtype_names(reference.autocast_dtypes(model.to(device), x.to(device), y.to(device), dtype))
    for prop in [*props, HOOKS]:
        keys = (
            ["loss", "gradients"] if prop == LOSS else [k for k in expected if k not in ("loss", "gradients")]
        )
        with j.case(prop, what):
            if failure is not None:
                raise failure
            answer, hooked = reply.result
            if prop == HOOKS:
                j.expect(
                    not hooked,
                    f"{what}: 返回后这些模块上还留着前向钩子：{hooked}（用完要 remove()）",
                    f"{what}: forward hooks are left on these modules after it returned: {hooked} (remove() them)",
                )
                continue
            j.expect(
                isinstance(answer, dict),
                f"{what} 应返回 dict，得到 {answer!r}",
                f"{what} should return a dict, got {answer!r}",
            )
            missing = [k for k in keys if k not in answer]
            j.expect(not missing, f"{what}: 缺少键 {missing}", f"{what}: keys missing: {missing}")
            if prop != LOSS:
                extra = sorted(set(answer) - set(expected))
                j.expect(
                    not extra,
                    f"{what}: 多余的键 {extra}（只要叶子模块）",
                    f"{what}: unexpected keys {extra} (leaf modules only)",
                )
            wrong = {k: (answer[k], expected[k]) for k in keys if answer[k] != expected[k]}
            j.expect(
                not wrong,
                f"{what}: 这些 dtype 与评审程序运行模型时观察到的不同（你的，观察到的）：{wrong}",
                f"{what}: these dtypes differ from what the judge observes running the model (yours, observed): {wrong}",
            )


@UNIT.cell("test_autocast", {TOY: 1, BF16: 1, LEAVES: 1, LOSS: 1, HOOKS: 1}, selfcheck=TOY)
def autocast(j: Judgement) -> None:
    check_autocast(j, [TOY, LOSS], "toy", [10, 5, 10], torch.float16)
    check_autocast(j, [TOY, LOSS], "toy", [j.odd(3, 30), j.odd(3, 9), j.odd(3, 30)], torch.float16)
    check_autocast(j, [BF16, LOSS], "toy", [j.odd(3, 30), j.odd(3, 9), j.odd(3, 30)], torch.bfloat16)
    # the visible self-check's cases: toy float16, sequential bfloat16, residual float16
    for kind, dtype in (
        ("sequential", torch.float16),
        ("sequential", torch.bfloat16),
        ("residual", torch.float16),
    ):
        check_autocast(j, [LEAVES, LOSS], kind, [j.odd(3, 30), j.odd(3, 9), j.odd(3, 30)], dtype)
    config = [j.odd(17, 64), 16, 32, 2, 4, j.odd(33, 80)]
    check_autocast(j, [LEAVES, LOSS], "transformer", config, torch.bfloat16)


# --- activation_memory_bytes -----------------------------------------------------------------------------


def random_config(j: Judgement, context: int) -> TransformerConfig:
    heads = j.rng.choice([1, 3, 4, 6])
    return TransformerConfig(
        vocab_size=j.odd(17, 300),
        context_length=context,
        d_model=heads * j.rng.choice([4, 8, 12]),
        num_layers=j.rng.randint(1, 4),
        num_heads=heads,
        d_ff=j.odd(17, 200),
    )


def check_memory(j: Judgement, prop: str, config: TransformerConfig, batch: int, seq_len: int, dtype) -> None:
    what = f"activation_memory_bytes({config}, batch={batch}, seq_len={seq_len}, {dtype})"
    with j.case(prop, what):
        got = j.call(
            ENTRY + "activation_memory", "activation_memory_bytes", config.as_dict(), batch, seq_len, dtype
        ).result
        if prop == LARGE:  # the reference formula: LayerNorm statistics in float32 (a GPU)
            expected = reference.activation_memory_bytes(config, batch, seq_len, dtype)
        else:  # measured here, on the CPU: LayerNorm statistics in the activations' dtype
            expected = reference.measured_activation_bytes(
                config, batch, seq_len, dtype, generator=j.generator
            )
        accepted = {expected}
        if dtype in (
            torch.float16,
            torch.bfloat16,
        ):  # the other device's LayerNorm statistics: 2 bytes each more/less
            shift = reference.layer_norm_statistics(config, batch, seq_len) * 2
            accepted.add(expected - shift if prop == LARGE else expected + shift)
        j.expect(
            isinstance(got, int) and not isinstance(got, bool),
            f"{what} 应返回 int，得到 {got!r}",
            f"{what} should return an int, got {got!r}",
        )
        j.expect(
            got in accepted,
            f"{what} = {got}，应为 {expected}（相差 {got - expected:+d} 字节）",
            f"{what} = {got}, expected {expected} ({got - expected:+d} bytes off)",
        )


@UNIT.cell("test_activation_memory", {F32: 1, ODD: 1, HALF: 1, LARGE: 1}, selfcheck=F32)
def activation_memory(j: Judgement) -> None:
    config = TransformerConfig(
        vocab_size=100, context_length=32, d_model=32, num_layers=2, num_heads=4, d_ff=64
    )
    check_memory(j, F32, config, 2, 32, torch.float32)  # the visible self-check's case
    check_memory(j, F32, random_config(j, 32), j.rng.randint(1, 4), 32, torch.float32)
    context = j.odd(17, 64)
    check_memory(j, ODD, random_config(j, context), j.odd(1, 6), j.odd(3, context - 2), torch.float32)
    context = j.odd(17, 64)
    check_memory(j, HALF, random_config(j, context), j.odd(1, 4), j.odd(3, context), torch.bfloat16)
    check_memory(j, HALF, random_config(j, context), j.odd(1, 4), j.odd(3, context), torch.float16)
    gpt2_xl = TransformerConfig(50257, 1024, 1600, 48, 25, 6400)
    check_memory(j, LARGE, gpt2_xl, j.rng.randint(1, 16), j.rng.choice([512, 1023, 1024]), torch.float32)
    check_memory(j, LARGE, gpt2_xl, j.rng.randint(1, 16), 1024, torch.bfloat16)
