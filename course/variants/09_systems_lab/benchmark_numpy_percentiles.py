# selftest-replaces: sl_benchmark
# Variant: NumPy's median and percentiles, nanoseconds from perf_counter_ns. / 变体：NumPy 的中位数和百分位数，用 perf_counter_ns 计时。
import numpy as np


def benchmark(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    samples = np.empty(reps)
    for i in range(reps):
        timing.synchronize()
        start = time.perf_counter_ns()
        fn()
        timing.synchronize()
        samples[i] = (time.perf_counter_ns() - start) / 1e9
    q1, median, q3 = np.percentile(samples, [25, 50, 75])
    return float(median), float(q3 - q1)
