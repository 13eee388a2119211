# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# Mistake: never synchronises: on an asynchronous device it times the launches. / 错误：从不同步，在异步设备上只测到启动时间。
def benchmark(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    q1, _, q3 = statistics.quantiles(samples, n=4, method="inclusive")
    return statistics.median(samples), q3 - q1
