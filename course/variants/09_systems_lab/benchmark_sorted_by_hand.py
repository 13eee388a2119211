# selftest-replaces: sl_benchmark
# Variant: quartiles by linear interpolation in the sorted samples, written out. / 变体：在排好序的样本里手工线性插值求四分位数。
def quantile(ordered, q):
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def benchmark(fn, warmup, reps):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        timing.synchronize()
        t0 = time.perf_counter()
        fn()
        timing.synchronize()
        times.append(time.perf_counter() - t0)
    ordered = sorted(times)
    return quantile(ordered, 0.5), quantile(ordered, 0.75) - quantile(ordered, 0.25)
