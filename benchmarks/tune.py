"""`python -m course tune`: time every config of `triton_configs.SEARCH_SPACE` and keep the fastest.

For each kernel (forward, dkdv, dq), head dim, element size (16-bit: bfloat16 stands for float16 too;
32-bit), causal or not, and N bucket, every config that fits the GPU's shared memory is compiled and
timed on the paper grid's shapes (B·N = 16k tokens, H·d = 2048). The backward kernels are timed through
the whole backward pass with the other kernel's config held fixed: the difference between two configs
is the difference of the kernel being tuned. Output:

- `course/reference/tuned/<gpu>.json`: the fastest config per key, which `triton_configs` then uses;
- `<out>/tuning.json`: every candidate's time, for the written account in benchmarks/README.md
  (`tuning_failures.json`: configs that did not compile or run).
Re-running for some head dims or element sizes replaces only those keys in both files.

Compilation is the slow part, so it happens first, in parallel worker processes that launch every
config once on a small input (Triton's cache keeps the binaries); the timing then runs alone on the GPU.
"""

from __future__ import annotations

import itertools
import json
import multiprocessing
import os
import statistics
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

import torch
import triton
from tqdm import tqdm

import utils
from course.reference import flash_triton
from course.reference import triton_configs as configs
from utils.measure import attention_flops
from utils.messages import bilingual

KERNELS = ("forward", "dkdv", "dq")
DTYPES = {16: torch.bfloat16, 32: torch.float32}
BITS = (16, 32)
HEAD_DIMS = (16, 32, 64, 128)
TOKENS, HIDDEN = 16384, 2048
FIXED_BACKWARD = {  # held fixed while the other backward kernel is tuned
    "dkdv": configs.KernelConfig(32, 64, 4, 2),
    "dq": configs.KernelConfig(64, 32, 4, 2),
}


def tasks(bits_list=BITS, head_dims=HEAD_DIMS) -> list[tuple]:
    """Every (kernel, bits, d, causal, N bucket, config) that fits the GPU's shared memory."""
    device = torch.cuda.current_device()
    found = []
    for bits in bits_list:
        for kernel in KERNELS:
            for d in head_dims:
                space = configs.SEARCH_SPACE[bits][kernel]
                for config in configs.fitting(kernel, space, d, bits // 8, device):
                    for causal in (False, True):
                        for n in configs.N_BUCKETS:
                            found.append((kernel, bits, d, causal, n, config))
    return found


@lru_cache(maxsize=1)  # tasks are timed grouped by shape: each shape's inputs are made once
def inputs(bits: int, d: int, n: int, *, small: bool = False):
    """(q, k, v, dO) of the paper grid's shape at N = n (or a small stand-in for compiling)."""
    batch, heads = (1, 1) if small else (max(1, TOKENS // n), HIDDEN // d)
    shape = (batch, heads, 256 if small else n, d)
    return tuple(torch.randn(shape, dtype=DTYPES[bits], device=utils.device()) for _ in range(4))


def runner(kernel: str, causal: bool, q, k, v, grad_out):
    """A function that runs the pass containing `kernel` once."""
    scale = q.shape[-1] ** -0.5
    if kernel == "forward":
        return lambda: flash_triton.triton_forward(q, k, v, causal, scale)
    o, lse = flash_triton.triton_forward(q, k, v, causal, scale)
    return lambda: flash_triton.triton_backward(q, k, v, o, lse, grad_out, causal, scale)


def compile_key(task) -> tuple:
    """(kernel, bits, d, causal, config): what one compilation covers (every N bucket shares it)."""
    return (*task[:4], task[5])


def forced(kernel: str, config: configs.KernelConfig):
    others = {} if kernel == "forward" else {k: c for k, c in FIXED_BACKWARD.items() if k != kernel}
    return flash_triton.forced_configs(**{kernel: config}, **others)


def compile_one(task) -> str | None:
    """Compile (by launching once, small) a (kernel, bits, d, causal, config); an error if it cannot run."""
    kernel, bits, d, causal, config = task
    try:
        with forced(kernel, config):
            runner(kernel, causal, *inputs(bits, d, 0, small=True))()
        torch.cuda.synchronize()
    except Exception as error:  # out of resources, compiler error: the config is skipped
        return f"{type(error).__name__}: {str(error)[:200]}"
    return None


def time_one(task) -> float:
    """Median milliseconds of the pass containing the task's kernel, run with the task's config.

    CUDA events around each call, no cache flush: only the ranking of configs of one key matters, and
    every call of the same shape meets the same cache. Slow passes get fewer repetitions (≥ 3).
    """
    kernel, bits, d, causal, n, config = task
    run = runner(kernel, causal, *inputs(bits, d, n))
    with forced(kernel, config):
        run()  # compiled already: this only loads the binary
        times = []
        while len(times) < 3 or (len(times) < 20 and sum(times) < 50.0):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    return statistics.median(times)


def tflops(task, ms: float) -> float:
    kernel, _, d, causal, n, _ = task
    flops = attention_flops(max(1, TOKENS // n) * (HIDDEN // d), n, n, d, causal)
    if kernel != "forward":
        flops *= 2.5  # the backward pass's share of the standard count
    return flops / ms / 1e9


def compile_all(todo: list[tuple], jobs: int) -> list[str | None]:
    """`compile_one` for every task, in `jobs` worker processes (in this process if jobs == 1)."""
    bar = {"total": len(todo), "desc": bilingual("编译", "compile")}
    if jobs == 1:
        return [compile_one(task) for task in tqdm(todo, **bar)]
    spawn = multiprocessing.get_context("spawn")  # a forked child cannot use the parent's CUDA
    with ProcessPoolExecutor(jobs, mp_context=spawn) as pool:
        return list(tqdm(pool.map(compile_one, todo), **bar))


def merge_into(path: Path, section: str, new: dict | list, replaced_keys: set[str], stamp: dict) -> None:
    """Write `new` into the JSON file's `section`, keeping earlier entries of keys not tuned now.

    One entry per line, so a re-tune shows up in `git diff` as the lines that changed.
    """
    old = json.loads(path.read_text(encoding="utf-8")).get(section) if path.exists() else None
    if isinstance(new, dict):
        merged = {k: v for k, v in (old or {}).items() if k not in replaced_keys} | new
        body = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(merged.items())]
        brackets = "{}"
    else:
        merged = [r for r in (old or []) if r["key"] not in replaced_keys] + new
        body = [f"  {json.dumps(r)}" for r in merged]
        brackets = "[]"
    head = [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in stamp.items()]
    text = "\n".join(
        ["{", *head, f" {json.dumps(section)}: {brackets[0]}", ",\n".join(body), f" {brackets[1]}", "}"]
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n", encoding="utf-8")


def tune(out_dir: Path, bits_list=BITS, head_dims=HEAD_DIMS, jobs: int | None = None) -> Path:
    """Compile and time every task; merge the winners into the tuned table; return the table's path.

    Results are written after each (element size, head dim), so an interrupted run keeps what it measured.
    """
    every = sorted(tasks(bits_list, head_dims), key=lambda t: (t[1], t[2], t[4]))  # by shape
    todo = sorted({compile_key(t) for t in every}, key=str)
    errors = compile_all(todo, jobs or min(16, os.cpu_count() or 1))
    failures = {task: error for task, error in zip(todo, errors, strict=True) if error}
    table_path = configs.TUNED_DIR / f"{configs.device_slug(torch.cuda.get_device_name())}.json"
    bar = tqdm(total=len(every), desc=bilingual("计时", "time"))
    for group in itertools.groupby(every, key=lambda t: (t[1], t[2])):
        save_group(list(group[1]), failures, table_path, out_dir, bar)
    bar.close()
    configs.tuned_table.cache_clear()
    print(bilingual(f"调优表：{table_path}", f"tuned table: {table_path}"))
    print(bilingual(f"全部计时：{out_dir / 'tuning.json'}", f"all timings: {out_dir / 'tuning.json'}"))
    return table_path


def save_group(group: list[tuple], failures: dict, table_path: Path, out_dir: Path, bar) -> None:
    """Time one group's tasks and merge its winners, timings and failures into the files."""
    timings, failed = [], []
    for task in group:
        bar.update()
        error = failures.get(compile_key(task))
        if error:
            failed.append({"key": key_of(task), "config": asdict(task[5]), "error": error})
            continue
        ms = time_one(task)
        record = {"key": key_of(task), "config": asdict(task[5]), "ms": round(ms, 4)}
        timings.append(record | {"tflops": round(tflops(task, ms), 1)})
    best: dict[str, dict] = {}
    for record in timings:
        if record["key"] not in best or record["ms"] < best[record["key"]]["ms"]:
            best[record["key"]] = record
    stamp = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "triton": triton.__version__,
             "date": datetime.now(UTC).isoformat(timespec="seconds")}  # fmt: skip
    keys = {key_of(t) for t in group}
    winners = {key: {"config": r["config"], "ms": r["ms"]} for key, r in best.items()}
    merge_into(table_path, "configs", winners, keys, stamp)
    merge_into(out_dir / "tuning.json", "timings", timings, keys, stamp)
    merge_into(out_dir / "tuning_failures.json", "failed", failed, keys, stamp)


def key_of(task) -> str:
    kernel, bits, d, causal, n, _ = task
    return configs.tuning_key(kernel, d, DTYPES[bits], causal, n)
