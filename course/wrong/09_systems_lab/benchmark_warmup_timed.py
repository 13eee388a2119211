# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# Mistake: times the warm-up calls too (reps counts them). / 错误：预热的调用也被计时（reps 包含它们）。
def benchmark(fn, warmup, reps):
    samples = []
    for _ in range(warmup + reps):
        timing.synchronize()
        start = time.perf_counter()
        fn()
        timing.synchronize()
        samples.append(time.perf_counter() - start)
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return statistics.median(samples), q3 - q1
