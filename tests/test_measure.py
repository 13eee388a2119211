"""utils.measure: timing, peak memory and sweeps (CPU paths; the CUDA paths run under `-m gpu`)."""

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

import utils
from utils.attention.naive import naive_attention
from utils.grading import random_qkv
from utils.measure import (
    SLOW_CALL_FACTOR,
    assert_not_far_too_slow,
    assert_warm_calls_not_far_too_slow,
    attention_flops,
    compare_ms,
    exclusive_file_lock,
    fit_exponent,
    peak_memory_bytes,
    sweep,
    time_ms,
)


def test_time_ms_is_median_of_the_calls():
    delays = iter([0.0] * 1 + [0.001, 0.030, 0.001, 0.001, 0.030])  # one warm-up, then five calls
    calls = []

    def fn():
        calls.append(1)
        time.sleep(next(delays))

    ms = time_ms(fn, warmup=1, repeats=5)
    assert len(calls) == 6
    assert 0.9 <= ms < 15  # median of (1, 30, 1, 1, 30) ms is ~1 ms; a mean would be ~12.6


def test_time_ms_rejects_zero_repeats():
    with pytest.raises(ValueError, match="repeats"):
        time_ms(lambda: None, repeats=0)


def test_compare_ms_times_the_functions_in_turns_round_by_round():
    calls = []

    def slow():
        calls.append("slow")
        time.sleep(0.004)

    def fast():
        calls.append("fast")

    per_round = compare_ms({"slow": slow, "fast": fast}, rounds=3, warmup=2, repeats=4)
    assert calls[:4] == ["slow", "slow", "fast", "fast"]  # warm-up of each, before any timing
    one_round = ["slow"] * 5 + ["fast"] * 5  # one untimed call then four timed ones, for each in turn
    assert calls[4:] == one_round * 3
    assert [len(times) for times in per_round.values()] == [3, 3]
    assert all(s >= 3.5 and f < s for s, f in zip(per_round["slow"], per_round["fast"], strict=True))


def test_compare_ms_rejects_zero_rounds():
    with pytest.raises(ValueError, match="rounds"):
        compare_ms({"f": lambda: None}, rounds=0)


def test_exclusive_file_lock_makes_another_process_wait(tmp_path):
    lock, released = tmp_path / "gpu.lock", tmp_path / "released"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time, pathlib\n"
            "from utils.measure import exclusive_file_lock\n"
            "with exclusive_file_lock(pathlib.Path(sys.argv[1])):\n"
            "    print('held', flush=True)\n"
            "    time.sleep(1.0)\n"
            "    pathlib.Path(sys.argv[2]).write_text(str(time.time()))\n",
            str(lock),
            str(released),
        ],
        cwd=Path(utils.__file__).parent.parent,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert any(line.strip() == "held" for line in iter(holder.stdout.readline, ""))  # after utils' banner
    with exclusive_file_lock(lock):
        acquired = time.time()
    holder.wait(timeout=60)
    assert released.exists() and acquired >= float(released.read_text())


@pytest.mark.skipif(utils.mode().is_gpu, reason="CPU meaning of peak_memory_bytes")
def test_peak_memory_on_cpu_is_the_peak_of_the_new_tensors():
    n, d = int(torch.randint(40, 90, ()).item()), 16
    q, k, v = random_qkv(2, n, n, d, requires_grad=False)
    # at the end: the fp32 scores S and weights P (2·n² floats each batch) and O (n·d); Q, K, V existed before
    assert peak_memory_bytes(lambda: naive_attention(q, k, v)) == (2 * 2 * n * n + 2 * n * d) * 4
    assert peak_memory_bytes(lambda: torch.empty(3, 5, dtype=torch.float16)) == 3 * 5 * 2
    assert peak_memory_bytes(lambda: None) == 0


@pytest.mark.gpu
def test_peak_memory_on_gpu_counts_only_new_allocations():
    existing = torch.empty(64 * 2**20, dtype=torch.uint8, device="cuda")  # 64 MiB that must not count
    extra = peak_memory_bytes(lambda: torch.empty(8 * 2**20, dtype=torch.uint8, device="cuda"))
    assert 8 * 2**20 <= extra < 9 * 2**20
    del existing


@pytest.mark.gpu
def test_time_ms_on_gpu_grows_with_work():
    small, big = (torch.randn(n, n, device="cuda") for n in (256, 4096))
    assert time_ms(lambda: big @ big) > time_ms(lambda: small @ small)


def test_attention_flops():
    assert attention_flops(2, 3, 5, 7, is_causal=False) == 4 * 2 * 3 * 5 * 7
    assert attention_flops(2, 3, 5, 7, is_causal=True) == 2 * 2 * 3 * 5 * 7
    assert attention_flops(1, 4, 4, 4, is_causal=False, backward=True) == 3.5 * 4 * 64


def test_sweep_returns_one_tidy_record_per_point(capsys):
    made = []

    def make(n):
        made.append(n)
        x = torch.randn(n, n)
        return lambda: x @ x

    records = sweep({"matmul": make, "copy": lambda n: lambda: torch.ones(n).clone()}, [8, 32], repeats=2)
    assert [(r["name"], r["n"]) for r in records] == [
        ("matmul", 8),
        ("matmul", 32),
        ("copy", 8),
        ("copy", 32),
    ]
    assert made == [8, 32]
    for r in records:
        assert r["status"] == "ok" and r["time_ms"] > 0
        assert r["device"] == utils.mode().name and r["gpu"] == utils.mode().is_gpu
    if not utils.mode().is_gpu:
        # x @ x: its n×n result; ones(n).clone(): the ones and their copy, both alive at the clone
        assert [r["peak_memory_bytes"] for r in records] == [8 * 8 * 4, 32 * 32 * 4, 2 * 8 * 4, 2 * 32 * 4]
    captured = capsys.readouterr()
    assert captured.err == "" and "sweep" in captured.out  # progress bar on stdout only


def test_sweep_records_oom_and_goes_on(capsys):
    def make(n):
        if n >= 16:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (fake)")
        return lambda: torch.zeros(n)

    records = sweep({"fake": make}, [8, 16, 32], metrics=["peak_memory_bytes"], progress=False)
    assert [r["status"] for r in records] == ["ok", "oom", "oom"]
    assert records[0]["time_ms"] is None  # not requested
    assert all(r["peak_memory_bytes"] is None for r in records[1:])
    assert capsys.readouterr().out == ""


def test_sweep_oom_inside_the_measured_call():
    def make(n):
        def run():
            raise torch.cuda.OutOfMemoryError("fake")

        return run if n > 8 else (lambda: None)

    records = sweep({"f": make}, [8, 9], progress=False)
    assert [r["status"] for r in records] == ["ok", "oom"]


def test_sweep_rejects_unknown_metric():
    with pytest.raises(ValueError, match="unknown metrics"):
        sweep({"f": lambda n: lambda: None}, [1], metrics=["flops"])


def test_sweep_does_not_swallow_other_errors():
    def make(n):
        raise RuntimeError("a real bug")

    with pytest.raises(RuntimeError, match="a real bug"):
        sweep({"f": make}, [1], progress=False)


def test_a_warm_call_fails_only_when_far_too_slow_for_the_threshold():
    limit = 2.0 / 0.5 * SLOW_CALL_FACTOR  # peer 2 ms, threshold 0.5 of its throughput
    assert_not_far_too_slow((limit, 1.0), (2.0, 9.0), 0.5)
    with pytest.raises(AssertionError, match="far too slow") as failure:
        assert_not_far_too_slow((1.0, limit * 1.01), (9.0, 2.0), 0.5)
    assert "远远达不到" in str(failure.value)


def test_warm_calls_are_timed_here_against_the_peers():
    def sleeping(seconds):
        return lambda: time.sleep(seconds)

    assert_warm_calls_not_far_too_slow([sleeping(0.002)], [sleeping(0.002)], 0.5)
    with pytest.raises(AssertionError, match="far too slow"):  # limit: ~1 ms / 0.5 * SLOW_CALL_FACTOR
        assert_warm_calls_not_far_too_slow([sleeping(0.3)], [sleeping(0.001)], 0.5)


def test_fit_exponent_is_the_slope_of_the_log_log_line():
    xs = [16, 32, 64, 128]
    assert math.isclose(fit_exponent(xs, [5 * x**-0.5 for x in xs]), -0.5)
    assert math.isclose(fit_exponent(xs, [3 * x**2 for x in xs]), 2.0)
