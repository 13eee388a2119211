# selftest-replaces: sl_benchmark
# Variant: timeit's default timer, synchronising before the warm-up ends too, median of a sorted list. / 变体：timeit 的默认计时器，预热后也同步，排序后取中位数。
import timeit


def benchmark(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    timing.synchronize()
    durations = []
    for _ in range(reps):
        begin = timeit.default_timer()
        fn()
        timing.synchronize()
        durations.append(timeit.default_timer() - begin)
        timing.synchronize()
    durations.sort()
    mid = len(durations) // 2
    median = durations[mid] if len(durations) % 2 else (durations[mid - 1] + durations[mid]) / 2
    if reps == 1:
        return median, 0.0
    q1, _, q3 = statistics.quantiles(durations, n=4, method="inclusive")
    return median, q3 - q1
