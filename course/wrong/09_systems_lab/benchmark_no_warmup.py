# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# Mistake: ignores warmup: the slow first calls are timed. / 错误：忽略预热，慢的前几次调用被计时。
def benchmark(fn, warmup, reps):
    samples = []
    for _ in range(reps):
        timing.synchronize()
        start = time.perf_counter()
        fn()
        timing.synchronize()
        samples.append(time.perf_counter() - start)
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return statistics.median(samples), q3 - q1
