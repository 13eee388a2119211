# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# selftest-whole: times the whole loop once instead of each call
# Mistake: times the whole loop once and reports its average with no spread. / 错误：整个循环只计时一次，报告平均值，离散程度为 0。
def benchmark(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    timing.synchronize()
    start = time.perf_counter()
    for _ in range(reps):
        fn()
    timing.synchronize()
    return (time.perf_counter() - start) / reps, 0.0
