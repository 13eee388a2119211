# selftest-notebook: systems_lab.ipynb
# selftest-replaces: sl_benchmark
# selftest-must-fail: test_benchmark
# selftest-selfcheck-fails: test_benchmark
# Mistake: reports the mean and the standard deviation instead of the median and the interquartile range. / 错误：报告平均值和标准差，而不是中位数和四分位距。
def benchmark(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(reps):
        timing.synchronize()
        start = time.perf_counter()
        fn()
        timing.synchronize()
        samples.append(time.perf_counter() - start)
    return statistics.mean(samples), statistics.stdev(samples)
