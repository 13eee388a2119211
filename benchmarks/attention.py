"""The attention benchmark suite: check every implementation against a float64 reference, then time it.

Speed grid (FlashAttention paper): B·N = `tokens` and H·d = `hidden`, so every N does the same
amount of work per token. A point is timed only after its output (and, for forward+backward, its
gradients) matched the reference; otherwise it is recorded as "wrong" and never reported as fast.
Memory sweep: forward+backward peak memory of one head (B = H = 1) as N doubles, until out of memory.

Statuses: ok, wrong (mismatch, NaN or Inf), oom, unavailable (the backend cannot run here, or the
implementation is deliberately not run at that size), error (anything else; the message is kept).
"""

from __future__ import annotations

import dataclasses
import gc
import json
import math
import platform
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import torch
import triton
import triton.testing
from tqdm import tqdm

import utils
from benchmarks.implementations import IMPLEMENTATIONS, Implementation, Unavailable, call
from utils.attention.validate import SUPPORTED_HEAD_DIMS
from utils.grading import random_qkv, reference_attention, reference_gradients
from utils.measure import attention_flops, peak_memory_bytes, time_ms

MODES = ("fwd", "fwd_bwd")
STATUSES = ("ok", "wrong", "oom", "unavailable", "error")
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
RESULTS_DIR = Path(__file__).resolve().parent / "results"

# An element passes when |x − ref| ≤ tol · (scale + |ref|), ref = float64 attention of the same (already
# rounded) inputs, scale = the larger of its row's rms (over d) and the whole tensor's rms. Low-precision
# errors grow with the size of a row (early rows of causal attention average few values and are large)
# and are never smaller than the tensor's typical size (rows that nearly cancel, like dQ of the first
# query under a causal mask). (tol for O, tol for dQ/dK/dV) per input dtype, chosen from measurements:
# on an H100 in bfloat16 the SDPA and course kernels use at most ~70% of it, a bug (wrong scale, mask,
# tail or gradient) makes errors of order 1 (≥ 5× it). float32 allows for TF32 products on a GPU.
TOLERANCES = {torch.float32: (2e-3, 5e-3), torch.float16: (2e-2, 4e-2), torch.bfloat16: (1e-1, 2e-1)}

REFERENCE_BYTES = 4 * 2**30  # the float64 reference works on a few heads at a time: N×N temporaries ≤ this


@dataclass(frozen=True)
class Grid:
    """What to measure. At each N: B = tokens // N sequences of H = hidden // d heads."""

    label: str
    dtype: torch.dtype
    head_dims: tuple[int, ...]
    ns: tuple[int, ...]
    tokens: int
    hidden: int
    summary_min_n: int  # speed ratios are summarised (median) over N >= this
    memory_ns: tuple[int, ...]
    memory_head_dim: int = 64
    causal: tuple[bool, ...] = (False, True)
    modes: tuple[str, ...] = MODES

    def batch_heads(self, n: int, d: int) -> tuple[int, int]:
        return max(1, self.tokens // n), max(1, self.hidden // d)

    def as_json(self) -> dict:
        return {**dataclasses.asdict(self), "dtype": dtype_name(self.dtype)}


GPU_GRID = Grid(
    label="GPU: bfloat16, B·N = 16k tokens, H·d = 2048 (FlashAttention paper)",
    dtype=torch.bfloat16,
    head_dims=(64, 128),
    ns=(1024, 2048, 4096, 8192, 16384),
    tokens=16384,
    hidden=2048,
    summary_min_n=4096,
    memory_ns=tuple(2**i for i in range(10, 18)),  # 1k … 128k
)

CPU_GRID = Grid(
    label="CPU smoke test: float32, tiny sizes, Triton interpreter. Numbers are NOT meaningful",
    dtype=torch.float32,
    head_dims=(16, 32),
    ns=(40, 72),  # not multiples of the interpreter's tiles: tails are exercised
    tokens=96,
    hidden=32,
    summary_min_n=0,
    memory_ns=(32, 64, 128),
)


def default_grid() -> Grid:
    return GPU_GRID if utils.mode().is_gpu else CPU_GRID


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def customise(
    grid: Grid,
    ns: Iterable[int] | None = None,
    head_dims: Iterable[int] | None = None,
    modes: Iterable[str] | None = None,
    dtype: str | None = None,
    memory_ns: Iterable[int] | None = None,
) -> Grid:
    """`grid` with some axes replaced (command-line options), each checked with a clear message."""
    changes = {}
    for field, values in (("ns", ns), ("memory_ns", memory_ns)):
        if values is not None:
            values = tuple(values)
            if not values or min(values) < 1:
                raise ValueError(
                    utils.bilingual(
                        f"N 必须是正整数，得到 {values}", f"N must be positive integers, got {values}"
                    )
                )
            changes[field] = values
    if head_dims is not None:
        head_dims = tuple(head_dims)
        bad = [d for d in head_dims if d not in SUPPORTED_HEAD_DIMS]
        if not head_dims or bad:
            raise ValueError(
                utils.bilingual(
                    f"不支持的头维度 {bad}，可选 {SUPPORTED_HEAD_DIMS}",
                    f"unsupported head dims {bad}, choose from {SUPPORTED_HEAD_DIMS}",
                )
            )
        changes["head_dims"] = head_dims
    if modes is not None:
        modes = tuple(modes)
        if not modes or set(modes) - set(MODES):
            raise ValueError(
                utils.bilingual(
                    f"模式 {modes} 无效，可选 {MODES}", f"invalid modes {modes}, choose from {MODES}"
                )
            )
        changes["modes"] = modes
    if dtype is not None:
        if dtype not in DTYPES:
            raise ValueError(
                utils.bilingual(
                    f"数据类型 {dtype!r} 无效，可选 {tuple(DTYPES)}",
                    f"invalid dtype {dtype!r}, choose from {tuple(DTYPES)}",
                )
            )
        changes["dtype"] = DTYPES[dtype]
    return dataclasses.replace(grid, **changes) if changes else grid


def error_vs_tolerance(actual: torch.Tensor, expected: torch.Tensor, tol: float) -> float:
    """Worst |actual − expected| / (tol·(scale + |expected|)) over all elements (see TOLERANCES): ≤ 1 passes.

    NaN or Inf anywhere in `actual` gives inf.
    """
    got = actual.detach().to(device=expected.device, dtype=torch.float64)
    if not torch.isfinite(got).all():
        return math.inf
    scale = expected.square().mean(dim=-1, keepdim=True).sqrt().clamp_min(expected.square().mean().sqrt())
    return ((got - expected).abs() / (tol * (scale + expected.abs()))).max().item()


def reference(q, k, v, grad_out, is_causal: bool, with_grads: bool) -> dict[str, torch.Tensor]:
    """Float64 O (and dQ, dK, dV) from `utils.grading`, a few heads at a time to bound memory."""
    flat = [t.detach().flatten(0, -3) for t in (q, k, v, grad_out)]  # (B·H, N, d)
    per_head = 6 * 8 * q.shape[-2] * k.shape[-2]  # float64 scores and the N×N temporaries autograd keeps
    step = max(1, REFERENCE_BYTES // per_head)
    parts = []
    for start in range(0, flat[0].shape[0], step):
        qs, ks, vs, dos = (t[start : start + step] for t in flat)
        out, _ = reference_attention(qs, ks, vs, is_causal)
        grads = reference_gradients(qs, ks, vs, dos, is_causal) if with_grads else ()
        parts.append((out, *grads))
    names = ("O", "dQ", "dK", "dV")[: len(parts[0])]
    shapes = (q.shape, q.shape, k.shape, v.shape)[: len(names)]
    columns = zip(*parts, strict=True)
    return {
        name: torch.cat(chunks).view(shape)
        for name, chunks, shape in zip(names, columns, shapes, strict=True)
    }


def check(impl: Implementation, mode: str, inputs, is_causal: bool, ref, dtype) -> dict[str, float]:
    """Run `impl` once; error_vs_tolerance of O (and of dQ, dK, dV for fwd_bwd), by tensor name."""
    q, k, v, grad_out = inputs
    out_tol, grad_tol = TOLERANCES[dtype]
    out = call(impl, q, k, v, is_causal)
    errors = {"O": error_vs_tolerance(out, ref["O"], out_tol)}
    if mode == "fwd_bwd":
        out.backward(grad_out)
        for name, t in zip(("dQ", "dK", "dV"), (q, k, v), strict=True):
            errors[name] = error_vs_tolerance(t.grad, ref[name], grad_tol)
    return errors


def measure_ms(fn: Callable[[], object], grads: list[torch.Tensor]) -> float:
    """Median time of `fn()`: `triton.testing.do_bench` on a GPU (warm-up, L2 flushed, ~100 ms of
    repetitions), wall-clock on the CPU (not meaningful, the smoke test only needs it to run)."""
    if utils.mode().is_gpu:
        return triton.testing.do_bench(fn, warmup=25, rep=100, grad_to_none=grads, return_mode="median")
    return time_ms(fn, warmup=0, repeats=1)


class WrongResult(Exception):
    """The implementation ran but its result does not match the reference (or is not finite)."""

    def __init__(self, reason: str, errors: dict | None = None):
        super().__init__(reason)
        self.errors = errors


def attempt(fn: Callable[[], dict]) -> dict:
    """`fn()`'s fields with status "ok", or the status and reason of the exception it raised."""
    try:
        return {"status": "ok", "reason": None, **fn()}
    except WrongResult as wrong:
        return {"status": "wrong", "reason": str(wrong), "error_vs_tolerance": wrong.errors}
    except Unavailable as why:
        return {"status": "unavailable", "reason": str(why)}
    except torch.cuda.OutOfMemoryError:
        return {"status": "oom", "reason": "out of memory"}
    except Exception as error:  # a kernel that does not compile or crashes: record it and go on
        first_line = (str(error).strip().splitlines() or [""])[0]
        return {"status": "error", "reason": f"{type(error).__name__}: {first_line}"[:300]}


def free_memory() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def checked_timing(impl, mode, inputs, is_causal: bool, ref, dtype) -> dict:
    """Check `impl` at one point; raise `WrongResult` on a mismatch, else time it."""
    q, k, v, grad_out = inputs
    errors = check(impl, mode, inputs, is_causal, ref, dtype)
    shown = {name: round(e, 4) if math.isfinite(e) else None for name, e in errors.items()}
    worst = max(errors, key=errors.get)
    if not errors[worst] <= 1:
        what = f"error {errors[worst]:.3g}× tolerance" if math.isfinite(errors[worst]) else "NaN or Inf"
        raise WrongResult(f"{worst}: {what}", shown)

    def forward():
        return call(impl, q, k, v, is_causal)

    def forward_backward():
        forward().backward(grad_out)

    timed = forward_backward if mode == "fwd_bwd" else forward
    return {"error_vs_tolerance": shown, "time_ms": measure_ms(timed, [q, k, v])}


def speed_point(impls, grid: Grid, d: int, is_causal: bool, n: int, bar) -> list[dict]:
    """Records of every implementation and mode at one grid point (inputs and reference shared)."""
    batch, heads = grid.batch_heads(n, d)
    q, k, v = random_qkv((batch, heads), n, n, d, dtype=grid.dtype, device=utils.device())
    grad_out = torch.randn_like(q)
    ref = reference(q, k, v, grad_out, is_causal, with_grads="fwd_bwd" in grid.modes)
    where = {"device": utils.mode().name, "gpu": utils.mode().is_gpu}
    records = []
    for mode in grid.modes:
        flops = attention_flops(batch * heads, n, n, d, is_causal, backward=mode == "fwd_bwd")
        for impl in impls:
            bar.set_postfix_str(f"{impl.name} {mode} d={d} causal={is_causal} N={n}")
            record = {
                "name": impl.name, "mode": mode, "dtype": dtype_name(grid.dtype), "d": d, "causal": is_causal,
                "n": n, "batch": batch, "heads": heads, "time_ms": None, "tflops": None,
                "error_vs_tolerance": None, **where,
            }  # fmt: skip
            inputs = (q, k, v, grad_out)
            record.update(attempt(partial(checked_timing, impl, mode, inputs, is_causal, ref, grid.dtype)))
            for t in (q, k, v):
                t.grad = None  # gradients of the check (and of the timing on the CPU)
            if record["status"] == "ok":
                record["tflops"] = flops / (record["time_ms"] * 1e-3) / 1e12
            records.append(record)
            free_memory()
            bar.update()
    return records


def memory_point(impl: Implementation, n: int, grid: Grid) -> dict:
    """Forward+backward peak memory of one head at N = n; the gradients must be finite."""
    q, k, v = random_qkv((1, 1), n, n, grid.memory_head_dim, dtype=grid.dtype, device=utils.device())
    grad_out = torch.randn_like(q)
    peak = peak_memory_bytes(lambda: call(impl, q, k, v, False).backward(grad_out))
    if not all(torch.isfinite(t.grad).all() for t in (q, k, v)):
        raise WrongResult("NaN or Inf in the gradients")
    return {"peak_memory_bytes": peak}


def memory_sweep(impls, grid: Grid, bar) -> list[dict]:
    """Forward+backward peak memory (`utils.measure.peak_memory_bytes`) for B = H = 1, non-causal.

    Each implementation doubles N until it fails (out of memory, usually): larger N would fail too.
    """
    records = []
    where = {"device": utils.mode().name, "gpu": utils.mode().is_gpu}
    for impl in impls:
        for i, n in enumerate(grid.memory_ns):
            bar.set_postfix_str(f"memory {impl.name} N={n}")
            record = {"name": impl.name, "n": n, "d": grid.memory_head_dim, "dtype": dtype_name(grid.dtype),
                      "causal": False, "batch": 1, "heads": 1, "peak_memory_bytes": None, **where}  # fmt: skip
            record.update(attempt(partial(memory_point, impl, n, grid)))
            records.append(record)
            free_memory()
            bar.update()
            if record["status"] != "ok":
                bar.update(len(grid.memory_ns) - 1 - i)
                break
    return records


def environment() -> dict:
    """Device, versions, date and commit: what a reader needs to reproduce the numbers."""
    gpu = utils.mode().is_gpu
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=RESULTS_DIR.parent,
            timeout=10,
        ).stdout.strip()
    except OSError:
        commit = ""
    return {
        "device": utils.mode().name,
        "gpu": gpu,
        "meaningful": gpu,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if gpu else None,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": commit or None,
        "command": " ".join(sys.argv),
    }


def default_out_dir() -> Path:
    """benchmarks/results/<device>, e.g. results/h100-80gb-hbm3 or results/cpu."""
    if not utils.mode().is_gpu:
        return RESULTS_DIR / "cpu"
    name = utils.mode().name.lower().removeprefix("nvidia ")
    return RESULTS_DIR / "".join(c if c.isalnum() else "-" for c in name).strip("-")


def write_json(results: dict, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "results.json"
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def run_suite(
    grid: Grid, impl_names: Iterable[str], out_dir: Path, memory: bool = True, progress: bool = True
) -> dict:
    """Measure `grid` for the named implementations; results.json is rewritten after every grid point
    (a run cut short keeps what it measured). Returns the results (ratios and summary are added by
    `benchmarks.report`)."""
    impls = [IMPLEMENTATIONS[name] for name in impl_names]
    results = {
        "environment": environment(),
        "grid": grid.as_json(),
        "implementations": {impl.name: impl.description for impl in impls},
        "tolerances": {dtype_name(t): {"O": o, "gradients": g} for t, (o, g) in TOLERANCES.items()},
        "records": [],
        "memory": [],
    }
    points = [(d, c, n) for d in grid.head_dims for c in grid.causal for n in grid.ns]
    total = len(points) * len(grid.modes) * len(impls) + (len(impls) * len(grid.memory_ns) if memory else 0)
    with tqdm(total=total, file=sys.stdout, desc="bench", mininterval=2.0, disable=not progress) as bar:
        for d, is_causal, n in points:
            results["records"] += speed_point(impls, grid, d, is_causal, n, bar)
            write_json(results, out_dir)
            free_memory()
        if memory:
            results["memory"] = memory_sweep(impls, grid, bar)
    write_json(results, out_dir)
    return results
